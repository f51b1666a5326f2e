#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The node suite's own tools (tests/node/guest/lib.sh), shown on this host
# before 95-node.sh trusts them inside the node. The scenario runner
# (node_run_scenario) budgets by progress: a scenario that keeps printing
# runs past its budget to its end, one silent for its budget is stopped,
# one still printing at three times its budget is stopped, and a child
# left holding its output does not hold the runner. The check that a
# removed container's BPF programs are gone (progs_settled), on a cgroup
# of this host: the programs of a removed cgroup that a socket made in it
# keeps dying (the kernel frees them only when it releases the cgroup)
# are waited for past the old 20 s; a planted pinned program fails it,
# naming the program, and so does a cgroup that stays dying past the
# bound. A host suite, not part of 95-node.sh: it loads and pins programs
# and makes cgroups on this host, which the suites beside a QEMU suite
# would see as theirs.
#
# Modules: (the node suite's runner, tests/node/guest/lib.sh)
# Root: yes
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/host.sh
. "$here/../lib/host.sh"
tap_require_root
host_lock || tap_bail "cannot take $HOST_LOCK"

B=$(mktemp -d /tmp/sockopt-hook-budget.XXXXXX) || tap_bail "mktemp failed"
trap 'rm -rf "$B"' EXIT
ln -s "$here/../lib/tap.sh" "$B/tap.sh"
# budget NAME SECS: the runner on scenario B/NAME.sh with a budget of SECS;
# sets OUT (its output), RC and TOOK (seconds)
budget() {
	local t0=$SECONDS

	OUT=$(NODE_PAYLOAD=$B bash -c '. "$1"; node_run_scenario "$2" "$3"' _ \
		"$here/../node/guest/lib.sh" "$B/$1.sh" "$2")
	RC=$?
	TOOK=$((SECONDS - t0))
}
# shellcheck disable=SC2016 # the scenarios' own expansions
printf 'for i in 1 2 3 4 5 6 7 8; do echo "step $i"; sleep 1; done; echo end; exit 3\n' >"$B/slow.sh"
printf 'echo started; sleep 120; echo never\n' >"$B/silent.sh"
printf 'while :; do echo tick; sleep 0.5; done\n' >"$B/chatty.sh"
printf 'sleep 120 & echo $! >"%s/child.pid"; printf "no newline"\n' "$B" >"$B/child.sh"
budget slow 5
tap_is "$RC:$(grep -c '^step [1-8]$' <<<"$OUT"):$(tail -n 1 <<<"$OUT")" 3:8:end \
	"runner: a scenario that prints every second runs past its budget (5 s) to its end, $TOOK s: its 8 lines, the last one as it exits, its exit status" ||
	tap_diag "$OUT"
budget silent 5
tap_is "$RC:$(tail -n 1 <<<"$OUT")" "124:# silent: silent for 5s: stopped" \
	"runner: one silent for its budget is stopped with that line, status 124 ($TOOK s)" || tap_diag "$OUT"
tap_ok "$((TOOK < 60 ? 0 : 1))" "runner: ... long before it would have ended (120 s)"
budget chatty 5
tap_is "$RC:$(tail -n 1 <<<"$OUT")" "124:# chatty: still running after 15s (3 times its budget): stopped" \
	"runner: one still printing at three times its budget is stopped, status 124 ($TOOK s)" || tap_diag "$OUT"
budget child 5
tap_is "$RC:$OUT" "0:no newline" \
	"runner: a child left holding its output does not hold it: its status, its last line without a newline ($TOOK s)"
tap_ok "$((TOOK < 60 ? 0 : 1))" "runner: ... returned before the child's 120 s"
[ ! -s "$B/child.pid" ] || kill "$(cat "$B/child.pid")" 2>/dev/null

# --- progs_settled on this host's cgroup2 -----------------------------------
CG2=$(host_cgroup2_mount)
[ -n "$CG2" ] || tap_bail "no cgroup2 mount"
P=$CG2/sockopt-node-settled.$$
CGPROG=$TESTS_BUILD/tests/cgprog
[ -x "$CGPROG" ] || tap_bail "$CGPROG missing (make test-progs)"
{ mkdir "$P" "$B/bpffs" && mount -t bpf sockopt-node-settled "$B/bpffs"; } ||
	tap_bail "cannot make $P or a bpffs"
trap 'umount "$B/bpffs" 2>/dev/null; rmdir "$P"/c "$P" 2>/dev/null; rm -rf "$B"' EXIT
# settled WAIT GRACE: progs_settled (NODE_DYING_WAIT=WAIT, NODE_PROGS_GRACE
# =GRACE) under $P, after the snapshot taken at the start of this test
# (settle_start); sets OUT, RC and TOOK
settle_start() { SNAP_PROGS=$(NODE_PAYLOAD=$B bash -c '. "$1"; prog_ids | tr "\n" " "' _ "$here/../node/guest/lib.sh"); }
settled() {
	local t0=$SECONDS

	OUT=$(NODE_PAYLOAD=$B NODE_CGROOT=$P NODE_DYING_WAIT=$1 NODE_PROGS_GRACE=$2 bash -c \
		'. "$1"; NODE_SNAP_PROGS=$2 NODE_SNAP_DYING=0; progs_settled' _ \
		"$here/../node/guest/lib.sh" "$SNAP_PROGS" 2>&1)
	RC=$?
	TOOK=$((SECONDS - t0))
}
# holder SECS: a process that makes a socket in $P/c with a program on
# it, moves to $P, and keeps the socket SECS seconds; $P/c removed, and
# so dying while the socket lives (sets HOLDER, the pid, and PROG, the id)
holder() {
	mkdir "$P/c" || return 1
	PROG=$("$CGPROG" attach "$P/c" multi node_settled | sed -n 's/^id=//p')
	python3 -c '
import os, socket, sys, time
p, secs = sys.argv[1], float(sys.argv[2])
open(p + "/c/cgroup.procs", "w").write("0")
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
open(p + "/cgroup.procs", "w").write("0")
print("ready", flush=True)
time.sleep(secs)' "$P" "$1" >"$B/holder.out" &
	HOLDER=$!
	wait_until_ready() { for _ in $(seq 100); do grep -q ready "$B/holder.out" && return 0; sleep 0.1; done; return 1; }
	wait_until_ready && rmdir "$P/c"
}
settle_start
holder 35
tap_ok $? "progs_settled: a program on a removed cgroup a socket made in it keeps dying (program ${PROG:-none})"
tap_is "$(sed -n 's/^nr_dying_descendants //p' "$P/cgroup.stat")" 1 "progs_settled: ... the cgroup is dying"
settled 180 20
tap_is "$RC" 0 "progs_settled: waits while the cgroup is dying (the old check gave up after 20 s): the program gone with the socket, after $TOOK s" ||
	tap_diag "$OUT"
tap_ok "$((TOOK >= 25 ? 0 : 1))" "progs_settled: ... that took longer than the old 20 s ($TOOK s)"
wait "$HOLDER"
settle_start
"$CGPROG" pin "$B/bpffs/planted" sock_create node_planted >/dev/null
settled 180 3
tap_is "$RC" 1 "progs_settled: a planted pinned program fails it, with no cgroup dying, at once ($TOOK s)"
tap_like "$OUT" '# program \+ [0-9]+: [0-9]+: cgroup_sock +name node_planted' "progs_settled: ... naming it" ||
	tap_diag "$OUT"
tap_ok "$((TOOK < 30 ? 0 : 1))" "progs_settled: ... without waiting for the dying bound"
rm -f "$B/bpffs/planted"
settle_start
holder 60
settled 5 3
tap_is "$RC" 1 "progs_settled: a cgroup that stays dying past the bound fails it ($TOOK s)"
tap_like "$OUT" "nr_dying_descendants of $P: 1 " "progs_settled: ... saying that a cgroup is dying" || tap_diag "$OUT"
kill "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null
tap_done
