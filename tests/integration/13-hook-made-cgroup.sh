#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Containers whose cgroup the hook makes (crun --cgroup-manager=disabled):
# the runtime made the container's cgroup namespace before prestart, so
# its root is the shared parent, and processes started with exec land
# outside the policed cgroup.
#   1. the exec gap is real, and documented where the operator looks:
#      init gets EPERM for setsockopt(SO_MARK), a `crun exec`'d process
#      does not; `status` (text and --json) says exec is not policed, and
#      `explain` says the hook would create its own cgroup and what that
#      means; under runc (own cgroup) exec is policed and status says so;
#   2. on_shared_cgroup "refuse" refuses such a container with one line
#      naming the setting, and nothing is attached or made;
#   3. a writable cgroup mount is refused where the container could use it
#      to leave its cgroup: with a cgroup the hook would have to make
#      (crun-nocg, even with a cgroup namespace), and with no cgroup
#      namespace of its own (runc); the container could otherwise move
#      itself to the parent, unpoliced.
#
# Modules: `cg.c`, `bundle.c`, `status_view.c`, `cmd_status.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc crun-nocg
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
R=(-a sockopt-hook.io/policy=restricted)
RW_CGROUP='.mounts += [{"destination": "/sys/fs/cgroup/unified", "type": "cgroup2",
	"source": "cgroup2", "options": ["rw", "nosuid", "nodev", "noexec"]}]'
CGROUPNS='.linux.namespaces += [{"type": "cgroup"}]'

# refused_with NAME REGEX: the last ct_run failed, the hook said one line
# matching REGEX (runc: in its error; crun: in the bundle's hook.err),
# and BPF programs, hook state and cgroups are as at the start. Under
# valgrind (80-sanitized-hook.sh) its own notes ("--PID-- WARNING: ...")
# are not the hook's output.
refused_with()
{
	local name=$1 re=$2 b=$CT_TMP/bundles/$1 err

	[ "$CT_RC" != 0 ] && ! grep -q . "$CT_OUT"
	tap_ok $? "$name: the container does not start (exit $CT_RC)"
	if [ -e "$b/hook.err" ]; then
		err=$(grep -v '^--[0-9]*-- ' "$b/hook.err")
		[ "$(grep -c . <<<"$err")" = 1 ]
		tap_ok $? "$name: the hook says one line" || tap_diag "$err"
	else
		err=$(cat "$CT_ERR")
	fi
	tap_like "$err" "oci-sockopt-hook: container $(ct_id "$name"): $re" "$name: the line says why"
	ct_check_same "$name: nothing attached, made or recorded" "$BASE"
}

# ---- 1. The exec gap ---------------------------------------------------------

for rt in crun-nocg runc; do
	ID=$(ct_id "gap-$rt")
	b=$(ct_bundle -r "$rt" "${R[@]}" "gap-$rt" -- /bin/sh -c 'sockcheck set-mark 5; sleep 600')
	if ! ct_start "$rt" "$ID" "$b" '^setsockopt='; then
		tap_ok 1 "$rt: the container starts"
		tap_diag "$(cat "$CT_ERR")" "$(cat "$b/hook.err" 2>/dev/null)"
		continue
	fi
	CG=$(ct_cgroup_of "$CT_PID")
	tap_is "$(sed -n 's/^setsockopt=//p' "$CT_OUT")" EPERM "$rt: init: setsockopt(SO_MARK) gives EPERM"
	ct_rt "$rt"
	out=$(timeout 30 "${CT_RT[@]}" exec "$ID" sh -c 'grep ^0:: /proc/self/cgroup; sockcheck set-mark 5' 2>&1)
	text=$("$HOOK" status "$ID" 2>&1)
	json=$("$HOOK" status --json 2>&1 | jq -c --arg id "$ID" '.[] | select(.id == $id) | .exec')
	if [ "$rt" = crun-nocg ]; then
		tap_like "$CG" "/oci-sockopt-hook-$ID\$" "$rt: the init is in a cgroup the hook made"
		tap_like "$out" "setsockopt=ok" \
			"$rt: the documented gap: a process started with crun exec is not policed (SO_MARK succeeds)" ||
			tap_diag "$out"
		tap_is "$(grep -c "oci-sockopt-hook-$ID" <<<"$out")" 0 \
			"$rt: the exec'd process is not in the hook's cgroup"
		tap_like "$text" $'\n  exec: +NOT policed: the hook made this cgroup, so processes started with runc/crun exec stay outside it' \
			"$rt: status says exec is not policed" || tap_diag "$text"
		tap_is "$(jq -r .policed <<<"$json")" false "$rt: status --json: exec.policed is false"
		tap_like "$(jq -r .note <<<"$json")" "NOT policed" "$rt: status --json: exec.note says why"
	else
		tap_like "$out" "setsockopt=EPERM" "$rt: a process started with runc exec is policed" ||
			tap_diag "$out"
		tap_like "$text" $'\n  exec: +policed \\(exec joins the container\'s cgroup\\)' \
			"$rt: status says exec is policed" || tap_diag "$text"
		tap_is "$json" '{"policed":true}' "$rt: status --json: exec.policed is true"
	fi
	ct_delete "$rt" "$ID"
	ct_check_same "$rt: after delete, all as before" "$BASE"
done

# explain, for an init in a shared cgroup (a sleep of ours in the root),
# and from the bundle alone.
ct_sleeper "$CT_CG2"
SLEEPER=$CT_SLEEPER
b=$(ct_bundle "${R[@]}" explain -- true)
state=$(jq -cn --arg b "$b" --argjson pid "$SLEEPER" \
	'{ociVersion: "1.0.2", id: "ex1", status: "creating", pid: $pid, bundle: $b}')
json=$("$HOOK" --config "$CT_EXAMPLE_CONFIG" explain --json <<<"$state" 2>&1)
tap_is "$(jq -c '.cgroup | [.path, .hook_creates, .exec_policed]' <<<"$json")" '["/",true,false]' \
	"explain --json, init in the root cgroup: the hook would create a cgroup, exec not policed" ||
	tap_diag "$json"
text=$("$HOOK" --config "$CT_EXAMPLE_CONFIG" explain <<<"$state" 2>&1)
tap_like "$text" $'\ncgroup: / is not the container\'s own: the hook would create /oci-sockopt-hook-ex1 and move the init there; processes started with exec stay outside it, NOT policed' \
	"explain (text): says so" || tap_diag "$text"
text=$("$HOOK" --config "$CT_EXAMPLE_CONFIG" explain --bundle "$b" 2>&1)
tap_like "$text" $'\ncgroup: decided at prestart: .*the hook creates <cgroup>/oci-sockopt-hook-<id> .* NOT policed' \
	"explain --bundle (no pid): says what prestart decides, either way" || tap_diag "$text"
REFUSE=$(ct_config refuse '.on_shared_cgroup = "refuse"')
json=$("$HOOK" --config "$REFUSE" explain --json <<<"$state" 2>/dev/null)
rc=$?
tap_is "$rc $(jq -c '.cgroup.hook_creates' <<<"$json")" "1 false" \
	"explain, on_shared_cgroup refuse: exit 1, no cgroup made"
tap_like "$(jq -r .refused <<<"$json")" "refusing because on_shared_cgroup is 'refuse' in $REFUSE" \
	"explain, on_shared_cgroup refuse: the refusal names the setting"
tap_is "$(ct_snapshot)" "$BASE" "explain made nothing"
ct_kill "$SLEEPER"

# ---- 2. on_shared_cgroup "refuse" -----------------------------------------------

b=$(ct_bundle -r crun-nocg -c "$REFUSE" "${R[@]}" refuse -- sockcheck set-mark 5)
ct_run crun-nocg "$(ct_id refuse)" "$b"
refused_with refuse "cgroup / is not the container's own .*processes started with exec would not be policed: refusing because on_shared_cgroup is 'refuse' in $REFUSE\$"
b=$(ct_bundle -r runc -c "$REFUSE" "${R[@]}" refuse-runc -- sockcheck set-mark 5)
ct_run runc "$(ct_id refuse-runc)" "$b"
tap_is "$CT_RC $(cat "$CT_OUT")" "0 setsockopt=EPERM" \
	"runc, on_shared_cgroup refuse: runc gives the container its own cgroup, so it runs, policed"

# ---- 3. A writable cgroup mount --------------------------------------------------

b=$(ct_bundle -r crun-nocg "${R[@]}" rw-nocg -- sockcheck set-mark 5)
ct_jq "$b" "$RW_CGROUP | $CGROUPNS"
ct_run crun-nocg "$(ct_id rw-nocg)" "$b"
refused_with rw-nocg "cgroup / is not the container's own and the bundle gives the container a writable cgroup mount \(mounts\[[0-9]+\], a cgroup2 mount at /sys/fs/cgroup/unified without \"ro\"\): it could move itself out of a cgroup made by the hook back into /, unpoliced; refusing"

b=$(ct_bundle -r runc "${R[@]}" rw-runc -- sockcheck set-mark 5)
ct_jq "$b" "$RW_CGROUP"
ct_run runc "$(ct_id rw-runc)" "$b"
# runc quotes the hook's line in its error: \" for ".
refused_with rw-runc "the bundle gives the container a writable cgroup mount \(mounts\[[0-9]+\], a cgroup2 mount at /sys/fs/cgroup/unified without .?\"ro.?\"\) and no cgroup namespace of its own: it could move itself out of its cgroup /$(ct_id rw-runc), unpoliced; refusing"

b=$(ct_bundle -r runc "${R[@]}" rw-runc-ns -- sockcheck set-mark 5)
ct_jq "$b" "$RW_CGROUP | $CGROUPNS"
ct_run runc "$(ct_id rw-runc-ns)" "$b"
tap_is "$CT_RC $(cat "$CT_OUT")" "0 setsockopt=EPERM" \
	"runc, writable cgroup mount in a cgroup namespace of its own: runs, policed (72-escapes shows it stays so)"

ct_check_same "at the end, BPF programs, hook state and cgroups are as before" "$BASE"
tap_done
