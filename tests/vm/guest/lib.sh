# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2034
# TAP helpers for the guest scripts (busybox sh). Sourced, not run.

T_N=0
T_FAIL=0

diag() { echo "# $*"; }
ok() { T_N=$((T_N + 1)); echo "ok $T_N - $*"; }
not_ok() { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $*"; }
skip() { T_N=$((T_N + 1)); echo "ok $T_N - # SKIP $*"; }

# check DESCRIPTION COMMAND...: one test point from a command's status
check() {
	_d=$1
	shift
	if "$@"; then ok "$_d"; else not_ok "$_d"; fi
}

# kv KEY LINE: the value of KEY=VALUE in a memacct result line
kv() { echo " $2" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

# figure NAME VALUE...: a line the host collects into the figures table
figure() { echo "FIGURE $*"; }

# done_testing: the plan line; status 0 when nothing failed
done_testing() {
	echo "1..$T_N"
	[ "$T_FAIL" -eq 0 ]
}

# mrun ARGS...: one `memacct measure` run, in cgroup $MCG when that is set
# (a path under /sys/fs/cgroup). Sets M_GROWTH (sockstat pages), M_EXACT
# (memory_allocated + per-CPU caches, "" when kcore cannot be read) and
# M_PAGES (pages sent); all "" when memacct failed.
mrun() {
	if [ -n "${MCG:-}" ]; then
		M_LINE=$(sh -c 'echo $$ >"$0/cgroup.procs" && exec memacct measure "$@"' \
			"$MCG" "$@" 2>/tmp/mrun.err)
	else
		M_LINE=$(memacct measure "$@" 2>/tmp/mrun.err)
	fi
	_rc=$?
	sed 's/^/# /' /tmp/mrun.err
	[ -z "$M_LINE" ] || echo "# $M_LINE"
	M_GROWTH=$(kv growth "$M_LINE")
	M_EXACT=$(kv exact_growth "$M_LINE")
	M_PAGES=$(kv sent_pages "$M_LINE")
	[ "$M_EXACT" != na ] || M_EXACT=""
	[ $_rc = 0 ] || M_GROWTH="" M_EXACT=""
	return $_rc
}

# check_charged NAME PAGES: grown by more than 32 pages (the series' bound)
check_charged() {
	check "$1: growth ${2:-error} > 32 pages" test "${2:-0}" -gt 32
}

# check_bypassed NAME PAGES: grown by at most 10 pages
check_bypassed() {
	check "$1: growth ${2:-error} <= 10 pages" test "${2:-99}" -le 10
}
