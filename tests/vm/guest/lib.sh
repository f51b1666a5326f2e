# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2034,SC2086
# The guest scripts' helpers (busybox sh), on top of the tests' TAP
# library (tests/lib/tap.sh, in the image as /guest/tap.sh). Sourced, not
# run.
# shellcheck source=../../lib/tap.sh
. /guest/tap.sh

# kv KEY LINE: the value of KEY=VALUE in a memacct result line
kv() { echo " $2" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

# figure NAME VALUE...: a line the host collects into the figures table
figure() { echo "FIGURE $*"; }

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

# mboth ARGS...: two mrun, the series' 32 pages read exactly, then the
# default size read from sockstat. Sets M_X and M_S (their growth) and
# M_PAGES.
mboth() {
	mrun "$@" -P 32
	M_X=$M_EXACT
	mrun "$@"
	M_S=$M_GROWTH
}

# mbest ARGS...: the growth for the series' 32 pages, read exactly, or,
# where kcore cannot be read, for the default size from sockstat. Sets
# M_BEST.
mbest() {
	mrun "$@" -P 32
	M_BEST=$M_EXACT
	if [ -z "$M_BEST" ]; then
		mrun "$@"
		M_BEST=$M_GROWTH
	fi
}

# each_case FUNCTION: FUNCTION NAME MEMACCT-ARGS... for TCP and UDP over
# IPv4 and IPv6, and for TCP's accept()ed side.
each_case() {
	for _proto in tcp udp; do
		for _fam in 4 6; do
			_sides=""
			[ $_proto = tcp ] && _sides="-a"
			for _side in "" $_sides; do
				"$1" "$_proto/v$_fam${_side:+/accepted}" \
					-p $_proto -f $_fam $_side
			done
		done
	done
}

# check_charged NAME PAGES: grown by more than 32 pages (the series' bound)
check_charged() {
	tap_check "$1: growth ${2:-error} > 32 pages" test "${2:-0}" -gt 32
}

# check_bypassed NAME PAGES: grown by at most 10 pages
check_bypassed() {
	tap_check "$1: growth ${2:-error} <= 10 pages" test "${2:-99}" -le 10
}
