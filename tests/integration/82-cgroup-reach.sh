#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every way into the cgroup2 tree counts, not only the one mount the hook
# knows (real runc, restricted policy). The test mounts the host's cgroup2
# hierarchy a second time at a temp path (as Cilium keeps one at
# /run/cilium/cgroupv2), and once more in a directory of its own, with the
# host's super options, so no hierarchy flag changes:
#   1. control, no hook: a container given a rw bind of the second mount
#      writes its pid into the root cgroup's cgroup.procs and lands in the
#      root cgroup, where no program runs; in a cgroup namespace of its
#      own as well while the hierarchy has no nsdelegate;
#   2. refused (reason cgroup_writable, one line naming the mount), nothing
#      attached, made or recorded, the container not running: a rw bind of
#      the second mount, of the root cgroup's cgroup.procs through it, a
#      recursive bind of the directory above the third mount (rw, and "ro"
#      without "rro"), and, without nsdelegate, a rw bind of the second
#      mount into a container with a cgroup namespace of its own;
#   3. runs, policed: a "ro" bind of the second mount, an "rro" recursive
#      bind of the directory above the third, a non-recursive bind of that
#      directory (the cgroup2 mount below it is not carried);
#   4. probe says whether the hierarchy has nsdelegate, as mountinfo does.
#
# Modules: `bundle.c`, `mountinfo.c`, `cg.c`, `cmd_probe.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
R=(-a sockopt-hook.io/policy=restricted)
LOG=$CT_TMP/hook.log
# shellcheck disable=SC2016 # $log is jq's
CFG=$(ct_config log '.log_file = $log | .log_format = "json"' --arg log "$LOG")

# super_opts MOUNT-POINT: the super options of that cgroup2 mount.
super_opts()
{
	awk -v m="$1" '$5 == m { for (i = 7; i < NF; i++) if ($i == "-") break;
		if ($(i + 1) == "cgroup2") { print $(i + 3); exit } }' /proc/self/mountinfo
}

OPTS=$(super_opts "$CT_CG2")
# Outside CT_TMP, which ct_cleanup removes with rm -rf: never through a
# cgroup2 mount left behind.
MNT=$(mktemp -d /tmp/sockopt-hook-cg2.XXXXXX) || tap_bail "mktemp failed"
SECOND=$MNT/second
ABOVE=$MNT/above
# jq's $second and $above, for the filters bind makes
MOUNTS=(--arg second "$SECOND" --arg above "$ABOVE")
mkdir -p "$SECOND" "$ABOVE/cg" || tap_bail "cannot make $MNT/*"
# shellcheck disable=SC2317 # called from the EXIT trap
reach_cleanup()
{
	umount "$SECOND" 2>/dev/null
	umount "$ABOVE/cg" 2>/dev/null
	rmdir "$ABOVE/cg" "$ABOVE" "$SECOND" "$MNT"
}
trap 'reach_cleanup; ct_cleanup' EXIT
# mount(8) would pass "rw" on to the file system, which refuses it.
if ! mount -t cgroup2 -o "${OPTS#rw}" none "$SECOND" ||
	! mount -t cgroup2 -o "${OPTS#rw}" none "$ABOVE/cg"; then
	tap_bail "cannot mount cgroup2 at $SECOND and $ABOVE/cg"
fi
tap_is "$(super_opts "$CT_CG2")" "$OPTS" \
	"the second and third mounts leave the hierarchy's options as they were ($OPTS)"
NSDELEGATE=no
[[ ,$OPTS, == *,nsdelegate,* ]] && NSDELEGATE=yes
tap_diag "cgroup2 super options: $OPTS (nsdelegate: $NSDELEGATE)"
BASE=$(ct_snapshot)

# bind SOURCE-VAR OPTIONS...: a jq filter adding a mount at /cg.
bind()
{
	local src=$1

	shift
	printf '.mounts += [{"destination": "/cg", "type": "bind", "source": $%s, "options": %s}]' \
		"$src" "$(jq -cn '$ARGS.positional' --args -- "$@")"
}
CGROUPNS='.linux.namespaces += [{"type": "cgroup"}]'

# ---- 1. The route is real ---------------------------------------------------

# control NAME FILTER: a container without hooks, given FILTER's mounts,
# moves itself into /cg/cgroup.procs (the hierarchy's root through the
# second mount) and prints its cgroup.
control()
{
	local name=$1 b

	# shellcheck disable=SC2016 # expanded by the container's shell
	b=$(ct_bundle "$name" -- sh -c 'echo $$ >/cg/cgroup.procs && grep ^0:: /proc/self/cgroup') &&
		ct_jq "$b" "del(.hooks) | $2" "${MOUNTS[@]}"
	ct_run runc "$(ct_id "$name")" "$b"
}
control ctl-bind "$(bind second rbind rw)"
tap_is "$CT_RC $(cat "$CT_OUT")" "0 0::/" \
	"control: a rw bind of the second mount lets the container move itself into the root cgroup" ||
	ct_diag_run
control ctl-ns "$(bind second rbind rw) | $CGROUPNS"
if [ "$NSDELEGATE" = no ]; then
	# Its cgroup namespace's root is its own cgroup: the root cgroup is
	# above it, shown as a path that climbs out.
	tap_like "$CT_RC $(cat "$CT_OUT")" '^0 0::/\.\.' \
		"control, own cgroup namespace, no nsdelegate: it still moves itself above its cgroup" ||
		ct_diag_run
else
	tap_is "$CT_RC" 1 "control, own cgroup namespace, nsdelegate: the kernel refuses the move" ||
		ct_diag_run
fi
ct_check_same "control: nothing left behind" "$BASE"

# ---- 2. Refused -----------------------------------------------------------------

# refused NAME FILTER REGEX: the restricted container given FILTER does
# not start; the hook says one line matching REGEX, its log says
# cgroup_writable; nothing attached, made or recorded, not running.
refused()
{
	local name=$1 filter=$2 re=$3 id b

	id=$(ct_id "$name")
	b=$(ct_bundle -c "$CFG" "${R[@]}" "$name" -- sockcheck set-mark 5) &&
		ct_jq "$b" "$filter" "${MOUNTS[@]}"
	: >"$LOG"
	ct_run runc "$id" "$b"
	[ "$CT_RC" != 0 ] && ! grep -q . "$CT_OUT"
	tap_ok $? "$name: the container does not start (exit $CT_RC)" || ct_diag_run
	tap_like "$(cat "$CT_ERR")" "oci-sockopt-hook: container $id: $re" "$name: the hook says why"
	tap_is "$(jq -r 'select(.event == "refused") | .reason' "$LOG" 2>/dev/null)" cgroup_writable \
		"$name: refused with reason cgroup_writable"
	! runc state "$id" >/dev/null 2>&1
	tap_ok $? "$name: runc has no such container"
	ct_check_same "$name: nothing attached, made or recorded" "$BASE"
}

refused second-rw "$(bind second rbind rw)" \
	"the bundle gives the container a writable cgroup mount \(mounts\[[0-9]+\], a bind of $SECOND \(cgroup2\) at /cg without .?\"ro.?\"\) and no cgroup namespace of its own"
# (runc makes the file it binds onto in the rootfs, which the other cases
# share: a path of its own.)
# shellcheck disable=SC2016 # $second is jq's
refused second-procs '.mounts += [{"destination": "/cg.procs", "type": "bind",
	"source": ($second + "/cgroup.procs"), "options": ["bind"]}]' \
	"the bundle gives the container a writable cgroup mount \(mounts\[[0-9]+\], a bind of $SECOND/cgroup.procs \(cgroup2\) at /cg.procs without"
refused above-rbind "$(bind above rbind rw)" \
	"the bundle gives the container a writable cgroup mount \(mounts\[[0-9]+\], a recursive bind of $ABOVE \(with the cgroup2 mount $ABOVE/cg in it\) at /cg without .?\"rro.?\"\)"
refused above-rbind-ro "$(bind above rbind ro)" \
	"the bundle gives the container a writable cgroup mount \(mounts\[[0-9]+\], a recursive bind of $ABOVE \(with the cgroup2 mount $ABOVE/cg in it\) at /cg without .?\"rro.?\""
if [ "$NSDELEGATE" = no ]; then
	refused second-ns "$(bind second rbind rw) | $CGROUPNS" \
		"the bundle gives the container a writable view of the cgroup2 tree \(mounts\[[0-9]+\], a bind of $SECOND \(cgroup2\) at /cg without .?\"ro.?\"\), and its cgroup namespace is no boundary: the cgroup2 hierarchy has no nsdelegate"
else
	tap_skip "second-ns: refused without nsdelegate" \
		"the hierarchy has nsdelegate, so a cgroup namespace is a boundary (test_cgroup_rules decides both ways)"
fi

# ---- 3. Runs, policed -----------------------------------------------------------

# runs NAME FILTER: the restricted container given FILTER runs, policed.
runs()
{
	local name=$1 b

	b=$(ct_bundle "${R[@]}" "$name" -- sockcheck set-mark 5) && ct_jq "$b" "$2" "${MOUNTS[@]}"
	ct_run runc "$(ct_id "$name")" "$b"
	tap_is "$CT_RC $(cat "$CT_OUT")" "0 setsockopt=EPERM" "$name: runs, policed" ||
		ct_diag_run
}
runs second-ro "$(bind second rbind ro)"
runs above-rro "$(bind above rbind rro)"
runs above-bind "$(bind above bind rw)"
ct_check_same "after the containers that ran: nothing left behind" "$BASE"

# ---- 4. probe -------------------------------------------------------------------

text=$("$HOOK" probe 2>&1)
tap_like "$text" $'\n'"cgroup2 nsdelegate: +$NSDELEGATE( |$)" \
	"probe: says whether the hierarchy has nsdelegate ($NSDELEGATE)" || tap_diag "$text"
want=false
[ "$NSDELEGATE" = yes ] && want=true
tap_is "$("$HOOK" probe --json 2>/dev/null | jq -c .cgroup2_nsdelegate)" "$want" \
	"probe --json: cgroup2_nsdelegate is $want"

tap_done
