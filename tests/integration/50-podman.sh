#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A real podman run through the installed hooks.d file: `make install`
# into a temporary PREFIX and SYSCONFDIR, then examples/podman-run.sh with
# --hooks-dir pointing there. With a sockopt-hook.io/ annotation the policy
# is in force inside the container; without one the hook does not run at
# all (its debug log stays untouched). Then `make uninstall` empties the
# tree. podman keeps its storage in the test's temp dir (--root,
# --runroot, --tmpdir, --network-config-dir) and uses no network, so
# nothing of the host's podman state is touched; the installed hooks.d
# file gets the test's own state dir (OCI_SOCKOPT_HOOK_STATE_DIR), so
# neither is the hook's. Last, a config with defaults.policy: `make
# install` then picks the hooks.d file that runs for every container, and
# an unannotated container gets the default policy; `runtime configure
# --runtime podman` writes that same file, and unconfigure removes it.
#
# Modules: `cmd_stages.c`, `wiring_hooksd.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/podman.sh
. "$here/../lib/podman.sh"

ct_require crun
tap_require_cmd podman conmon make
ct_init
ct_hugetlb_setup || {
	echo "Bail out! cannot mount the v1 hugetlb hierarchy"
	exit 1
}

PM=$CT_TMP/podman
PREFIX=$PM/usr
SYSCONF=$PM/etc
HOOKS_DIR=$PREFIX/share/containers/oci/hooks.d
LOG=$PM/hook.log
pm_setup "$PM" "$CT_PREFIX-podman" || exit 1

# shellcheck disable=SC2317 # run by the EXIT trap
podman_cleanup()
{
	pm_remove
	ct_cleanup
}
trap podman_cleanup EXIT

BASE=$(ct_snapshot progs state)

make_out=$(make -C "$CT_TOP" BUILD="$CT_BUILD" -o "$CT_BUILD/oci-sockopt-hook" \
	install PREFIX="$PREFIX" SYSCONFDIR="$SYSCONF" 2>&1)
tap_ok $? "make install PREFIX=\$tmp/usr SYSCONFDIR=\$tmp/etc" || tap_diag "$make_out"
hooksd=$HOOKS_DIR/oci-sockopt-hook.json
tap_is "$(jq -r .hook.path "$hooksd" 2>&1)" "$PREFIX/libexec/oci/hooks.d/oci-sockopt-hook" \
	"the installed hooks.d file runs the installed binary"
[[ $make_out == *"hooks.d file (annotations)"* ]]
tap_ok $? "the example config has no defaults: install picks the annotation-conditioned hooks.d file" ||
	tap_diag "$make_out"

# use_test_state_dir: the installed hooks.d file sends the hook's state to
# the test's own directory, never the machine's /run/oci-sockopt-hook.
use_test_state_dir()
{
	jq --arg env "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" \
		'.hook.env += [$env]' "$hooksd" >"$hooksd.new" && mv "$hooksd.new" "$hooksd"
}
use_test_state_dir
tap_ok $? "the installed hooks.d file gets OCI_SOCKOPT_HOOK_STATE_DIR=\$tmp/state"
[ -x "$PREFIX/libexec/oci/hooks.d/oci-sockopt-hook" ]
tap_ok $? "the binary is installed and executable"
jq --arg log "$LOG" '. + {log_file: $log, log_level: "debug"}' \
	"$CT_EXAMPLE_CONFIG" >"$SYSCONF/oci-sockopt-hook/config.json.new" &&
	mv "$SYSCONF/oci-sockopt-hook/config.json.new" "$SYSCONF/oci-sockopt-hook/config.json"
tap_ok $? "operator config with log_file and log_level debug"
: >"$LOG"

# run NAME POLICY [PODMAN-RUN-ARGS...] -- ARGS...: examples/podman-run.sh
# with SOCKOPT_POLICY=POLICY, and as podman's own hooks directories only
# PODMAN_HOOKS_DIRS (none unless set: the machine's are not the test's). Sets OUT, RC, CID and NEWLOG (what the hook
# logged during the run).
run()
{
	local name=$1 policy=$2 lines pre=() cidfile

	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		pre+=("$1")
		shift
	done
	shift
	cidfile=$PM/$name.cid
	lines=$(wc -l <"$LOG")
	OUT=$(SOCKOPT_POLICY=$policy HOOKS_DIR=$HOOKS_DIR PODMAN="${PODMAN[*]}" \
		PODMAN_HOOKS_DIRS=${PODMAN_HOOKS_DIRS-} \
		timeout -k 5 "$CT_TIMEOUT" "$CT_TOP/examples/podman-run.sh" \
		--cidfile "$cidfile" --cgroup-parent "/$CGPARENT" --net=none \
		--cap-add NET_ADMIN --ulimit "nofile=$NOFILE:$NOFILE" \
		--ulimit "nproc=$NPROC:$NPROC" "${pre[@]}" \
		--rootfs "$CT_ROOTFS" "$@" 2>"$PM/$name.err")
	RC=$?
	CID=$(cat "$cidfile" 2>/dev/null)
	[ -n "$CID" ] && CIDS+=("$CID")
	NEWLOG=$(sed -n "$((lines + 1)),\$p" "$LOG" | grep -v ': libbpf: ')
}


run restricted restricted -- /bin/sockcheck set-mark 5
tap_is "$OUT" "setsockopt=EPERM" \
	"podman, --annotation sockopt-hook.io/policy=restricted: SO_MARK gives EPERM" ||
	pm_diag restricted
[[ -n $CID && $NEWLOG == *"container $CID: attached 3 program(s)"*"policy 'restricted'"* ]]
tap_ok $? "the hook logged the attach for container ${CID:0:12}" || pm_diag restricted
[[ $NEWLOG == *"container $CID: released"* ]]
tap_ok $? "podman ran the poststop stage: the hook released the container" ||
	pm_diag restricted

# Another tool's hook in one of podman's own hooks directories (a stand-in
# for /usr/share/containers/oci/hooks.d): podman-run.sh must keep it, as a
# --hooks-dir replaces podman's directories.
OTHER=$PM/other-hooks
mkdir -p "$OTHER" &&
	jq -n --arg m "$PM/other-ran" '{version: "1.0.0",
		hook: {path: "/bin/sh", args: ["sh", "-c", ("touch " + $m)]},
		when: {always: true}, stages: ["prestart"]}' >"$OTHER/other.json"
PODMAN_HOOKS_DIRS=$OTHER run kept restricted -- /bin/sockcheck set-mark 5
tap_is "$OUT $([ -e "$PM/other-ran" ] && echo other-ran)" "setsockopt=EPERM other-ran" \
	"podman-run.sh keeps podman's own hooks directories: the policy applies and the other hook ran" ||
	pm_diag kept

run none "" -- /bin/sockcheck set-mark 5
tap_is "$OUT" "setsockopt=ok" "podman, no annotation: SO_MARK works" || pm_diag none
tap_is "$NEWLOG" "" "podman, no annotation: the hook did not run (no log line at all)"

run other "" --annotation example.com/policy=restricted -- /bin/sockcheck set-mark 5
tap_is "$OUT:$NEWLOG" "setsockopt=ok:" \
	"podman, an unrelated annotation: the hook does not run" || pm_diag other

# Each key alone must trigger the hooks.d file (all of when.annotations
# must match, so one regex covers both keys).
run perctr "" --annotation sockopt-hook.io/policy.web=restricted \
	--annotation io.kubernetes.container.name=web -- /bin/sockcheck set-mark 5
tap_is "$OUT" "setsockopt=EPERM" \
	"podman, only a per-container key (policy.web, container web): SO_MARK gives EPERM" ||
	pm_diag perctr

run bypassoff "" --annotation sockopt-hook.io/bypass-prot-mem=false -- \
	/bin/sockcheck set-mark 5
[ "$OUT" = "setsockopt=ok" ] && [[ $NEWLOG == *"container $CID: "* ]]
tap_ok $? "podman, only bypass-prot-mem=false: the hook runs, finds nothing to attach" ||
	pm_diag bypassoff

run refused nope -- /bin/sockcheck set-mark 5
[ "$RC" != 0 ] && [ -z "$OUT" ]
tap_ok $? "podman, policy 'nope': the container does not start (exit $RC)" ||
	pm_diag refused
tap_like "$NEWLOG" "error: container $CID: annotation sockopt-hook\.io/policy='nope' refused: .*allow_policies" \
	"podman, policy 'nope': the log file holds the reason" || pm_diag refused
tap_diag "podman said: $(cat "$PM/refused.err")"

# The hook's record lives in the test's state dir while the container runs.
run detached restricted -d -- /bin/sleep 60
[ "$RC" = 0 ] && [ -n "$CID" ] && [ -f "$CT_STATE_DIR/$CID.json" ]
tap_ok $? "podman -d: the hook's record is in the test's state dir" || {
	pm_diag detached
	tap_diag "$(ls -la "$CT_STATE_DIR")"
}
tap_is "$(ct_default_state_ours "${CID:-none}")" "" \
	"podman -d: nothing of the container's in $CT_DEFAULT_STATE_DIR"
timeout 30 "${PODMAN[@]}" rm -f -t 0 "$CID" >/dev/null 2>&1
# records: the records in the test's state directory
records() { find "$CT_STATE_DIR" -mindepth 1 -maxdepth 1 -name '*.json' -printf '%f\n'; }
for _ in $(seq 1 50); do
	[ -z "$(records)" ] && break
	sleep 0.1
done
tap_is "$(records)" "" "podman rm: poststop removed the record"

# The operator's defaults reach a container without annotations once the
# config has them: install picks the "always" hooks.d file.
conf=$SYSCONF/oci-sockopt-hook/config.json
jq '.defaults.policy = "restricted"' "$conf" >"$conf.new" && mv "$conf.new" "$conf"
make_out=$(make -C "$CT_TOP" BUILD="$CT_BUILD" -o "$CT_BUILD/oci-sockopt-hook" \
	install PREFIX="$PREFIX" SYSCONFDIR="$SYSCONF" 2>&1)
[[ $make_out == *"hooks.d file (always)"* ]] &&
	[ "$(jq -c .when "$hooksd")" = '{"always":true}' ]
tap_ok $? "make install again, config with defaults.policy: the hooks.d file runs for every container" ||
	tap_diag "$make_out" "$(cat "$hooksd")"
use_test_state_dir
run defaults "" -- /bin/sockcheck set-mark 5
tap_is "$OUT" "setsockopt=EPERM" \
	"podman, no annotation, defaults.policy restricted: SO_MARK gives EPERM" ||
	pm_diag defaults

# `runtime configure --runtime podman` (the docs' podman install; here
# into a hooks directory of the test's): the same file as make install's,
# written by the installed binary itself; podman runs the hook through it;
# `runtime unconfigure` takes it out.
RC_DIR=$PM/configured-hooks
installed_hook=$PREFIX/libexec/oci/hooks.d/oci-sockopt-hook
out=$("$installed_hook" --config "$conf" runtime configure --runtime podman \
	--hooks-dir "$RC_DIR" --hook-env "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" 2>&1)
tap_like "$?:$out" "^0:$RC_DIR/oci-sockopt-hook.json: created" \
	"runtime configure --runtime podman writes the hooks.d file" || tap_diag "$out"
tap_is "$(jq -S -c . "$RC_DIR/oci-sockopt-hook.json")" "$(jq -S -c . "$hooksd")" \
	"it is the file make install chose (always: the config has defaults)"
saved=$HOOKS_DIR HOOKS_DIR=$RC_DIR
run configured "" -- /bin/sockcheck set-mark 5
tap_is "$OUT" "setsockopt=EPERM" "podman through it: the default policy applies" ||
	pm_diag configured
out=$("$installed_hook" --config "$conf" runtime unconfigure --runtime podman --hooks-dir "$RC_DIR" 2>&1)
tap_like "$?:$out" "^0:$RC_DIR/oci-sockopt-hook.json: removed" "runtime unconfigure removes it"
run unconfigured "" -- /bin/sockcheck set-mark 5
tap_is "$OUT:$NEWLOG" "setsockopt=ok:" "then podman runs no hook" || pm_diag unconfigured
HOOKS_DIR=$saved
rmdir "$RC_DIR"

left=$(timeout 30 "${PODMAN[@]}" ps -a -q 2>&1)
tap_is "$left" "" "podman --rm left no container in its store"
ct_check_same "BPF programs and hook state are as before" "$BASE" progs state

make_out=$(make -C "$CT_TOP" BUILD="$CT_BUILD" uninstall PREFIX="$PREFIX" \
	SYSCONFDIR="$SYSCONF" 2>&1)
tap_ok $? "make uninstall" || tap_diag "$make_out"
tap_is "$(cd "$PM" && find usr etc -type f | sort)" "etc/oci-sockopt-hook/config.json" \
	"uninstall keeps only the operator config, which the test modified"
[[ $make_out == *"keeping modified"* ]]
tap_ok $? "uninstall says it keeps the modified config" || tap_diag "$make_out"
rm -f "$SYSCONF/oci-sockopt-hook/config.json"
rmdir "$SYSCONF/oci-sockopt-hook"
tap_is "$(find "$PREFIX" "$SYSCONF" -mindepth 1)" "" \
	"after uninstall (and removing the config) the PREFIX and SYSCONFDIR trees are empty"

tap_done
