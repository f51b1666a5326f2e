#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Faults around the hook, each with what must hold afterwards:
#   1. the cgroup is removed between resolving it and attaching (an
#      LD_PRELOAD shim on the hook's bpf() calls removes it at the first,
#      or the second, BPF_PROG_ATTACH), and an attach failing part way;
#      the init moved out of its cgroup during the attach (the shim moves
#      it at the last BPF_PROG_ATTACH); the cgroup replaced by a new one
#      of the same name just before the hook opens it (the shim on open());
#   2. the state directory cannot be written;
#   3. bpffs is not mounted;
#   4. the program load is refused (shim: EPERM/EACCES from BPF_PROG_LOAD;
#      and bypass-prot-mem on a kernel without it, on_unsupported "fail");
#   5. a second prestart (and createRuntime) for the same container, and a
#      prestart that finds the record of an earlier process with the same
#      pid (another start time);
#   6. poststop without a prestart, and poststop twice; poststop while the
#      container still runs; poststop when the recorded cgroup has been
#      replaced by another container's under the same name;
#   7. a runtime that never deletes: runc create, init killed, then
#      `oci-sockopt-hook gc` (or the next poststop); crun without a cgroup
#      manager, where the hook's reaper must release its cgroup by itself.
# A failed prestart must print one line, exit non-zero and leave nothing
# attached and no record.
#
# Modules: `prestart.c`, `attach.c`, `cg.c`, `load.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

SHIM=$CT_BUILD/tests/faultshim.so
[ -f "$SHIM" ] || tap_skip_all "$SHIM not built (run make test-progs)"
# The shim needs a dynamically linked hook: the same code (see Makefile,
# STATIC).
HOOK=$(ct_dynamic_hook)
[ -x "$HOOK" ] || tap_skip_all "$HOOK not built (run make hook-dyn)"
tap_require_cmd unshare
ct_setup runc crun-nocg
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
CFG=(--config "$CT_EXAMPLE_CONFIG")
RESTRICTED_PROGS="cgroup_getsockopt sh_getsockopt
cgroup_inet_sock_create sh_sock_create
cgroup_setsockopt sh_setsockopt"

# fake NAME [root]: a sleep of ours stands in for a container's init, in
# a cgroup of our own (or, with "root", left in the cgroup2 root, where
# the hook must make a cgroup itself, as for crun without a manager).
# Sets FPID, FCG (the cgroup it is in), FID and FSTATE (runc-style state).
fake()
{
	local b

	FID=$(ct_id "$1")
	FCG=$CT_CG2
	[ "${2:-}" = root ] || FCG=$CT_CG2/$FID
	ct_sleeper "$FCG" || tap_bail "cannot put a process in $FCG"
	FPID=$CT_SLEEPER
	b=$(ct_bundle -a sockopt-hook.io/policy=restricted "$1" -- true)
	FSTATE=$(jq -cn --arg id "$FID" --argjson pid "$FPID" --arg b "$b" \
		'{ociVersion: "1.0.2", id: $id, status: "creating", pid: $pid, bundle: $b}')
}

# stop: the stand-in's init exits, as a container's does before its
# poststop runs; its cgroup stays (unfake removes it).
stop()
{
	ct_kill "$FPID"
	return 0
}

# unfake: ends the stand-in and removes its cgroup (if still there).
unfake()
{
	ct_kill "$FPID"
	[ "$FCG" = "$CT_CG2" ] || rmdir "$FCG" 2>/dev/null
	return 0
}

# hook [ENV=VALUE...] STAGE: runs the hook on $FSTATE; sets RC and ERR.
# With HOOK under valgrind (80-sanitized-hook.sh), valgrind's own notes
# ("--PID-- WARNING: unhandled eBPF command 35") are not the hook's output
# and are dropped; its error reports ("==PID==") are kept.
hook()
{
	local envs=()

	while [[ $1 == *=* ]]; do
		envs+=("$1")
		shift
	done
	ERR=$(printf '%s' "$FSTATE" |
		env "${envs[@]}" timeout 60 "$HOOK" "${CFG[@]}" "$@" 2>&1 >/dev/null)
	RC=$?
	ERR=$(grep -v '^--[0-9]*-- ' <<<"$ERR")
}

# refused NAME REGEX [TODO]: the last hook run failed with one line
# matching REGEX (TODO, "# TODO reason", marks a known hook bug).
refused()
{
	local lines

	[ "$RC" != 0 ]
	tap_ok $? "$1: prestart exits non-zero (got $RC)"
	lines=$(grep -c . <<<"$ERR")
	[ "$lines" = 1 ] && [[ $ERR == "oci-sockopt-hook: "* ]] && [[ $ERR =~ $2 ]]
	tap_ok $? "$1: one line on stderr, matching /$2/${3:+ $3}" ||
		tap_diag "stderr ($lines lines):" "$ERR"
	[ "$lines" = 1 ] && tap_diag "stderr: $ERR"
}

# nothing_left NAME BEFORE: no program of ours on the stand-in's cgroup,
# no record for it, and BPF programs and hook state as in BEFORE.
nothing_left()
{
	if [ -d "$FCG" ]; then
		tap_is "$(ct_our_progs "$FCG")" "" "$1: nothing attached to the cgroup"
	fi
	[ ! -e "$CT_STATE_DIR/$FID.json" ]
	tap_ok $? "$1: no record"
	ct_check_same "$1: BPF programs and hook state as before" "$2" progs state
}

# shim SPEC: environment for the hook to run under the fault shim.
shim()
{
	SHIM_LOG=$CT_TMP/shim.log
	: >"$SHIM_LOG"
	# An ASan build of the hook (80-sanitized-hook.sh) wants its runtime
	# first in the library list; the shim only wraps syscall().
	SHIM_ENV=(LD_PRELOAD="$SHIM" FAULTSHIM="$1" FAULTSHIM_LOG="$SHIM_LOG"
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
}

# ---- 1. The cgroup goes away between resolving it and attaching ------------

for at in any setsockopt; do
	name="cgroup removed at the $([ $at = any ] && echo first || echo second) attach"
	before=$(ct_snapshot progs state)
	fake "rm-$at"
	shim "attach:$at:rmcg"
	hook "${SHIM_ENV[@]}" prestart
	tap_like "$(cat "$SHIM_LOG")" "removed cgroup $FCG" "$name: the shim moved the process out and removed the cgroup"
	refused "$name" 'cannot attach the .* program'
	[ ! -d "$FCG" ]
	tap_ok $? "$name: the cgroup stays removed"
	nothing_left "$name" "$before"
	unfake
done

name="third attach fails (EPERM)"
before=$(ct_snapshot progs state)
fake attach-eperm
shim attach:getsockopt:EPERM
hook "${SHIM_ENV[@]}" prestart
refused "$name" 'cannot attach the getsockopt program: Operation not permitted'
nothing_left "$name" "$before"
unfake

# The init leaves its cgroup while the programs are being attached: the
# hook must notice and undo everything (the shim moves it to the parent
# just before the last attach), in a cgroup of its own and in one the hook
# made.
for where in own root; do
	name="init moved out at the last attach ($where)"
	before=$(ct_snapshot progs state)
	cgs=$(ct_snapshot cgroups)
	fake "mvpid-$where" "$([ $where = root ] && echo root)"
	shim attach:getsockopt:mvpid
	hook "${SHIM_ENV[@]}" prestart
	tap_like "$(cat "$SHIM_LOG")" "moved 1 process\(es\) out of cgroup " "$name: the shim moved the init out"
	refused "$name" "container init pid $FPID left cgroup /[^ ]*$FID while the policy was being attached \(it is now in /\)"
	nothing_left "$name" "$before"
	unfake
	ct_check_same "$name: cgroups as before" "$cgs" cgroups
done

# The cgroup is replaced by a new one of the same name (its process moved
# along) just before the hook opens it: whatever the hook attaches to, its
# record must name that cgroup (its id), or status and gc lose track.
name="cgroup replaced before the hook opens it"
before=$(ct_snapshot progs state)
fake swap-attach
shim open:any:swap
hook "${SHIM_ENV[@]}" FAULTSHIM_CG="$FCG" prestart
tap_like "$(cat "$SHIM_LOG")" "replaced cgroup $FCG \(moved 1 process\(es\) in" "$name: the shim replaced the cgroup"
tap_is "$RC" 0 "$name: prestart succeeds" || tap_diag "$ERR"
tap_is "$(ct_our_progs "$FCG")" "$RESTRICTED_PROGS" "$name: the programs are on the cgroup now at that path"
tap_is "$(ct_record "$FID" | jq -r .cgroup_id 2>&1)" "$(stat -c %i "$FCG")" \
	"$name: the record has that cgroup's id"
tap_is "$("$HOOK" status --json | jq -r --arg id "$FID" '.[] | select(.id == $id) | .live')" true \
	"$name: status shows the container live"
stop
hook poststop
nothing_left "$name, after poststop" "$before"
unfake

# The same under runc: runc made the cgroup; the shim removes it under the
# hook; runc must fail with the hook's line, and nothing may remain.
name="runc, cgroup removed at attach"
before=$(ct_snapshot)
b=$(ct_bundle -a sockopt-hook.io/policy=restricted rm-runc -- sockcheck all)
shim attach:any:rmcg
jq '.hooks.prestart[0].env += $ARGS.positional' "$b/config.json" \
	--args "${SHIM_ENV[@]}" >"$b/c.json" &&
	mv "$b/c.json" "$b/config.json"
ct_run runc "$(ct_id rm-runc)" "$b"
[ "$CT_RC" != 0 ] && ! grep -q '^done=ok' "$CT_OUT"
tap_ok $? "$name: the container does not start (runc exit $CT_RC)"
tap_like "$(cat "$SHIM_LOG")" "removed cgroup $CT_CG2/$(ct_id rm-runc)" "$name: the shim removed runc's cgroup"
tap_like "$(cat "$CT_ERR")" 'oci-sockopt-hook: .*cannot attach the sock_create program' \
	"$name: runc's error carries the hook's line" || tap_diag "$(cat "$CT_ERR")"
ct_delete runc "$(ct_id rm-runc)"
ct_check_same "$name: BPF programs, hook state and cgroups as before" "$before"

# ---- 2. The state directory cannot be written -------------------------------

RO=$CT_TMP/ro-state
mkdir "$RO"
# mode=0700: a tmpfs root is 1777 by default, and a state directory others
# can write is refused before anything is written (57-trust.sh).
if mount -t tmpfs -o ro,size=64k,mode=0700 tmpfs "$RO"; then
	# Unmounted before ct_cleanup removes $CT_TMP, even on an early exit.
	trap 'umount "$RO" 2>/dev/null; ct_cleanup' EXIT
	for where in own root; do
		name="read-only state directory ($([ $where = own ] && echo "runtime's cgroup" || echo "hook-made cgroup"))"
		before=$(ct_snapshot progs state)
		cgs=$(ct_snapshot cgroups)
		fake "ro-$where" "$([ $where = root ] && echo root)"
		hook OCI_SOCKOPT_HOOK_STATE_DIR="$RO" prestart
		refused "$name" "cannot (write state .*|open .*/config\.lock: )Read-only file system"
		tap_ok "$(find "$RO" -mindepth 1 | grep -c .)" "$name: nothing written in it"
		nothing_left "$name" "$before"
		tap_is "$(ct_cgroup_of "$FPID")" "$FCG" "$name: the process is back in its cgroup"
		unfake
		ct_check_same "$name: cgroups as before (a cgroup the hook made is removed)" \
			"$cgs" cgroups
	done
	umount "$RO"
	trap ct_cleanup EXIT
else
	tap_skip "read-only state directory" "cannot mount a tmpfs"
fi

name="state directory under a regular file"
touch "$CT_TMP/plain-file"
before=$(ct_snapshot progs state)
fake state-enotdir
hook OCI_SOCKOPT_HOOK_STATE_DIR="$CT_TMP/plain-file/state" prestart
refused "$name" "state director.*Not a directory"
nothing_left "$name" "$before"
unfake

# ---- 3. bpffs is not mounted ------------------------------------------------

# In a mount namespace of its own with every bpf filesystem unmounted (this
# host mounts none at all), the hook attaches and enforces: it pins nothing.
name="no bpffs"
pins_before=$(awk '$3 == "bpf" { print $2 }' /proc/mounts | xargs -r -I{} find {} | sort)
before=$(ct_snapshot progs state)
fake no-bpffs
# shellcheck disable=SC2016
ERR=$(printf '%s' "$FSTATE" | timeout 30 unshare --mount --propagation private sh -c '
	awk '\''$3 == "bpf" { print $2 }'\'' /proc/mounts | sort -r | xargs -r -n1 umount
	if awk '\''$3 == "bpf" { f = 1 } END { exit !f }'\'' /proc/mounts; then
		echo "bpffs still mounted" >&2; exit 99
	fi
	exec "$@"' sh "$HOOK" "${CFG[@]}" prestart 2>&1)
RC=$?
tap_is "$RC" 0 "$name: prestart succeeds with no bpf filesystem mounted" || tap_diag "$ERR"
tap_is "$(ct_our_progs "$FCG")" "$RESTRICTED_PROGS" "$name: the three programs are attached"
out=$(sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" set-mark 5' sh "$FCG" "$SOCKCHECK")
tap_is "$out" "setsockopt=EPERM" "$name: a process in the cgroup gets EPERM for SO_MARK"
tap_is "$(awk '$3 == "bpf" { print $2 }' /proc/mounts | xargs -r -I{} find {} | sort)" \
	"$pins_before" "$name: nothing new in any bpf filesystem of the host"
stop
hook poststop
tap_is "$RC" 0 "$name: poststop succeeds"
nothing_left "$name, after poststop" "$before"
unfake

# ---- 4. The program load is refused -----------------------------------------

for spec in "load:any:EPERM sock_create.*Operation not permitted" \
	"load:getsockopt:EACCES getsockopt.*Permission denied"; do
	name="BPF_PROG_LOAD refused (${spec%% *})"
	before=$(ct_snapshot progs state)
	fake "load-$(cut -d: -f2 <<<"${spec%% *}")"
	shim "${spec%% *}"
	hook "${SHIM_ENV[@]}" prestart
	refused "$name" "cannot load the ${spec#* }"
	nothing_left "$name" "$before"
	unfake
done

probe=$(timeout 30 "$HOOK" probe --json 2>/dev/null | jq -r '.bypass_prot_mem' 2>/dev/null)
if [ "$probe" = false ]; then
	name="bypass-prot-mem on $(uname -r), on_unsupported fail"
	before=$(ct_snapshot progs state)
	fake bypass
	jq '.annotations = {"sockopt-hook.io/bypass-prot-mem": "true", "sockopt-hook.io/policy": "restricted"}' \
		"$CT_TMP/bundles/bypass/config.json" >"$CT_TMP/bypass.json" &&
		mv "$CT_TMP/bypass.json" "$CT_TMP/bundles/bypass/config.json"
	CFG=(--config "$(ct_config fail '.on_unsupported = "fail"')")
	hook prestart
	CFG=(--config "$CT_EXAMPLE_CONFIG")
	refused "$name" 'SK_BPF_BYPASS_PROT_MEM'
	nothing_left "$name" "$before"
	unfake
else
	tap_skip "bypass-prot-mem refused" "this kernel has it (probe: $probe)"
fi

# ---- 5. A second prestart for the same container ----------------------------

name="second prestart"
before=$(ct_snapshot progs state)
fake twice
hook prestart
tap_is "$RC" 0 "$name: the first prestart succeeds" || tap_diag "$ERR"
rec=$(ct_record "$FID")
for stage in prestart createRuntime; do
	hook "$stage"
	tap_is "$RC $ERR" "0 " "$name: a further $stage exits 0, silently"
done
tap_is "$(ct_our_progs "$FCG")" "$RESTRICTED_PROGS" "$name: exactly one program of each type on the cgroup"
tap_is "$(bpftool -j cgroup show "$FCG" | jq '[.[] | select(.name | startswith("sh_"))] | length')" 3 \
	"$name: three attachments in all, no duplicate"
tap_is "$(ct_record "$FID")" "$rec" "$name: the record is unchanged"
stop
hook poststop
nothing_left "$name, after poststop" "$before"
unfake

# The record was left by an earlier container with the same id whose init
# had the same pid (pids are reused) but another start time, and a policy
# of its own (setonly) still attached: it is not ours, so prestart must
# not take it for "already attached".
name="record of an earlier process with the same pid"
before=$(ct_snapshot progs state)
fake earlier
restricted_state=$FSTATE
b=$(ct_bundle -a sockopt-hook.io/policy=setonly earlier-setonly -- true)
FSTATE=$(jq -c --arg b "$b" '.bundle = $b' <<<"$restricted_state")
hook prestart
tap_is "$RC $(ct_our_progs "$FCG")" "0 cgroup_setsockopt sh_setsockopt" "$name: the earlier container's policy is attached"
ct_record "$FID" | jq '.pid_start -= 1' | ct_write_record "$CT_STATE_DIR/$FID.json"
FSTATE=$restricted_state
hook prestart
tap_is "$RC" 0 "$name: prestart succeeds" || tap_diag "$ERR"
tap_is "$(ct_our_progs "$FCG")" "$RESTRICTED_PROGS" \
	"$name: the earlier container's program is detached, this one's policy attached"
tap_is "$(ct_record "$FID" | jq -r '"\(.policy) \(.pid_start)"')" \
	"restricted $(awk '{ print $22 }' "/proc/$FPID/stat")" "$name: the record is this container's"
stop
hook poststop
nothing_left "$name, after poststop" "$before"
unfake

# Under runc, with the hook configured for both prestart and createRuntime.
name="runc, prestart and createRuntime"
before=$(ct_snapshot)
b=$(ct_bundle -a sockopt-hook.io/policy=restricted both -- \
	/bin/sh -c 'sockcheck set-mark 5; sleep 600')
jq '.hooks.createRuntime = .hooks.prestart' "$b/config.json" >"$b/c.json" &&
	mv "$b/c.json" "$b/config.json"
if ct_start runc "$(ct_id both)" "$b" '^setsockopt='; then
	tap_ok 0 "$name: the container starts"
	cg=$(ct_cgroup_of "$CT_PID")
	tap_is "$(ct_our_progs "$cg")" "$RESTRICTED_PROGS" "$name: exactly one program of each type"
	tap_is "$(sed -n 's/^setsockopt=//p' "$CT_OUT")" EPERM "$name: the policy applies"
else
	tap_ok 1 "$name: the container starts"
	tap_diag "$(cat "$CT_ERR")"
fi
ct_delete runc "$(ct_id both)"
ct_check_same "$name: after delete, all as before" "$before"

# ---- 6. poststop without prestart, and twice --------------------------------

before=$(ct_snapshot progs state)
fake nopre
hook poststop
tap_is "$RC" 0 "poststop without prestart: exit 0" || tap_diag "$ERR"
ct_check_same "poststop without prestart: BPF programs and hook state unchanged" \
	"$before" progs state
unfake

before=$(ct_snapshot progs state)
fake other
other=("$FCG" "$FPID")
hook prestart
fake post2
hook prestart
tap_is "$(ct_our_progs "$FCG")" "$RESTRICTED_PROGS" "poststop twice: prestart attached the policy"
# A poststop while the container still runs (its init alive in its
# cgroup) is not a teardown: it must leave the policy attached.
hook poststop
tap_is "$RC" 0 "poststop while the container runs: exit 0" || tap_diag "$ERR"
tap_like "$ERR" "still runs in cgroup /$FID .*policy stays attached" \
	"poststop while the container runs: says why it leaves the policy attached"
tap_is "$(ct_our_progs "$FCG")" "$RESTRICTED_PROGS" \
	"poststop while the container runs: the policy stays attached"
[ -e "$CT_STATE_DIR/$FID.json" ]
tap_ok $? "poststop while the container runs: the record stays"
stop
for n in first second; do
	hook poststop
	tap_is "$RC" 0 "poststop twice: the $n poststop exits 0" || tap_diag "$ERR"
	tap_is "$(ct_our_progs "$FCG")" "" "poststop twice: after the $n, nothing attached"
	tap_is "$(ct_our_progs "${other[0]}")" "$RESTRICTED_PROGS" \
		"poststop twice: after the $n, another live container keeps its programs"
done
unfake
FCG=${other[0]} FPID=${other[1]} unfake
timeout 30 "$HOOK" gc >/dev/null 2>&1
ct_check_same "poststop twice: once the other is gone and collected, BPF programs and hook state as before" \
	"$before" progs state

# The recorded cgroup is replaced, under the same name, by the cgroup of a
# newer container with the same policy (the same shared programs) just
# before poststop opens it: poststop must see that it is another cgroup
# and leave it, and its programs, alone.
name="cgroup replaced before poststop opens it"
before=$(ct_snapshot progs state)
fake keeper
keeper=("$FCG" "$FPID" "$FSTATE")
hook prestart
fake swap-release
hook prestart
stop
sleep 600 &
newer=$!
CT_PIDS+=("$newer")
shim open:any:swap
hook "${SHIM_ENV[@]}" FAULTSHIM_CG="$FCG" FAULTSHIM_PID="$newer" \
	FAULTSHIM_COPY_FROM="${keeper[0]}" poststop
tap_like "$(cat "$SHIM_LOG")" "replaced cgroup $FCG \(moved 1 process\(es\) in, attached 3 program\(s\)\)" \
	"$name: the shim put a newer container in a new cgroup of that name"
tap_is "$RC" 0 "$name: poststop exits 0"
tap_is "$(ct_our_progs "$FCG")" "$RESTRICTED_PROGS" "$name: the newer container keeps its programs"
out=$(sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" set-mark 5' sh "$FCG" "$SOCKCHECK")
tap_is "$out" "setsockopt=EPERM" "$name: and is still policed"
[ ! -e "$CT_STATE_DIR/$FID.json" ]
tap_ok $? "$name: the old record is dropped"
ct_kill "$newer"
unfake
FCG=${keeper[0]} FPID=${keeper[1]} FSTATE=${keeper[2]}
stop
hook poststop
unfake
ct_check_same "$name: once both are gone, BPF programs and hook state as before" \
	"$before" progs state

# ---- 7. A runtime that never deletes ----------------------------------------

# create RUNTIME NAME: `RUNTIME create` of a restricted container; sets ID,
# PID (its init, waiting to exec), CG and IDS (our program ids).
create()
{
	local b

	ID=$(ct_id "$2")
	b=$(ct_bundle -r "$1" -a sockopt-hook.io/policy=restricted "$2" -- sockcheck all)
	ct_rt "$1"
	CT_IDS+=("$1 $ID")
	PID=
	if timeout -k 5 "$CT_TIMEOUT" "${CT_RT[@]}" create --bundle "$b" "$ID" \
		</dev/null >"$CT_TMP/$ID.out" 2>"$CT_TMP/$ID.err"; then
		PID=$("${CT_RT[@]}" state "$ID" | jq -r '.pid // empty')
	fi
	[ -n "$PID" ]
	tap_ok $? "$1 $2: create succeeds (init $PID waits to exec)" || {
		tap_diag "$(cat "$CT_TMP/$ID.err")" "$(cat "$b/hook.err" 2>/dev/null)"
		return 1
	}
	CG=$(ct_cgroup_of "$PID")
	tap_is "$(ct_our_progs "$CG")" "$RESTRICTED_PROGS" "$1 $2: the policy is attached at create"
	IDS=$(timeout 20 bpftool -j cgroup show "$CG" |
		jq -r '.[] | select(.name | startswith("sh_")) | .id')
}

# kill_init: kills the container's init (started by the runtime for us)
# and waits until it is reaped: gc takes a zombie init for a live one.
kill_init()
{
	kill -KILL "$PID"
	for _ in $(seq 100); do
		[ -e "/proc/$PID" ] || return 0
		sleep 0.1
	done
	tap_diag "init $PID is still there: $(cat "/proc/$PID/stat" 2>&1)"
}

# running PID: the process exists and is not a zombie.
running()
{
	local state

	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
	[ -n "$state" ] && [ "$state" != Z ]
}

# gone: none of the programs in IDS exists any more.
gone()
{
	local id

	for id in $IDS; do
		timeout 20 bpftool prog show id "$id" >/dev/null 2>&1 && return 1
	done
	return 0
}

before=$(ct_snapshot progs state)
cgs=$(ct_snapshot cgroups)
if create runc killed; then
	kill_init
	tap_is "$(ct_our_progs "$CG")" "$RESTRICTED_PROGS" \
		"runc killed: with init dead and no delete, runc's cgroup and our programs remain"
	out=$(timeout 30 "$HOOK" gc --json 2>&1)
	tap_is "$out" '{"released": 1}' "runc killed: oci-sockopt-hook gc releases the record"
	tap_is "$(ct_our_progs "$CG")" "" "runc killed: after gc, nothing of ours on runc's cgroup"
	gone
	tap_ok $? "runc killed: after gc, the programs are freed (ids $(tr '\n' ' ' <<<"$IDS"))"
	ct_check_same "runc killed: after gc, BPF programs and hook state (records, index) as before" \
		"$before" progs state
	ct_delete runc "$ID"
	ct_check_same "runc killed: after runc delete -f, cgroups as before" "$cgs" cgroups
fi

# The next poststop (of any container) collects it too.
if create runc killed-next; then
	kill_init
	b=$(ct_bundle -a sockopt-hook.io/policy=setonly next -- sockcheck set-mark 5)
	# A minute after the last gc: poststop collects at most once a minute.
	[ -e "$CT_STATE_DIR/last-gc" ] && touch -d '-2 minutes' "$CT_STATE_DIR/last-gc"
	ct_run runc "$(ct_id next)" "$b"
	tap_is "$CT_RC $(cat "$CT_OUT")" "0 setsockopt=EPERM" "runc killed, next container: runs"
	tap_is "$(ct_our_progs "$CG")" "" "runc killed, next container: its poststop released the dead one"
	ct_check_same "runc killed, next container: BPF programs and hook state as before" \
		"$before" progs state
	ct_delete runc "$ID"
fi

# crun without a cgroup manager: the hook made the cgroup, so its reaper
# must release it when the init dies, with no delete and no gc.
if create crun-nocg reaped; then
	tap_like "$CG" "/oci-sockopt-hook-$ID\$" "crun-nocg killed: the init is in the hook's own cgroup"
	reaper=$(for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = sockopt-reaper ] &&
			tr '\0' '\n' <"$p/environ" 2>/dev/null |
			grep -qx "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" && basename "$p"
	done)
	[[ $reaper =~ ^[0-9]+$ ]]
	tap_ok $? "crun-nocg killed: the hook left one reaper (pid '$reaper')"
	tap_is "$(find "/proc/$reaper/fd" -lname 'anon_inode:bpf*' 2>/dev/null | wc -l)" 0 \
		"crun-nocg killed: the reaper holds no BPF program or map fd"
	kill_init
	for _ in $(seq 100); do
		[ ! -d "$CG" ] && [ ! -e "$CT_STATE_DIR/$ID.json" ] && break
		sleep 0.1
	done
	[ ! -d "$CG" ]
	tap_ok $? "crun-nocg killed: without delete or gc, the reaper removed the hook's cgroup"
	for _ in $(seq 100); do
		running "$reaper" || break
		sleep 0.1
	done
	! running "$reaper"
	tap_ok $? "crun-nocg killed: and exited"
	[ ! -e "$CT_STATE_DIR/$ID.json" ]
	tap_ok $? "crun-nocg killed: and the record"
	ct_check_same "crun-nocg killed: cgroups as before" "$cgs" cgroups
	gone
	tap_ok $? "crun-nocg killed: the programs are freed"
	ct_check_same "crun-nocg killed: BPF programs and hook state (records, index) as before, still without gc" \
		"$before" progs state
	tap_is "$(timeout 30 "$HOOK" gc --json 2>&1)" '{"released": 0}' \
		"crun-nocg killed: gc finds nothing left to release"
	ct_delete crun-nocg "$ID"
fi

ct_check_same "at the end, BPF programs, hook state and cgroups are as before" "$BASE"
tap_done
