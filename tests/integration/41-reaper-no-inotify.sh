#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The reaper of a cgroup the hook made (crun --cgroup-manager=disabled)
# must never release a running container, and must log where the operator
# looks:
#   1. its log lines reach the config's log_file (it closes every fd it
#      inherits, and must keep the log file's);
#   2. with every inotify instance of root taken (a rootful container can
#      do this: fs.inotify.max_user_instances counts per user), the reaper
#      polls instead: seconds later the programs are still attached and
#      setsockopt(SO_MARK) in the container still gives EPERM; once the
#      container is deleted the reaper still releases everything.
# The bundles have no poststop hook, so the reaper is the one releasing.
#
# Modules: `teardown.c`, `log.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

HOG=$CT_BUILD/tests/inotify_hog
[ -x "$HOG" ] || tap_skip_all "$HOG not built (run make test-progs)"
ct_setup crun-nocg
BASE=$(ct_snapshot)
LOG=$CT_TMP/hook.log
CFG=$CT_TMP/configs/logged.json
jq --arg log "$LOG" '.log_file = $log' "$CT_EXAMPLE_CONFIG" >"$CFG" || exit 1
RESTRICTED_PROGS="cgroup_getsockopt sh_getsockopt
cgroup_inet_sock_create sh_sock_create
cgroup_setsockopt sh_setsockopt"

# reaper: the pid of the reaper our hook left (one container at a time).
reaper()
{
	local p

	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = sockopt-reaper ] || continue
		tr '\0' '\n' <"$p/environ" 2>/dev/null |
			grep -qx "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" &&
			basename "$p"
	done | head -n 1
}

# released ID CG REAPER: waits up to 10 s for CG and the record to go and
# the reaper to exit; then BPF programs, hook state and cgroups must be as
# at the start.
released()
{
	for _ in $(seq 100); do
		[ ! -d "$2" ] && [ ! -e "$CT_STATE_DIR/$1.json" ] &&
			[ ! -e "/proc/$3" ] && break
		sleep 0.1
	done
	[ ! -d "$2" ] && [ ! -e "$CT_STATE_DIR/$1.json" ]
	tap_ok $? "$1: after delete, the hook's cgroup and the record are gone"
	[ ! -e "/proc/$3" ]
	tap_ok $? "$1: and the reaper has exited"
	ct_check_same "$1: BPF programs, hook state and cgroups as before" "$BASE"
}

# ---- 1. The reaper logs to the log file -------------------------------------

ID=$(ct_id logged)
b=$(ct_bundle -r crun-nocg -c "$CFG" -P -a sockopt-hook.io/policy=restricted logged -- sleep 600)
if ct_start crun-nocg "$ID" "$b"; then
	CG=$(ct_cgroup_of "$CT_PID")
	reaper=$(reaper)
	[[ $reaper =~ ^[0-9]+$ ]]
	tap_ok $? "logged: the hook left a reaper (pid '$reaper')"
	tap_is "$(find "/proc/$reaper/fd" -lname "$LOG" 2>/dev/null | wc -l)" 1 \
		"logged: the reaper keeps the log file open"
	ct_delete crun-nocg "$ID"
	released "$ID" "$CG" "$reaper"
	tap_like "$(grep -F "[$reaper]" "$LOG")" \
		"info: container $ID: reaper: released cgroup /oci-sockopt-hook-$ID of container $ID" \
		"logged: the reaper's line is in the log file" || tap_diag "log:" "$(cat "$LOG")"
else
	tap_ok 1 "logged: the container starts"
	tap_diag "$(cat "$CT_ERR")" "$(cat "$b/hook.err" 2>/dev/null)"
fi

# ---- 2. No inotify instance left for root -----------------------------------

ct_hold hog "$HOG" || exit 1
ct_wait_for "$CT_TMP/hog.out" '^held='
tap_like "$(cat "$CT_TMP/hog.out")" '^held=[0-9]+ errno=EMFILE$' \
	"a process of ours holds every inotify instance root has left"
tap_is "$("$HOG" </dev/null)" "held=0 errno=EMFILE" "no further inotify instance can be made"

ID=$(ct_id exhausted)
: >"$LOG"
# shellcheck disable=SC2016 # expanded by the container's shell
b=$(ct_bundle -r crun-nocg -c "$CFG" -P -a sockopt-hook.io/policy=restricted exhausted -- \
	/bin/sh -c 'sockcheck set-mark 5 | sed s/^/t0_/; sleep 6
		sockcheck set-mark 5 | sed s/^/t6_/; sleep 600')
if ct_start crun-nocg "$ID" "$b" '^t0_'; then
	CG=$(ct_cgroup_of "$CT_PID")
	tap_like "$CG" "/oci-sockopt-hook-$ID\$" "exhausted: the init is in a cgroup the hook made"
	tap_like "$(cat "$LOG")" "warning: container $ID: reaper: cannot watch $CG/cgroup.events \(Too many open files\): polling it every 1 s" \
		"exhausted: the reaper says it polls, before prestart returns" || tap_diag "log:" "$(cat "$LOG")"
	ct_wait_for "$CT_OUT" '^t6_'
	tap_is "$(sed -n 's/^t0_setsockopt=//p' "$CT_OUT")" EPERM \
		"exhausted: setsockopt(SO_MARK) at start gives EPERM"
	tap_is "$(sed -n 's/^t6_setsockopt=//p' "$CT_OUT")" EPERM \
		"exhausted: 6 s later, setsockopt(SO_MARK) still gives EPERM"
	tap_is "$(ct_our_progs "$CG")" "$RESTRICTED_PROGS" \
		"exhausted: 6 s later, the three programs are still attached"
	[ -e "$CT_STATE_DIR/$ID.json" ]
	tap_ok $? "exhausted: and the record is still there"
	reaper=$(reaper)
	[[ $reaper =~ ^[0-9]+$ ]]
	tap_ok $? "exhausted: the reaper is still waiting (pid '$reaper')"
else
	tap_ok 1 "exhausted: the container starts"
	tap_diag "$(cat "$CT_ERR")" "$(cat "$b/hook.err" 2>/dev/null)"
fi
ct_release
tap_is "$("$HOG" </dev/null | sed 's/=[1-9][0-9]* / /')" "held errno=EMFILE" \
	"the inotify instances are free again"
if [ -n "${CG:-}" ]; then
	ct_delete crun-nocg "$ID"
	released "$ID" "$CG" "$reaper"
	tap_like "$(grep -F "[$reaper]" "$LOG")" "reaper: released cgroup /oci-sockopt-hook-$ID of container $ID" \
		"exhausted: the polling reaper released it, and logged that" || tap_diag "log:" "$(cat "$LOG")"
fi

tap_done
