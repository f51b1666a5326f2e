# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034
#
# Container fixtures for the integration tests: a busybox rootfs, OCI
# bundles whose config.json calls the hook, runs under runc and crun, and
# cleanup of exactly what a test created. Source tap.sh first, then call
# ct_require and ct_init (ct_setup does both).
#
# Runtimes are named:
#   runc       runc run ...
#   crun       crun run ...                          (needs ct_hugetlb_setup)
#   crun-nocg  crun --cgroup-manager=disabled run ...
#
# Where the container's cgroup v2 lands on these hybrid hosts (Debian 12,
# cgroup2 at /sys/fs/cgroup/unified, no systemd, the caller in "0::/"),
# found from the "0::" line of /proc/<init pid>/cgroup, with no
# linux.cgroupsPath in config.json:
#   runc 1.1.5        "0::/<id>": <cg2>/<id>, created before prestart,
#                     removed by runc itself at delete. (v1 controllers go
#                     to /<id>, except memory: below the caller's memory
#                     cgroup.)
#   crun 1.8.1        "0::/<id>" as well, once hugetlb is mounted on v1;
#                     without that crun refuses to run ("cgroups in hybrid
#                     mode not supported, drop all controllers from
#                     cgroupv2").
#   crun-nocg         the caller's cgroup, here "0::/", the root: the hook
#                     has to create a cgroup of its own.

# shellcheck source=host.sh
. "$(dirname "${BASH_SOURCE[0]}")/host.sh"

CT_TOP=$TESTS_TOP
CT_BUILD=$TESTS_BUILD
HOOK=${HOOK:-$CT_BUILD/oci-sockopt-hook}
SOCKCHECK=${SOCKCHECK:-$CT_BUILD/tests/sockcheck}
CT_EXAMPLE_CONFIG=$CT_TOP/examples/config.json
CT_TIMEOUT=${CT_TIMEOUT:-60}
# Tests never write here (the hook gets OCI_SOCKOPT_HOOK_STATE_DIR); what
# earlier runs or the machine's own containers left in it is none of ours.
CT_DEFAULT_STATE_DIR=/run/oci-sockopt-hook
# Container ids carry this prefix, so cleanup only touches our own.
CT_PREFIX=sht$$
CT_HOOK_PATH_ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

CT_TMP=
CT_STATE_DIR=
CT_ROOTFS=
CT_CG2=
CT_IDS=()
CT_PIDS=()
CT_CG_BEFORE=
CT_MOUNTED_HUGETLB=0
# Where the hook looks for preloaded programs: nowhere, unless a test
# mounts a BPF filesystem of its own (ct_mount_bpffs). Pins that the
# machine's own install made are none of ours.
CT_PIN_DIR=
CT_BPFFS=
CT_MADE_HUGETLB_DIR=0

# ct_require_host: skips the whole test file unless it can run the hook
# on this host: root, BPF, the hook built, a cgroup2 mount (sets CT_CG2).
ct_require_host()
{
	tap_require_root
	tap_require_cmd jq timeout
	tap_require_bpf
	[ -x "$HOOK" ] || tap_skip_all "hook not built: $HOOK (run make)"
	CT_CG2=$(host_cgroup2_mount)
	[ -n "$CT_CG2" ] || tap_skip_all "no cgroup2 mount"
}

# ct_require [runtime...]: skips the whole test file unless it can run
# containers, under these runtimes.
ct_require()
{
	local rt

	ct_require_host
	tap_require_cmd nsenter ss
	[ -x /bin/busybox ] || tap_skip_all "/bin/busybox missing (busybox-static)"
	[ -x "$SOCKCHECK" ] ||
		tap_skip_all "$SOCKCHECK not built (run make test-progs)"
	for rt in "$@"; do
		case $rt in
		runc) tap_require_cmd runc ;;
		crun | crun-nocg) tap_require_cmd crun ;;
		*) tap_skip_all "unknown runtime $rt" ;;
		esac
	done
}

# ct_init_host: waits for other test runs (their snapshots of BPF programs
# and cgroups would see each other's containers: host_lock), then makes the
# temp dir and the hook state dir, and sets cleanup on exit.
ct_init_host()
{
	host_lock || tap_bail "cannot take $HOST_LOCK (another test run holds it?)"
	CT_TMP=$(mktemp -d /tmp/sockopt-hook-test.XXXXXX) || exit 1
	trap ct_cleanup EXIT
	trap 'exit 130' INT TERM
	CT_STATE_DIR=$CT_TMP/state
	CT_PIN_DIR=$CT_TMP/no-pins
	export OCI_SOCKOPT_HOOK_PIN_DIR=$CT_PIN_DIR
	# A preload with keep_keys keeps the static keys on from a cgroup of
	# the test's own (its name has our prefix: ct_cleanup removes it).
	export OCI_SOCKOPT_HOOK_KEYS_CGROUP=$CT_PREFIX-keys
	mkdir -p "$CT_STATE_DIR" "$CT_TMP/bundles" "$CT_TMP/configs"
	CT_CG_BEFORE=$(ct_cgroup_dirs)
}

# ct_init: ct_init_host, and the containers' rootfs.
ct_init()
{
	ct_init_host
	CT_ROOTFS=$CT_TMP/rootfs
	ct_rootfs "$CT_ROOTFS" || tap_bail "cannot build rootfs in $CT_ROOTFS"
}

# ct_setup RUNTIME...: ct_require and ct_init, then whatever the runtimes
# need from the host.
ct_setup()
{
	ct_require "$@"
	ct_init
	case " $* " in
	*" crun"*)
		ct_hugetlb_setup || tap_bail "cannot mount the v1 hugetlb hierarchy"
		;;
	esac
}

# ct_rootfs DIR: busybox with its applet links, plus sockcheck, pause and
# every attack program (tests/attacks/), each as /bin/<name>.
ct_rootfs()
{
	local dir=$1 applet prog

	mkdir -p "$dir"/{bin,proc,sys,dev,tmp,etc,run} || return 1
	cp /bin/busybox "$dir/bin/busybox" || return 1
	for applet in sh cat ls sleep echo ip grep true false ps id; do
		ln -sf busybox "$dir/bin/$applet" || return 1
	done
	cp "$SOCKCHECK" "$dir/bin/sockcheck" || return 1
	# The pod sandbox's process (46-sandbox-policy.sh).
	if [ -x "$CT_BUILD/tests/pause" ]; then
		cp "$CT_BUILD/tests/pause" "$dir/bin/pause" || return 1
	fi
	for prog in "$CT_BUILD"/tests/attacks/*; do
		[ -x "$prog" ] || continue
		cp "$prog" "$dir/bin/" || return 1
	done
}

# ct_hugetlb_setup: crun 1.8 refuses a hybrid host while a controller is
# still available on v2. Mount the v1 hugetlb hierarchy unless it already
# is; ct_cleanup unmounts it only if we mounted it.
ct_hugetlb_setup()
{
	local mnt=/sys/fs/cgroup/hugetlb

	mountpoint -q "$mnt" && return 0
	grep -qw hugetlb "$CT_CG2/cgroup.controllers" 2>/dev/null || return 0
	if [ ! -d "$mnt" ]; then
		mkdir "$mnt" || return 1
		CT_MADE_HUGETLB_DIR=1
	fi
	mount -t cgroup -o hugetlb none "$mnt" || return 1
	CT_MOUNTED_HUGETLB=1
}

# ct_config NAME [JQ-FILTER [JQ-OPTIONS...]]: an operator config made from
# examples/config.json; prints its path.
ct_config()
{
	local out=$CT_TMP/configs/$1.json filter=${2:-.}

	shift $(($# < 2 ? $# : 2))
	jq "$@" "$filter" "$CT_EXAMPLE_CONFIG" >"$out" || return 1
	echo "$out"
}

# ct_bundle [-r RUNTIME] [-c CONFIG] [-s STAGE] [-P] [-a KEY=VALUE]... NAME -- ARGS...
#   Writes a bundle for container NAME running ARGS and prints its path.
#   -c  operator config passed with --config (default: examples/config.json;
#       "-" passes none)
#   -s  attach stage, prestart (default) or createRuntime
#   -P  no poststop hook
#   -a  an annotation; repeatable
#   -r  runtime the bundle is for; for crun the hook's stderr goes to
#       <bundle>/hook.err (crun discards it otherwise)
ct_bundle()
{
	local cfg=$CT_EXAMPLE_CONFIG stage=prestart poststop=1 rt=runc
	local ann='{}' name dir args hookargs stopargs

	while [ $# -gt 0 ]; do
		case $1 in
		-c) cfg=$2; shift 2 ;;
		-s) stage=$2; shift 2 ;;
		-P) poststop=0; shift ;;
		-a) ann=$(jq -c --arg k "${2%%=*}" --arg v "${2#*=}" \
			'. + {($k): $v}' <<<"$ann"); shift 2 ;;
		-r) rt=$2; shift 2 ;;
		*) break ;;
		esac
	done
	name=$1
	shift
	[ "${1:-}" = -- ] && shift
	dir=$CT_TMP/bundles/$name
	mkdir -p "$dir" || return 1
	case $rt in
	crun*) ann=$(jq -c --arg f "$dir/hook.err" \
		'. + {"run.oci.hooks.stderr": $f}' <<<"$ann") ;;
	esac
	args=$(jq -cn '$ARGS.positional' --args -- "$@")
	if [ "$cfg" = - ]; then
		hookargs=$(jq -cn '$ARGS.positional' --args -- "$HOOK" "$stage")
		stopargs=$(jq -cn '$ARGS.positional' --args -- "$HOOK" poststop)
	else
		hookargs=$(jq -cn '$ARGS.positional' --args -- \
			"$HOOK" --config "$cfg" "$stage")
		stopargs=$(jq -cn '$ARGS.positional' --args -- \
			"$HOOK" --config "$cfg" poststop)
	fi
	(cd "$dir" && runc spec) || return 1
	jq --argjson args "$args" --argjson ann "$ann" --arg rootfs "$CT_ROOTFS" \
		--arg hook "$HOOK" --arg stage "$stage" \
		--argjson hookargs "$hookargs" --argjson stopargs "$stopargs" \
		--argjson poststop "$poststop" \
		--arg statedir "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" \
		--arg pindir "OCI_SOCKOPT_HOOK_PIN_DIR=$CT_PIN_DIR" \
		--arg path "$CT_HOOK_PATH_ENV" '
		.process.terminal = false |
		.process.args = $args |
		.process.capabilities |= map_values(. + ["CAP_NET_ADMIN", "CAP_NET_RAW"]) |
		.root = {"path": $rootfs, "readonly": true} |
		.hostname = "sockcheck" |
		.annotations = $ann |
		.hooks = {($stage): [{"path": $hook, "args": $hookargs,
				      "env": [$path, $statedir, $pindir],
				      "timeout": 30}]} |
		if $poststop == 1 then
			.hooks.poststop = [{"path": $hook, "args": $stopargs,
					    "env": [$path, $statedir, $pindir],
					    "timeout": 30}]
		else . end' "$dir/config.json" >"$dir/config.json.new" &&
		mv "$dir/config.json.new" "$dir/config.json" || return 1
	echo "$dir"
}

# ct_jq BUNDLE FILTER [JQ-ARGS...]: edits BUNDLE/config.json in place
# with jq's FILTER (JQ-ARGS such as --arg NAME VALUE go to jq).
ct_jq()
{
	local b=$1 filter=$2

	shift 2
	jq "$@" "$filter" "$b/config.json" >"$b/config.json.new" &&
		mv "$b/config.json.new" "$b/config.json"
}

# ct_mount_bpffs: a BPF filesystem of the test's own (unmounted by
# ct_cleanup), with CT_PIN_DIR (and the environment's
# OCI_SOCKOPT_HOOK_PIN_DIR) in it, for bundles made from now on.
ct_mount_bpffs()
{
	mkdir -p "$CT_TMP/bpffs" &&
		mount -t bpf bpf "$CT_TMP/bpffs" || return 1
	CT_BPFFS=$CT_TMP/bpffs
	CT_PIN_DIR=$CT_BPFFS/pins
	export OCI_SOCKOPT_HOOK_PIN_DIR=$CT_PIN_DIR
}

# ct_dynamic_hook: a hook that can host an LD_PRELOAD shim: HOOK itself
# when it is not an ELF file (the valgrind wrapper) or is dynamically
# linked (the ASan build, STATIC=0), else the same objects with glibc
# shared (make hook-dyn): a static binary ignores LD_PRELOAD.
ct_dynamic_hook()
{
	if ! readelf -h "$HOOK" >/dev/null 2>&1 ||
		readelf -d "$HOOK" | grep -q '(NEEDED)'; then
		echo "$HOOK"
	else
		echo "$CT_BUILD/dyn/oci-sockopt-hook"
	fi
}

# ct_rt RUNTIME: sets CT_RT to the runtime's command line.
ct_rt()
{
	case $1 in
	runc) CT_RT=(runc) ;;
	crun) CT_RT=(crun) ;;
	crun-nocg) CT_RT=(crun --cgroup-manager=disabled) ;;
	runc@*) CT_RT=(runc --root "${1#runc@}") ;;
	*) echo "ct_rt: unknown runtime $1" >&2; return 1 ;;
	esac
}

ct_id()
{
	echo "$CT_PREFIX-$1"
}

# ct_record ID [STATE-DIR]: container ID's state record, the JSON the hook
# wrote: the attribute trusted.oci-sockopt-hook.record of its empty file,
# or the file's content (a file system without attributes, or a record
# written by hand).
ct_record()
{
	/usr/bin/python3 - "${2:-$CT_STATE_DIR}/$1.json" <<'PY'
import os, sys
p = sys.argv[1]
with open(p, "rb") as f:
    data = f.read()
if not data:
    data = os.getxattr(p, "trusted.oci-sockopt-hook.record", follow_symlinks=False)
sys.stdout.write(data.decode())
PY
}

# ct_write_record FILE: the record JSON on stdin written as the hook
# writes one, the trusted attribute of an empty FILE (needs CAP_SYS_ADMIN).
ct_write_record()
{
	/usr/bin/python3 -c '
import os, sys
path, text = sys.argv[1], sys.stdin.read().encode()
tmp = os.path.join(os.path.dirname(path), ".tmp.record")
open(tmp, "w").close()
os.setxattr(tmp, "trusted.oci-sockopt-hook.record", text, follow_symlinks=False)
os.rename(tmp, path)
' "$1"
}

# ct_run RUNTIME ID BUNDLE: runs the container in the foreground. Sets
# CT_RC, CT_OUT (stdout file) and CT_ERR (stderr file).
ct_run()
{
	local rt=$1 id=$2 bundle=$3

	ct_rt "$rt" || return 1
	CT_IDS+=("$rt $id")
	CT_OUT=$CT_TMP/$id.out
	CT_ERR=$CT_TMP/$id.err
	timeout -k 5 "$CT_TIMEOUT" "${CT_RT[@]}" run --bundle "$bundle" "$id" \
		</dev/null >"$CT_OUT" 2>"$CT_ERR"
	CT_RC=$?
}

# ct_start RUNTIME ID BUNDLE [WAIT-REGEX]: starts the container detached,
# then waits until its stdout matches WAIT-REGEX (if given). Sets CT_RC,
# CT_OUT, CT_ERR and CT_PID (the host pid of its init, empty on failure).
ct_start()
{
	local rt=$1 id=$2 bundle=$3 want=${4:-}

	ct_rt "$rt" || return 1
	CT_IDS+=("$rt $id")
	CT_OUT=$CT_TMP/$id.out
	CT_ERR=$CT_TMP/$id.err
	CT_PID=
	timeout -k 5 "$CT_TIMEOUT" "${CT_RT[@]}" run -d --bundle "$bundle" "$id" \
		</dev/null >"$CT_OUT" 2>"$CT_ERR"
	CT_RC=$?
	[ "$CT_RC" = 0 ] || return 1
	CT_PID=$("${CT_RT[@]}" state "$id" 2>/dev/null | jq -r '.pid // empty')
	[ -n "$want" ] || return 0
	ct_wait_for "$CT_OUT" "$want"
}

# ct_wait_for FILE REGEX [TENTHS]: waits up to TENTHS tenths of a second
# (default 100) for a line of FILE to match the extended REGEX.
ct_wait_for()
{
	local i

	for ((i = 0; i < ${3:-100}; i++)); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# ct_hold NAME CMD...: runs CMD in the background (in CT_PIDS), its output
# in $CT_TMP/NAME.out and its stdin a fifo that we hold open: it sees end
# of file at ct_release. Sets CT_HOLD_PID.
ct_hold()
{
	local fifo=$CT_TMP/$1.in out=$CT_TMP/$1.out

	shift
	rm -f "$fifo" && mkfifo "$fifo" || return 1
	"$@" <"$fifo" >"$out" 2>&1 &
	CT_HOLD_PID=$!
	CT_PIDS+=("$CT_HOLD_PID")
	exec {CT_HOLD_FD}>"$fifo"
}

# ct_release: closes the fifo of the last ct_hold and waits for its
# command.
ct_release()
{
	exec {CT_HOLD_FD}>&-
	wait "$CT_HOLD_PID"
}

# ct_diag_run [BUNDLE]: what the runtime, the hook (BUNDLE/hook.err, where
# crun puts it) and the container said, as comments.
ct_diag_run()
{
	tap_diag "runtime exit $CT_RC; stderr:" "$(cat "$CT_ERR")"
	[ -n "${1:-}" ] && [ -s "$1/hook.err" ] &&
		tap_diag "hook stderr:" "$(cat "$1/hook.err")"
	tap_diag "container stdout:" "$(cat "$CT_OUT")"
}

# ct_start_ok DESCRIPTION RUNTIME ID BUNDLE [WAIT-REGEX]: ct_start as one
# test, with ct_diag_run when it fails. Sets CT_CG to the container's
# cgroup v2 directory ("" when it failed).
ct_start_ok()
{
	local desc=$1

	shift
	CT_CG=
	if ct_start "$@"; then
		tap_ok 0 "$desc"
		CT_CG=$(ct_cgroup_of "$CT_PID")
		return 0
	fi
	tap_ok 1 "$desc"
	ct_diag_run "$3"
	return 1
}

# ct_up [-r RUNTIME] [--desc DESC] [--wait REGEX] [--jq FILTER]
#       [--arg NAME VALUE]... [--slurpfile NAME FILE]...
#       [-c CONFIG] [-a KEY=VALUE]... [-s STAGE] [-P] NAME -- ARGS...
#   The one way the suites start a policed container for their checks: a
#   bundle for NAME running ARGS (ct_bundle, whose options -r, -c, -a, -s
#   and -P it passes on), edited with jq's FILTER and its --arg and
#   --slurpfile variables when --jq is given, started detached under
#   RUNTIME (default runc) as one test, DESC (default "NAME: container
#   starts"), that waits for a line of the container's stdout to match
#   REGEX. Sets CT_ID, CT_BUNDLE, and ct_start_ok's CT_CG and CT_PID.
#   Returns 1, the test failed, when the bundle cannot be written or the
#   container does not start.
ct_up()
{
	local rt=runc desc='' wait='' filter='' name
	local jqargs=() bargs=()

	while [ $# -gt 0 ]; do
		case $1 in
		-r) rt=$2; bargs+=(-r "$2"); shift 2 ;;
		--desc) desc=$2; shift 2 ;;
		--wait) wait=$2; shift 2 ;;
		--jq) filter=$2; shift 2 ;;
		--arg | --slurpfile) jqargs+=("$1" "$2" "$3"); shift 3 ;;
		-c | -a | -s) bargs+=("$1" "$2"); shift 2 ;;
		-P) bargs+=(-P); shift ;;
		*) break ;;
		esac
	done
	name=$1
	shift
	[ "${1:-}" = -- ] && shift
	desc=${desc:-"$name: container starts"}
	CT_ID=$(ct_id "$name")
	CT_CG='' CT_PID=''
	if ! CT_BUNDLE=$(ct_bundle "${bargs[@]}" "$name" -- "$@") ||
		{ [ -n "$filter" ] && ! ct_jq "$CT_BUNDLE" "$filter" "${jqargs[@]}"; }; then
		tap_ok 1 "$desc"
		tap_diag "the bundle for $name could not be written"
		return 1
	fi
	ct_start_ok "$desc" "$rt" "$CT_ID" "$CT_BUNDLE" ${wait:+"$wait"}
}

# ct_delete RUNTIME ID: force-deletes the container (runs poststop).
ct_delete()
{
	local rt=$1 id=$2

	ct_rt "$rt" || return 1
	timeout -k 5 "$CT_TIMEOUT" "${CT_RT[@]}" delete -f "$id" >/dev/null 2>&1
}

# ct_cgroup_of PID: the absolute path of the process's cgroup v2 directory.
ct_cgroup_of()
{
	local rel

	# without a cgroup2 mount (ct_require_host) the path would be wrong
	[ -n "$CT_CG2" ] || return 1
	rel=$(awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup" 2>/dev/null)
	[ -n "$rel" ] || return 1
	[ "$rel" = / ] && rel=
	echo "$CT_CG2$rel"
}

# ct_our_progs CGROUP-DIR [effective]: "attach_type name" of every sh_*
# program attached to the cgroup, one per line.
ct_our_progs()
{
	timeout 20 bpftool -j cgroup show "$@" 2>/dev/null |
		jq -r '.[]? | select(.name | startswith("sh_")) |
			"\(.attach_type) \(.name)"' | sort
}

# ct_fwmark PID PORT: fwmark of the TCP listener on PORT in PID's netns,
# as ss prints it ("0x7"), or "none".
ct_fwmark()
{
	local line

	line=$(nsenter -t "$1" -n ss -tlne "sport = :$2" | sed -n 2p)
	[ -n "$line" ] || { echo "no-listener"; return 1; }
	if [[ $line =~ fwmark:(0x[0-9a-f]+) ]]; then
		echo "${BASH_REMATCH[1]}"
	else
		echo none
	fi
}

ct_cgroup_dirs()
{
	(cd "$CT_CG2" && find . -type d | sort)
}

# ct_default_state_ours [PATTERN]: the entries of the real state dir that
# name one of our containers (PATTERN, default $CT_PREFIX): none, unless a
# test wrote there. Whatever else is there (or whether the directory
# exists at all) depends on the machine, not on the test.
ct_default_state_ours()
{
	[ -d "$CT_DEFAULT_STATE_DIR" ] || return 0
	find "$CT_DEFAULT_STATE_DIR" -mindepth 1 -name "*${1:-$CT_PREFIX}*" | sort
}

# ct_cri NAMESPACE POD CONTAINER: sets CRI to the annotations containerd's
# CRI writes into a workload container's spec (for ct_bundle).
ct_cri()
{
	CRI=(-a io.kubernetes.cri.container-type=container
		-a "io.kubernetes.cri.sandbox-namespace=$1"
		-a "io.kubernetes.cri.sandbox-name=$2"
		-a "io.kubernetes.cri.container-name=$3")
}

# ct_snapshot [-d STATE-DIR] [PART...]: what a container must not leave
# behind. PARTs: progs (the ids of the loaded BPF programs, those pinned
# in the test's pin directory by pin name and tag), state (the hook's
# state dir, $CT_STATE_DIR unless -d names another), cgroups (default:
# all three). In the state dir,
# poststop's gc stamp and the index of shared copies are left out: poststop
# leaves both to gc, which runs at most once a minute (45-preload checks
# that gc removes the index); so are the node's stats (stats, its lock and
# the log of runs), which every run adds to and nothing removes
# (63-metrics checks them), and the lock files prestart and apply share
# (config.lock, apply.lock).
ct_snapshot()
{
	local part parts state=$CT_STATE_DIR

	if [ "${1:-}" = -d ]; then
		state=$2
		shift 2
	fi
	parts=("$@")
	[ $# -gt 0 ] || parts=(progs state cgroups)
	for part in "${parts[@]}"; do
		case $part in
		progs)
			# By id, but a program pinned in the test's pin directory
			# by pin name and tag: a re-preload pins an equal copy
			# under a new id.
			local pinned ids
			pinned=$(ct_pinned_progs)
			ids=$(host_prog_ids)
			echo "bpf programs: $(comm -23 <(tr ' ' '\n' <<<"$ids" | sort) \
				<(cut -d' ' -f1 <<<"$pinned" | sort) | sort -n | tr '\n' ' ')"
			echo "pinned in the test's pin directory: $(cut -d' ' -f2- <<<"$pinned" | sort | tr '\n' ' ')"
			;;
		state)
			echo "state dir $state:"
			(cd "$state" && find . ! -name last-gc ! -name "shared-*.id" \
				! -name stats ! -name "*.lock" ! -name stats.log | sort)
			echo "ours in $CT_DEFAULT_STATE_DIR:"
			ct_default_state_ours "$CT_PREFIX"
			;;
		cgroups)
			echo "cgroups under $CT_CG2:"
			ct_cgroup_dirs
			;;
		esac
	done
}

# ct_pinned_progs: "id pin-name tag" of each program pinned under the
# test's pin directory (nothing when it is not on a BPF filesystem).
ct_pinned_progs()
{
	local f

	[ -n "$CT_PIN_DIR" ] && [ -d "$CT_PIN_DIR" ] || return 0
	find "$CT_PIN_DIR" -type f 2>/dev/null | sort | while read -r f; do
		timeout 20 bpftool -j prog show pinned "$f" 2>/dev/null |
			jq -r --arg f "${f#"$CT_PIN_DIR"/}" '"\(.id) \($f) \(.tag)"'
	done
}

# ct_same_as BEFORE [-d STATE-DIR] [PART...]: waits up to 5 s for
# ct_snapshot [-d STATE-DIR] PART... to equal BEFORE (the kernel frees a
# removed cgroup's programs asynchronously). Prints the difference and
# fails otherwise.
ct_same_as()
{
	local before=$1 now

	shift
	for _ in $(seq 1 50); do
		now=$(ct_snapshot "$@")
		[ "$now" = "$before" ] && return 0
		sleep 0.1
	done
	diff <(echo "$before") <(echo "$now") | sed -n '2,$p'
	return 1
}

# ct_check_same DESCRIPTION BEFORE [-d STATE-DIR] [PART...]: one test,
# which passes when ct_same_as does; the difference as comments otherwise.
ct_check_same()
{
	local desc=$1 diff

	shift
	diff=$(ct_same_as "$@")
	tap_ok $? "$desc" || tap_diag "$diff"
}

# ct_sleeper CGROUP-DIR: a process of ours (sleep 600, in CT_PIDS) moved
# into CGROUP-DIR, made if need be, stands in for a container's init. Sets
# CT_SLEEPER to its pid; fails if the cgroup cannot be made or joined.
ct_sleeper()
{
	mkdir -p "$1" || return 1
	sleep 600 &
	CT_SLEEPER=$!
	CT_PIDS+=("$CT_SLEEPER")
	echo "$CT_SLEEPER" >"$1/cgroup.procs"
}

# ct_syslog_listener SOCKET OUT SECONDS: a process of ours (in CT_PIDS)
# bound to the datagram socket SOCKET, as syslog's /dev/log is, that
# appends each datagram it gets to OUT as a line and exits after SECONDS
# with nothing received. Sets CT_SYSLOG to its pid; fails when the socket
# does not appear within 10 s.
ct_syslog_listener()
{
	/usr/bin/python3 - "$1" "$2" "$3" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(int(sys.argv[3]))
with open(sys.argv[2], "a") as out:
    try:
        while True:
            out.write(s.recv(65536).decode("utf-8", "replace") + "\n")
            out.flush()
    except socket.timeout:
        pass
PYEOF
	CT_SYSLOG=$!
	CT_PIDS+=("$CT_SYSLOG")
	for ((i = 0; i < 100; i++)); do
		[ -S "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# ct_kill PID: kills a process of ours, waits for it, and takes it off
# CT_PIDS (its pid may be another process's later).
ct_kill()
{
	local keep=() pid

	kill -KILL "$1" 2>/dev/null && wait "$1" 2>/dev/null
	for pid in "${CT_PIDS[@]}"; do
		[ "$pid" = "$1" ] || keep+=("$pid")
	done
	CT_PIDS=("${keep[@]}")
}

# ct_remove_cgroup DIR: kills every process in the subtree, waits up to
# 5 s for it to empty, then removes it, deepest first.
ct_remove_cgroup()
{
	echo 1 >"$1/cgroup.kill" 2>/dev/null
	ct_wait_for "$1/cgroup.events" '^populated 0' 50
	find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null
}

# ct_cleanup: deletes our containers, kills the pids we started, removes
# the cgroups with our container ids in their path made since ct_init
# (with whatever still runs there), unmounts what we mounted, and removes
# the temp dir.
ct_cleanup()
{
	local entry pid dir

	for entry in "${CT_IDS[@]}"; do
		ct_delete "${entry% *}" "${entry#* }"
	done
	for pid in "${CT_PIDS[@]}"; do
		ct_kill "$pid"
	done
	if [ -n "$CT_CG2" ] && [ -n "$CT_CG_BEFORE" ]; then
		comm -13 <(echo "$CT_CG_BEFORE") <(ct_cgroup_dirs) | sort -r |
			while read -r dir; do
				case $dir in
				*"$CT_PREFIX"*)
					[ -d "$CT_CG2/$dir" ] &&
						ct_remove_cgroup "$CT_CG2/$dir"
					;;
				esac
			done
	fi
	[ -n "$CT_BPFFS" ] && umount "$CT_BPFFS"
	if [ "$CT_MOUNTED_HUGETLB" = 1 ]; then
		umount /sys/fs/cgroup/hugetlb
		[ "$CT_MADE_HUGETLB_DIR" = 1 ] && rmdir /sys/fs/cgroup/hugetlb
	fi
	[ -n "$CT_TMP" ] && rm -rf "$CT_TMP"
}
