# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers for bench/run.sh: the test lock, "containers" (a cgroup v2
# directory with one sleeping process, an OCI state and a bundle whose
# annotations name a policy), attaching through the hook, the raw trials,
# and cleanup of exactly what we made. The statistics are bench/report.py's.
#
# Everything lives under one parent cgroup, $CG2/sockopt-bench-<pid>, one
# temp dir, and two file systems mounted inside it: a tmpfs for the hook's
# state dir (as /run is on most hosts) and a bpffs for its pins (never
# /sys/fs/bpf); cleanup releases every attachment (hook poststop,
# sockbench detach-empty), removes the pins, kills the pids we started,
# removes the containers and cgroups, unmounts what we mounted and checks
# that no program of ours is left.

B_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The tests' lock, cgroup2 mount and program count.
# shellcheck source=tests/lib/host.sh
. "$B_TOP/tests/lib/host.sh"
BUILD=${BUILD:-build}
[[ $BUILD == /* ]] || BUILD=$B_TOP/$BUILD
HOOK=${HOOK:-$BUILD/oci-sockopt-hook}
SB=${SB:-$BUILD/bench/sockbench}
READSTATE=${READSTATE:-$BUILD/bench/readstate}
B_OUT=$BUILD/bench
# Debian's python3 (report.py needs its standard library only); another
# python3 may come first on PATH.
B_PYTHON=${BENCH_PYTHON:-/usr/bin/python3}
B_CONFIG=$B_TOP/examples/config.json

B_TMP=
B_CG2=
B_CG=
B_PIDS=()
declare -A B_ATTACHED # "name config" of every container the hook attached
B_EMPTY=()      # cgroups with the empty programs attached
B_RUNC_IDS=()
B_CRUN_IDS=()
B_MOUNTS=()     # what we mounted, unmounted in reverse order
B_MADE_DIRS=()  # mount points we made outside $B_TMP
B_BPFFS=        # our bpffs; the pins of a preload in $B_PINS
B_PINS=
B_PRELOADED=0
B_PRELOAD_CONFIG= # examples/config.json with keep_keys off
B_CRUN=0        # crun runs here (with the v1 hugetlb hierarchy mounted)
B_HOOK_PROGS=0  # sh_* programs loaded before we started
B_EMPTY_PROGS=0 # sb_empty_* programs loaded before we started (a copy
                # of sockbench run by hand, outside the lock)
B_BROKEN=0

b_log()
{
	printf '%s\n' "$*" >&2
}

# b_fail MSG: something is broken (not slow): reported, and the run exits 1.
b_fail()
{
	b_log "bench: FAILED: $*"
	B_BROKEN=1
}

# b_init: checks what we need, takes the tests' lock, makes the temp dir
# and the parent cgroup, and sets the cleanup trap.
b_init()
{
	local cmd

	if [ "$(id -u)" != 0 ]; then
		b_log "bench: needs root (cgroups and BPF)"
		return 77
	fi
	for cmd in jq bpftool runc flock "$B_PYTHON"; do
		command -v "$cmd" >/dev/null || {
			b_log "bench: $cmd is missing (./scripts/deps.sh check)"
			return 1
		}
	done
	[ -x /bin/busybox ] || { b_log "bench: /bin/busybox missing"; return 1; }
	command -v crun >/dev/null && B_CRUN=1
	if [ ! -x "$HOOK" ] || [ ! -x "$SB" ] || [ ! -x "$READSTATE" ]; then
		b_log "bench: build first: $HOOK $SB $READSTATE"
		return 1
	fi
	B_CG2=$(host_cgroup2_mount)
	[ -n "$B_CG2" ] || { b_log "bench: no cgroup2 mount"; return 1; }
	host_lock || { b_log "bench: cannot take $HOST_LOCK"; return 1; }
	# Other work on this machine preempts us less at the highest priority.
	renice -n -20 -p $$ >/dev/null 2>&1
	rm -rf "$B_OUT/raw" || return 1
	mkdir -p "$B_OUT/raw" || return 1
	# rows.jsonl, perf.txt and strace.txt: what older versions left.
	rm -f "$B_OUT"/table.txt "$B_OUT"/results.json "$B_OUT"/rows.jsonl \
		"$B_OUT"/perf.txt "$B_OUT"/strace.txt
	B_HOOK_PROGS=$(host_prog_count '^sh_')
	B_EMPTY_PROGS=$(host_prog_count '^sb_empty_')
	B_TMP=$(mktemp -d /tmp/sockopt-bench.XXXXXX) || return 1
	trap b_cleanup EXIT
	trap 'exit 130' INT TERM
	mkdir -p "$B_TMP/state" "$B_TMP/bundles" "$B_TMP/states" \
		"$B_TMP/configs" "$B_TMP/bpffs" || return 1
	b_mount tmpfs "$B_TMP/state" -o mode=0700,size=64m || return 1
	b_mount bpf "$B_TMP/bpffs" -o mode=0700 || return 1
	B_BPFFS=$B_TMP/bpffs
	B_PINS=$B_BPFFS/pins
	export OCI_SOCKOPT_HOOK_STATE_DIR=$B_TMP/state
	# Every hook run has a pin dir of ours: this one stays empty (no
	# preload, the hook's fallback); the preloaded variants name $B_PINS.
	export OCI_SOCKOPT_HOOK_PIN_DIR=$B_BPFFS/none
	B_CG=$B_CG2/sockopt-bench-$$
	mkdir "$B_CG" "$B_CG/park" || return 1
	# Where a preload with keep_keys keeps the static keys on: below our
	# cgroup, never the host's own (relative to the cgroup2 mount).
	export OCI_SOCKOPT_HOOK_KEYS_CGROUP=${B_CG#"$B_CG2"/}/keys
	# The preload of the preloaded variants keeps no key on: every
	# benchmark sets the keys' state itself (empty programs on a scratch
	# cgroup, or none for the cold and quiet host states).
	B_PRELOAD_CONFIG=$(b_config preload '.keep_keys = false') || return 1
}

# b_mount TYPE DIR [OPTIONS...]: mounts a TYPE file system of our own at
# DIR, private (no copy in a runtime's mount namespace keeps it alive),
# unmounted by b_cleanup.
b_mount()
{
	local type=$1 dir=$2

	shift 2
	mount -t "$type" "$@" "sockopt-bench" "$dir" ||
		{ b_log "bench: cannot mount $type at $dir"; return 1; }
	B_MOUNTS+=("$dir")
	mount --make-private "$dir"
}

# b_preload: the hook's preload into our bpffs; the preloaded variants
# run the hook with OCI_SOCKOPT_HOOK_PIN_DIR=$B_PINS.
b_preload()
{
	[ "$B_PRELOADED" = 1 ] && return 0
	b_preload_with "$B_PRELOAD_CONFIG"
}

# b_preload_with CONFIG: the hook's preload of CONFIG into $B_PINS (again:
# keep_keys on or off as CONFIG says).
b_preload_with()
{
	B_PRELOADED=1
	OCI_SOCKOPT_HOOK_PIN_DIR=$B_PINS "$HOOK" --config "$1" preload \
		>/dev/null 2>>"$B_TMP/hook.err" ||
		{ b_fail "hook preload: $(tail -n 1 "$B_TMP/hook.err")"; return 1; }
	[ -n "$(ls -A "$B_PINS" 2>/dev/null)" ] ||
		{ b_fail "hook preload pinned nothing in $B_PINS"; return 1; }
}

# b_unpin: removes every pin of the preload (the programs go once no
# cgroup has them attached), and the keys cgroup of keep_keys.
b_unpin()
{
	[ "$B_PRELOADED" = 1 ] || return 0
	B_PRELOADED=0
	OCI_SOCKOPT_HOOK_PIN_DIR=$B_PINS "$HOOK" --config "$B_CONFIG" preload \
		--unpin >/dev/null 2>>"$B_TMP/hook.err" ||
		b_fail "hook preload --unpin: $(tail -n 1 "$B_TMP/hook.err")"
}

# b_hugetlb_setup: crun 1.8 refuses a hybrid host while a controller is
# still available on v2 (tests/lib/container.sh's ct_hugetlb_setup):
# mounts the v1 hugetlb hierarchy unless it is; B_CRUN=0 if that fails.
b_hugetlb_setup()
{
	local mnt=/sys/fs/cgroup/hugetlb

	[ "$B_CRUN" = 1 ] || return 0
	mountpoint -q "$mnt" && return 0
	grep -qw hugetlb "$B_CG2/cgroup.controllers" 2>/dev/null || return 0
	if [ ! -d "$mnt" ]; then
		mkdir "$mnt" || { B_CRUN=0; return 0; }
		B_MADE_DIRS+=("$mnt")
	fi
	if mount -t cgroup -o hugetlb none "$mnt"; then
		B_MOUNTS+=("$mnt")
	else
		b_log "bench: cannot mount the v1 hugetlb hierarchy: no crun rows"
		B_CRUN=0
	fi
}

# b_meminfo LABEL: /proc/meminfo once the kernel's deferred frees (RCU)
# have run, with the per-CPU counter deltas folded (vm.stat_refresh).
b_meminfo()
{
	sleep "${BENCH_SETTLE:-2}"
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
	cp /proc/meminfo "$B_OUT/raw/meminfo.$1"
}

# b_config NAME [JQ-FILTER]: an operator config made from
# examples/config.json; prints its path.
b_config()
{
	local out=$B_TMP/configs/$1.json

	jq "${2:-.}" "$B_CONFIG" >"$out" || return 1
	echo "$out"
}

# b_bundle POLICY: a bundle dir whose config.json asks for POLICY ("" for
# none); prints its path.
b_bundle()
{
	local dir=$B_TMP/bundles/policy-${1:-none}

	if [ ! -d "$dir" ]; then
		mkdir -p "$dir" || return 1
		jq -n --arg p "$1" 'if $p == "" then {annotations: {}} else
			{annotations: {"sockopt-hook.io/policy": $p}} end' \
			>"$dir/config.json" || return 1
	fi
	echo "$dir"
}

# b_runtime_spec DIR HOOKS-JSON ANNOTATIONS-JSON: DIR/config.json (from
# runc spec) made into a container that runs /bin/true at once from the
# bench's busybox rootfs, with these hooks (null: none) and annotations.
b_runtime_spec()
{
	local dir=$1

	jq --arg root "$B_TMP/rootfs" --argjson hooks "$2" --argjson ann "$3" '
		.process.terminal = false | .process.args = ["/bin/true"] |
		.root = {path: $root, readonly: true} | .annotations = $ann |
		if $hooks == null then del(.hooks) else .hooks = $hooks end' \
		"$dir/config.json" >"$dir/config.json.new" &&
		mv "$dir/config.json.new" "$dir/config.json"
}

# b_container NAME POLICY: cgroup $B_CG/NAME (parents made as needed) with
# one sleeping process, and its OCI state in $B_TMP/states/NAME.json.
b_container()
{
	local name=$1 cg=$B_CG/$1 bundle pid

	bundle=$(b_bundle "$2") || return 1
	mkdir -p "$cg" || return 1
	sleep 1000000 &
	pid=$!
	B_PIDS+=("$pid")
	echo "$pid" >"$cg/cgroup.procs" || return 1
	echo "$pid" >"$B_TMP/states/${name//\//-}.pid"
	# printf, not jq: a thousand of them for benchmark 8 (names and
	# paths are ours, nothing in them needs quoting).
	printf '{"ociVersion":"1.0.2","id":"%s","status":"creating","pid":%d,"bundle":"%s"}\n' \
		"sb$$-${name//\//-}" "$pid" "$bundle" \
		>"$B_TMP/states/${name//\//-}.json"
}

b_state()
{
	echo "$B_TMP/states/${1//\//-}.json"
}

# The hook releases a container only once its init is gone from its
# cgroup, as after a real stop. b_park NAME / b_unpark NAME print the
# sockbench command that moves container NAME's stand-in init out to
# $B_CG/park and back, for b_exec; b_parked NAME CMD... runs CMD parked.
b_park()
{
	echo "$SB" cgmove "$B_CG/park" "$(cat "$B_TMP/states/${1//\//-}.pid")"
}

b_unpark()
{
	echo "$SB" cgmove "$B_CG/$1" "$(cat "$B_TMP/states/${1//\//-}.pid")"
}

b_parked()
{
	local name=$1 pid rc

	shift
	pid=$(cat "$B_TMP/states/${name//\//-}.pid")
	"$SB" cgmove "$B_CG/park" "$pid" && "$@"
	rc=$?
	"$SB" cgmove "$B_CG/$name" "$pid"
	return $rc
}

# b_attach NAME [CONFIG [PIN-DIR]]: hook prestart for container NAME;
# with PIN-DIR ($B_PINS), from the preloaded programs.
b_attach()
{
	local cfg=${2:-$B_CONFIG} pins=${3:-$OCI_SOCKOPT_HOOK_PIN_DIR}

	B_ATTACHED["$1 $cfg"]=1
	OCI_SOCKOPT_HOOK_PIN_DIR=$pins "$HOOK" --config "$cfg" prestart \
		<"$B_TMP/states/${1//\//-}.json" 2>>"$B_TMP/hook.err" ||
		{ b_fail "hook prestart of $1: $(tail -n 1 "$B_TMP/hook.err")"; return 1; }
}

# b_detach NAME [CONFIG]: hook poststop for container NAME.
b_detach()
{
	local cfg=${2:-$B_CONFIG}

	b_parked "$1" "$HOOK" --config "$cfg" poststop \
		<"$B_TMP/states/${1//\//-}.json" 2>>"$B_TMP/hook.err"
	unset 'B_ATTACHED["$1 $cfg"]'
	return 0
}

# b_attached_progs CGROUP: how many sh_* programs are attached there.
b_attached_progs()
{
	bpftool -j cgroup show "$1" 2>/dev/null |
		jq '[.[]? | select(.name | startswith("sh_"))] | length'
}

b_attach_empty()
{
	B_EMPTY+=("$1")
	"$SB" attach-empty "$1" || { b_fail "attach-empty $1"; return 1; }
}

b_detach_empty()
{
	local i

	"$SB" detach-empty "$1"
	for i in "${!B_EMPTY[@]}"; do
		[ "${B_EMPTY[$i]}" = "$1" ] && unset 'B_EMPTY[i]'
	done
	return 0
}

# b_kill_all: kills the sleepers we started, by pid.
b_kill_all()
{
	local pid

	for pid in "${B_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	for pid in "${B_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	B_PIDS=()
}

b_cleanup()
{
	local entry id left hook_left

	trap - EXIT
	for id in "${B_RUNC_IDS[@]}"; do
		runc delete -f "$id" >/dev/null 2>&1
	done
	for id in "${B_CRUN_IDS[@]}"; do
		crun delete -f "$id" >/dev/null 2>&1
	done
	for entry in "${!B_ATTACHED[@]}"; do
		b_detach "${entry% *}" "${entry#* }"
	done
	for entry in "${B_EMPTY[@]}"; do
		b_detach_empty "$entry"
	done
	b_unpin
	b_kill_all
	if [ -n "$B_CG" ] && [ -d "$B_CG" ]; then
		find "$B_CG" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$B_CG" ] && b_fail "cgroups left under $B_CG"
	fi
	b_unmount_all
	[ -n "$B_TMP" ] && rm -rf "$B_TMP"
	# The state dir on disk of benchmark 1's "nothing to attach" variant.
	rm -rf "$B_OUT/state-disk"
	# The kernel frees a removed cgroup's programs asynchronously. Those
	# loaded before we started are another user's (outside the lock).
	for _ in $(seq 1 50); do
		left=$(($(host_prog_count '^sb_empty_') - B_EMPTY_PROGS))
		hook_left=$(($(host_prog_count '^sh_') - B_HOOK_PROGS))
		[ "$left" -le 0 ] && [ "$hook_left" -le 0 ] && break
		sleep 0.1
	done
	[ "${left:-0}" -le 0 ] || b_fail "$left more empty programs loaded than at the start"
	[ "${hook_left:-0}" -le 0 ] ||
		b_log "bench: warning: $hook_left more sh_* programs loaded than at the start"
	[ "$B_BROKEN" = 0 ] || exit 1
}

# b_unmount_all: what b_mount and b_hugetlb_setup mounted, newest first;
# a mount that stays busy is detached (umount -l) and reported.
b_unmount_all()
{
	local i dir

	for ((i = ${#B_MOUNTS[@]} - 1; i >= 0; i--)); do
		dir=${B_MOUNTS[$i]}
		umount "$dir" 2>/dev/null || {
			b_fail "$dir busy at exit: detached (umount -l)"
			umount -l "$dir"
		}
	done
	B_MOUNTS=()
	for dir in "${B_MADE_DIRS[@]}"; do
		rmdir "$dir"
	done
	B_MADE_DIRS=()
}

# ---- results -----------------------------------------------------------

# b_add KEY VALUE: one trial's value, a line of $B_OUT/raw/KEY.
b_add()
{
	echo "$2" >>"$B_OUT/raw/$1"
}
