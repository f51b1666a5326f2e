#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `make demo`: a real busybox container under runc with the hook as its
# prestart/poststop hook and the "restricted" policy from
# examples/config.json, compared with the same probe run on the host.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
HOOK=$BUILD/oci-sockopt-hook
CHECK=$BUILD/tests/sockcheck
work=$(mktemp -d /tmp/oci-sockopt-hook-demo.XXXXXX)
id=sockopt-demo-$$
export OCI_SOCKOPT_HOOK_STATE_DIR=$work/state

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

cleanup()
{
	runc delete -f "$id" >/dev/null 2>&1 || true
	runc delete -f "$id-bypass" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || { echo "make demo needs root (runc, cgroups, BPF)" >&2; exit 1; }
# The test suites compare host-wide snapshots: never run beside them.
# shellcheck source=../tests/lib/host.sh
. "$top/tests/lib/host.sh"
host_lock
cg2=$(host_cgroup2_mount)
[ -n "$cg2" ] || { echo "make demo: no cgroup2 hierarchy is mounted" >&2; exit 1; }

# bundle NAME CONFIG ANNOTATIONS-JSON ARGS...
bundle()
{
	local dir=$work/$1 cfg=$2 ann=$3 args

	shift 3
	mkdir -p "$dir"
	(cd "$dir" && runc spec)
	args=$(jq -cn '$ARGS.positional' --args -- "$@")
	jq --arg hook "$HOOK" --arg cfg "$cfg" --argjson ann "$ann" \
		--argjson args "$args" --arg rootfs "$work/rootfs" \
		--arg env "OCI_SOCKOPT_HOOK_STATE_DIR=$OCI_SOCKOPT_HOOK_STATE_DIR" '
		.process.terminal = false | .process.args = $args |
		.process.capabilities |= with_entries(
		  if .key == "bounding" or .key == "effective" or .key == "permitted"
		  then .value += ["CAP_NET_ADMIN"] else . end) |
		.root = {"path": $rootfs, "readonly": true} |
		.annotations = $ann |
		.hooks = {
		  "prestart": [{"path": $hook, "args": ["oci-sockopt-hook", "--config", $cfg, "prestart"], "env": [$env]}],
		  "poststop": [{"path": $hook, "args": ["oci-sockopt-hook", "--config", $cfg, "poststop"], "env": [$env]}]
		}' "$dir/config.json" >"$dir/config.json.new"
	mv "$dir/config.json.new" "$dir/config.json"
	echo "$dir"
}

mkdir -p "$work/rootfs/bin" "$work/rootfs/proc" "$work/rootfs/dev"
cp /bin/busybox "$work/rootfs/bin/"
for a in sh sleep; do ln -s busybox "$work/rootfs/bin/$a"; done
cp "$CHECK" "$work/rootfs/bin/sockcheck"

say "What this kernel supports (oci-sockopt-hook probe)"
"$HOOK" probe

say "The operator's policy \"restricted\" (examples/config.json)"
jq -c '.policies.restricted' "$top/examples/config.json"

say "Start a container annotated sockopt-hook.io/policy=restricted"
b=$(bundle restricted "$top/examples/config.json" \
	'{"sockopt-hook.io/policy":"restricted"}' sleep 120)
runc run -d --bundle "$b" "$id" </dev/null >/dev/null
pid=$(runc state "$id" | jq -r .pid)
cg=$(awk -F: '$1 == "0" {print $3}' "/proc/$pid/cgroup")
echo "container $id, init pid $pid, cgroup v2 $cg"
bpftool cgroup show "$cg2$cg"

# The demo fails (exit 1) when the container does not show the policy:
# each probe with the answer the restricted policy must give. The
# container has CAP_NET_ADMIN, so that SO_MARK and TCP_CONGESTION are
# refused by the policy, not for a missing capability.
unexpected=""
say "Same probe: on the host (no policy) | in the container"
for probe in "set-mark 5=setsockopt=EPERM" "rcvbuf 4194304=rcvbuf=131072" \
	"cc cubic=cc=reno" "socket inet6 stream=socket_inet6_stream=EPERM" \
	"keepalive=keepalive=1"; do
	t=${probe%%=*} want=${probe#*=}
	# shellcheck disable=SC2086
	got=$(runc exec "$id" sockcheck $t 2>&1 || true)
	# shellcheck disable=SC2086
	printf '  %-22s host: %-28s container: %s\n' "$t" "$("$CHECK" $t 2>&1 || true)" "$got"
	[ "$got" = "$want" ] || unexpected="$unexpected '$t' gave '$got', not '$want';"
done
echo "  (SO_MARK denied, SO_RCVBUF clamped to 2x65536, congestion control forced to reno, IPv6 sockets denied, others untouched)"

say "bypass-prot-mem"
if "$HOOK" probe --json | jq -e '.bypass_prot_mem' >/dev/null; then
	b=$(bundle bypass "$top/examples/config.json" \
		'{"sockopt-hook.io/policy":"bulk"}' sleep 120)
	runc run -d --bundle "$b" "$id-bypass" </dev/null >/dev/null
	"$HOOK" status --json "$id-bypass" |
		jq '.[0] | {id, policy, bypass_prot_mem, bypass_active}'
	runc delete -f "$id-bypass"
else
	echo "This kernel ($(uname -r)) lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19)."
	echo "A container asking for it, with on_unsupported \"fail\", is refused with one clear line:"
	b=$(bundle bypass "$top/examples/config.json" \
		'{"sockopt-hook.io/bypass-prot-mem":"true"}' true)
	runc run --bundle "$b" "$id-bypass" </dev/null 2>&1 | grep -o 'oci-sockopt-hook: .*' | sed 's/\\n"$//' | head -1 || true
	runc delete -f "$id-bypass" >/dev/null 2>&1 || true
	echo "(make check boots a 6.19+ kernel in QEMU and shows the bypass working.)"
fi

say "Delete the container: nothing of ours remains"
runc delete -f "$id"
echo "state records left: $(find "$OCI_SOCKOPT_HOOK_STATE_DIR" -name '*.json' 2>/dev/null | wc -l)"
if [ -d "$cg2$cg" ]; then
	unexpected="$unexpected cgroup $cg still exists;"
else
	echo "cgroup $cg is gone, and with it our programs"
fi
left=$(find "$OCI_SOCKOPT_HOOK_STATE_DIR" -name '*.json' 2>/dev/null | wc -l)
[ "$left" = 0 ] || unexpected="$unexpected $left state records left;"
if [ -n "$unexpected" ]; then
	echo "make demo: FAILED:$unexpected" >&2
	exit 1
fi
