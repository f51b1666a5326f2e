#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The hook on a node as users run it: a Debian unstable node (systemd as
# PID 1, cgroup v2 only, the VM suite's >= 6.19 kernel, runc 1.3, crun
# 1.2x, podman 5, containerd 2.x) booted under QEMU (tests/node/), the hook
# installed there with `make install`, the scenarios' TAP and figures
# reported here. QEMU touches no host BPF or cgroup; the lock is held as
# for every suite. First, on the host, the node's scenario runner
# (tests/node/guest/lib.sh, node_run_scenario) shown to budget by
# progress: a scenario that keeps printing runs past its budget to its
# end, one silent for its budget is stopped, one still printing at three
# times its budget is stopped, and a child left holding its output does
# not hold the runner.
#
# Modules: all
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
if [ "$TAP_FAILED" != 0 ]; then
	tap_diag "the node's scenario runner failed its checks: the node is not booted"
	exit 1
fi
host_qemu_suite tests/node/run-node-suite.sh node-suite '^boot:\|^node:'
