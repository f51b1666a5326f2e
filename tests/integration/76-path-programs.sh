#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Other tools' programs on the container's path. A parent cgroup of ours
# gets another tool's cgroup/setsockopt program (tests/progs/cgprog.c:
# it denies SO_KEEPALIVE, named after how it is attached), and runc
# containers run below it (linux.cgroupsPath):
#   - a container without our policy: the parent's program runs
#     (SO_KEEPALIVE gives EPERM);
#   - BPF_F_ALLOW_OVERRIDE: our multi attach would switch the parent's
#     program off for the container. on_override_program "refuse" (the
#     default) refuses with its id, name and cgroup, nothing attached;
#     "warn" starts the container, policed, with a warning naming it (and
#     then SO_KEEPALIVE is allowed: the parent's program no longer runs
#     there, which is what the warning is about);
#   - attached with no flag (exclusive): the kernel would refuse our attach;
#     the hook refuses first with a line naming the program, whatever
#     on_override_program says;
#   - BPF_F_ALLOW_MULTI: no line; both run, ours first. The order is
#     shown by a parent program that calls bpf_set_retval(0): it runs
#     after ours and undoes our deny (the documented limit: root's tools
#     on the path have the last word).
#
# Modules: `attach.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

CGPROG=$CT_BUILD/tests/cgprog
[ -x "$CGPROG" ] || tap_skip_all "$CGPROG not built (run make test-progs)"
ct_setup runc
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
PARENT_REL=/$CT_PREFIX-parent
PARENT=$CT_CG2$PARENT_REL
LOG=$CT_TMP/hook.log
WARN=$CT_TMP/configs/warn.json
jq --arg log "$LOG" '.on_override_program = "warn" | .log_file = $log' \
	"$CT_EXAMPLE_CONFIG" >"$WARN" || exit 1

# runc makes the parent in every v1 hierarchy too; we remove those, and
# the parent (which frees the program attached to it).
cleanup_parent()
{
	local d

	for d in /sys/fs/cgroup/*"$PARENT_REL"; do
		[ -d "$d" ] && [ "$d" != "$PARENT" ] && rmdir "$d"
	done
	[ -d "$PARENT" ] && rmdir "$PARENT"
}
trap 'cleanup_parent; ct_cleanup' EXIT
mkdir "$PARENT" || exit 1

# parent_prog MODE [PROGRAM]: replaces the parent's program with one
# attached in MODE (multi, override, exclusive); sets PROG (its id) and
# NAME.
parent_prog()
{
	local out

	[ -n "${PROG:-}" ] && "$CGPROG" detach "$PARENT" "$PROG"
	NAME=ka_$1
	[ -n "${2:-}" ] && NAME=undo_$1
	out=$("$CGPROG" attach "$PARENT" "$1" "$NAME" "${2:-deny-keepalive}")
	PROG=${out#id=}
	[[ $PROG =~ ^[0-9]+$ ]]
	tap_ok $? "$1: the parent $PARENT_REL has another tool's program $PROG '$NAME'" ||
		tap_diag "$out"
}

# below NAME [ct_bundle options...] -- ARGS...: runs a runc container in
# the cgroup $PARENT_REL/<id>. Sets ID.
below()
{
	local name=$1 b

	shift
	ID=$(ct_id "$name")
	b=$(ct_bundle "$@") || return 1
	jq --arg p "$PARENT_REL/$ID" '.linux.cgroupsPath = $p' "$b/config.json" \
		>"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json"
	ct_run runc "$ID" "$b"
}

# not_started DESCRIPTION REGEX REGEX-DESCRIPTION: the last container
# `below` ran did not start, and runc's error carries the hook's line,
# which matches REGEX.
not_started()
{
	[ "$CT_RC" != 0 ] && ! grep -q . "$CT_OUT"
	tap_ok $? "$1"
	tap_like "$(cat "$CT_ERR")" "$2" "$3" || tap_diag "$(cat "$CT_ERR")"
}

# parent_keeps: the parent's program is still attached, and nothing of ours.
parent_keeps()
{
	tap_is "$(timeout 20 bpftool -j cgroup show "$PARENT" | jq -r '.[] | "\(.id) \(.name)"')" \
		"$PROG $NAME" "$1: the parent has its program, and only that"
}

# ---- override -----------------------------------------------------------------

parent_prog override
progs=$(ct_snapshot progs)
below control control -- sockcheck keepalive
tap_is "$CT_RC $(cat "$CT_OUT")" "0 keepalive=EPERM" \
	"override, no policy: the parent's program runs in the container"

below refused -a sockopt-hook.io/policy=restricted refused -- sockcheck set-mark 5
not_started "override, on_override_program refuse: the container does not start" \
	"oci-sockopt-hook: container $ID: cgroup $PARENT_REL has setsockopt program $PROG '$NAME' attached with BPF_F_ALLOW_OVERRIDE: our program on cgroup $PARENT_REL/$ID would switch it off for this container; refusing because on_override_program is 'refuse' in $CT_EXAMPLE_CONFIG" \
	"override, refuse: one line with the program's id, name and cgroup"
parent_keeps "override, refuse"
ct_check_same "override, refuse: no program of ours loaded or left" "$progs" progs
[ ! -e "$CT_STATE_DIR/$ID.json" ]
tap_ok $? "override, refuse: no record"

below warned -c "$WARN" -a sockopt-hook.io/policy=restricted warned -- \
	/bin/sh -c 'sockcheck set-mark 5; sockcheck keepalive'
tap_is "$CT_RC $(tr '\n' ' ' <"$CT_OUT")" "0 setsockopt=EPERM keepalive=1 " \
	"override, warn: the container runs, policed; the parent's program no longer runs there"
tap_like "$(grep -F "container $ID: " "$LOG")" \
	"warning: container $ID: cgroup $PARENT_REL has setsockopt program $PROG '$NAME' attached with BPF_F_ALLOW_OVERRIDE: our program on cgroup $PARENT_REL/$ID switches it off for this container \(on_override_program is 'warn'\)" \
	"override, warn: the warning names the program" || tap_diag "$(cat "$LOG")"
parent_keeps "override, warn, after delete"

# ---- exclusive ----------------------------------------------------------------

parent_prog exclusive
below exclusive -c "$WARN" -a sockopt-hook.io/policy=restricted exclusive -- sockcheck set-mark 5
not_started "exclusive: the container does not start, even with on_override_program warn" \
	"oci-sockopt-hook: container $ID: cgroup $PARENT_REL, above the container's cgroup $PARENT_REL/$ID, has setsockopt program $PROG '$NAME' attached exclusively \(neither BPF_F_ALLOW_MULTI nor BPF_F_ALLOW_OVERRIDE\): the kernel refuses any program below it" \
	"exclusive: one line naming the program, not a bare EPERM"
parent_keeps "exclusive"

# ---- multi --------------------------------------------------------------------

parent_prog multi
: >"$LOG"
below multi -c "$WARN" -a sockopt-hook.io/policy=restricted multi -- \
	/bin/sh -c 'sockcheck set-mark 5; sockcheck keepalive'
tap_is "$CT_RC $(tr '\n' ' ' <"$CT_OUT")" "0 setsockopt=EPERM keepalive=EPERM " \
	"multi: the container runs under both programs"
tap_is "$(grep -c 'warning' "$LOG")" 0 "multi: no warning"
parent_keeps "multi"

parent_prog multi undo-deny
below undo -a sockopt-hook.io/policy=restricted undo -- sockcheck set-mark 5
tap_is "$CT_RC $(cat "$CT_OUT")" "0 setsockopt=ok" \
	"multi: a parent's program runs after ours, and can undo our deny (bpf_set_retval(0))"
parent_keeps "multi, undo-deny"

"$CGPROG" detach "$PARENT" "$PROG"
cleanup_parent
ct_check_same "at the end, BPF programs, hook state and cgroups are as before" "$BASE"
tap_done
