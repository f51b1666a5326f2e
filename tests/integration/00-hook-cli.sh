#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The hook called directly, without a runtime: each kind of bad input gives
# exactly one line on stderr ("oci-sockopt-hook: ..."), a non-zero exit and
# nothing attached. A valid call on the same process is the control; and
# poststop on a cgroup a runtime leaves in place (empty) detaches the
# container's programs from it.
#
# Modules: `main.c`, `cmd_stages.c`, `oci.c`, `strictjson.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_require
ct_init
BASE=$(ct_snapshot)

# A process of our own in a cgroup of our own stands in for a container.
CG=$CT_CG2/$(ct_id cli)
ct_sleeper "$CG" || tap_bail "cannot put a process in $CG"
PID=$CT_SLEEPER

GOOD=$(ct_bundle -a sockopt-hook.io/policy=restricted good -- true)

# state BUNDLE [ANNOTATIONS-JSON]: runc-style OCI state for our process.
state()
{
	local a=${2:-'{"sockopt-hook.io/policy": "restricted"}'}

	jq -cn --arg id "$(ct_id cli)" --argjson pid "$PID" --arg b "$1" \
		--argjson a "$a" \
		'{ociVersion: "1.0.2", id: $id, status: "creating", pid: $pid,
		  bundle: $b, annotations: $a}'
}

# bad NAME STDIN [HOOK-ARGS...]: runs the prestart hook and checks that it
# refuses with one line and leaves nothing behind.
bad()
{
	local name=$1 input=$2 before rc err lines

	shift 2
	before=$(ct_snapshot)
	err=$(printf '%s' "$input" |
		OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR timeout 30 "$HOOK" "$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" != 0 ]
	tap_ok $? "$name: non-zero exit (got $rc)"
	lines=$(printf '%s\n' "$err" | grep -c .)
	[ "$lines" = 1 ] && [[ $err == "oci-sockopt-hook: "* ]]
	tap_ok $? "$name: exactly one line on stderr, starting 'oci-sockopt-hook: '" ||
		tap_diag "stderr ($lines lines):" "$err"
	[ "$lines" = 1 ] && tap_diag "stderr: $err"
	tap_is "$(ct_our_progs "$CG" effective)" "" "$name: nothing attached to the cgroup"
	ct_check_same "$name: BPF program count, hook state and cgroups unchanged" "$before"
}

CFG=(--config "$CT_EXAMPLE_CONFIG")

bad "malformed stdin" "this is not json" "${CFG[@]}" prestart
bad "truncated state JSON" '{"ociVersion": "1.0.2", "id": ' "${CFG[@]}" prestart
bad "empty stdin" "" "${CFG[@]}" prestart
bad "missing bundle" "$(state "$CT_TMP/no-such-bundle")" "${CFG[@]}" prestart

B=$CT_TMP/bundles/malformed
mkdir -p "$B"
echo '{"ociVersion": "1.0.2", "annotations": {' >"$B/config.json"
bad "malformed bundle config.json" "$(state "$B")" "${CFG[@]}" prestart

B=$(ct_bundle -a sockopt-hook.io/bypass-prot-mem=maybe maybe -- true)
bad 'bad annotation value (bypass-prot-mem: "maybe")' \
	"$(state "$B" '{"sockopt-hook.io/bypass-prot-mem":"maybe"}')" "${CFG[@]}" prestart

echo '{"defaults": {"bypass_prot_mem": false, "policy": ""}, "policies": {' \
	>"$CT_TMP/configs/malformed.json"
bad "malformed operator config" "$(state "$GOOD")" \
	--config "$CT_TMP/configs/malformed.json" prestart

CFGX=$(ct_config bad-action '.policies.restricted.setsockopt[0].action = "explode"')
bad "operator config with an unknown action" "$(state "$GOOD")" --config "$CFGX" prestart

CFGX=$(ct_config bad-option '.policies.restricted.setsockopt[0].option = "SO_NO_SUCH_OPTION"')
bad "operator config with an unknown option name" "$(state "$GOOD")" --config "$CFGX" prestart

bad "missing operator config" "$(state "$GOOD")" --config "$CT_TMP/configs/none.json" prestart
bad "unknown stage" "$(state "$GOOD")" "${CFG[@]}" prestop

# poststop never fails a container's teardown, whatever it is given.
quiet_poststop()
{
	local name=$1 input=$2 rc before

	shift 2
	before=$(ct_snapshot)
	printf '%s' "$input" | OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR \
		timeout 30 "$HOOK" "$@" poststop >/dev/null 2>&1
	rc=$?
	tap_is "$rc" 0 "poststop, $name: exit 0"
	ct_check_same "poststop, $name: BPF programs, hook state and cgroups unchanged" "$before"
}

quiet_poststop "malformed stdin" "this is not json" "${CFG[@]}"
quiet_poststop "unknown container" \
	'{"ociVersion": "1.0.2", "id": "no-such-container", "status": "stopped", "bundle": "/nonexistent"}' \
	"${CFG[@]}"
quiet_poststop "missing operator config" "$(state "$GOOD")" --config "$CT_TMP/configs/none.json"

# The control: the same process and bundle with valid input attach.
err=$(state "$GOOD" | OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR \
	timeout 30 "$HOOK" "${CFG[@]}" prestart 2>&1 >/dev/null)
tap_ok $? "control: valid input is accepted" || tap_diag "stderr:" "$err"
tap_is "$(ct_our_progs "$CG")" "cgroup_getsockopt sh_getsockopt
cgroup_inet_sock_create sh_sock_create
cgroup_setsockopt sh_setsockopt" "control: restricted programs attached to the process's cgroup"

# Tear down like runc: the process dies, the cgroup goes, then poststop.
ct_kill "$PID"
rmdir "$CG"
err=$(jq -cn --arg id "$(ct_id cli)" --arg b "$GOOD" \
	'{ociVersion: "1.0.2", id: $id, status: "stopped", bundle: $b,
	  annotations: {"sockopt-hook.io/policy": "restricted"}}' |
	OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR timeout 30 "$HOOK" "${CFG[@]}" poststop 2>&1)
tap_ok $? "control: poststop after the cgroup is gone succeeds" || tap_diag "stderr:" "$err"
ct_check_same "control: after teardown, BPF programs, hook state and cgroups are as before" "$BASE"

# Tear down like a runtime that leaves the cgroup (an empty one stays):
# poststop detaches the container's programs itself.
KEEP=$CT_CG2/$(ct_id keep)
ct_sleeper "$KEEP" || tap_bail "cannot put a process in $KEEP"
keep_state()
{
	jq -cn --arg id "$(ct_id keep)" --arg s "$1" --argjson pid "${2:-0}" --arg b "$GOOD" \
		'{ociVersion: "1.0.2", id: $id, status: $s, pid: $pid, bundle: $b,
		  annotations: {"sockopt-hook.io/policy": "restricted"}}'
}
err=$(keep_state creating "$CT_SLEEPER" | OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR \
	timeout 30 "$HOOK" "${CFG[@]}" prestart 2>&1 >/dev/null)
tap_is "$?:$(ct_our_progs "$KEEP" | wc -l)" "0:3" "a cgroup the runtime keeps: restricted's 3 programs attached" ||
	tap_diag "stderr:" "$err"
ct_kill "$CT_SLEEPER"
err=$(keep_state stopped | OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR \
	timeout 30 "$HOOK" "${CFG[@]}" poststop 2>&1)
tap_is "$?:$([ -d "$KEEP" ] && echo kept):$(ct_our_progs "$KEEP")" "0:kept:" \
	"poststop detaches them from the empty cgroup that stays" || tap_diag "stderr:" "$err"
rmdir "$KEEP"
ct_check_same "and then, BPF programs, hook state and cgroups are as before" "$BASE"

tap_done
