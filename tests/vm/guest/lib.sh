# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2016,SC2034,SC2086
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

# ---- a container as runc makes one, without a runtime (hook.sh,
# compat.sh): the container's cgroup with its "init" parked in it (a shell
# blocked on a fifo), the hook called with a genuine OCI state on stdin and
# a bundle whose config.json carries the annotations; workloads join that
# cgroup the way `runc exec` does.

HOOK=/bin/oci-sockopt-hook
HOOK_CFG=/guest/config.json
CGROOT=/sys/fs/cgroup

# ct_start ID: cgroup CGROOT/ID holding one process parked on a fifo
ct_start() {
	mkdir -p "$CGROOT/$1" "/tmp/$1"
	rm -f "/tmp/$1/fifo"
	mkfifo "/tmp/$1/fifo"
	sh -c 'echo $$ >"$0/cgroup.procs" && exec cat "$1" >/dev/null' \
		"$CGROOT/$1" "/tmp/$1/fifo" &
	CT_PID=$!
	for _i in 1 2 3 4 5 6 7 8 9 10; do
		grep -qx "0::/$1" "/proc/$CT_PID/cgroup" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "# ct_start $1: pid $CT_PID never joined the cgroup"
	return 1
}

# ct_stop ID: let the parked process exit
ct_stop() {
	: >"/tmp/$1/fifo"
	wait "$CT_PID" 2>/dev/null
}

# ct_bundle ID ANNOTATIONS: /tmp/ID/config.json with those annotations
ct_bundle() {
	cat >"/tmp/$1/config.json" <<EOF
{"ociVersion":"1.0.2","process":{"args":["cat","fifo"],"cwd":"/"},
 "root":{"path":"rootfs"},"hostname":"$1","annotations":{$2}}
EOF
}

# hook STAGE ID STATUS: run the hook with this container's OCI state
hook() {
	printf '{"ociVersion":"1.0.2","id":"%s","status":"%s","pid":%d,"bundle":"/tmp/%s"}' \
		"$2" "$3" "$CT_PID" "$2" |
		"$HOOK" --config "$HOOK_CFG" "$1" >/tmp/hook.out 2>&1
	_rc=$?
	sed 's/^/#   hook: /' /tmp/hook.out
	return $_rc
}

show_progs() {
	if command -v bpftool >/dev/null; then
		tap_diag "bpftool cgroup show $1:"
		bpftool cgroup show "$1" 2>&1 | sed 's/^/#   /'
	fi
}

# in_cg CGROUP CMD...: run CMD in CGROUP, as `runc exec` would
in_cg() {
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$@"
}

# ct_run ID ANNOTATIONS: start container ID and run prestart; 0 when done
ct_run() {
	ct_start "$1" || { tap_ok 1 "$1: cannot start the container process"; return 1; }
	ct_bundle "$1" "$2"
	if ! hook prestart "$1" creating; then
		tap_ok 1 "$1: hook prestart with {$2}"
		ct_stop "$1"
		return 1
	fi
	tap_ok 0 "$1: hook prestart with {$2}"
	show_progs "$CGROOT/$1"
}

# ct_end ID: the container exits, poststop runs, nothing of ours remains
ct_end() {
	ct_stop "$1"
	hook poststop "$1" stopped
	_left=""
	command -v bpftool >/dev/null &&
		_left=$(bpftool cgroup show "$CGROOT/$1" 2>/dev/null | grep ' sh_')
	tap_check "$1: after poststop no program of ours on the cgroup" test -z "$_left"
	rmdir "$CGROOT/$1" 2>/dev/null
}

# sc_is KEY WANT DESCRIPTION: a sockcheck result from /tmp/sc.out
sc_is() {
	_v=$(sed -n "s/^$1=//p" /tmp/sc.out | head -n 1)
	tap_check "$3: $1=${_v:-missing} (want $2)" test "$_v" = "$2"
}

