#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A changed operator config reaches running containers
# with `apply`, no restart. Under runc, crun, and crun without a cgroup
# manager (the container in a cgroup the hook made), on a BPF filesystem
# of the test's own:
#  - audit -> enforce while the container calls setsockopt(SO_MARK) in a
#    loop: its calls pass, then are refused, the answer changes once and
#    no call passes after one was refused; its next call is refused too;
#  - enforce -> a changed clamp: SO_RCVBUF reads back the new bound;
#  - a failure while replacing (the getsockopt attach refused, through
#    tests/progs/faultshim.c): exit 1, the container keeps its programs,
#    its record and the old clamp;
#  - its policy no longer allowed: listed as left, exit 1, programs kept.
# Under runc also a policy removed from the config (left, with its
# reason, for a container that got it from an annotation and one that
# got it from the defaults), and `status` and `apply --dry-run`; and a
# node tightened under three containers (defaults.policy restricted, no
# bypass-prot-mem or audit-mode annotations, only restricted allowed):
# one whose annotations ask for what the defaults gave
# (bypass-prot-mem "false", mode "enforce"), one in audit mode by
# annotation, one on a policy no longer allowed each get restricted
# enforced, never their old programs (other program ids on the cgroup,
# SO_MARK and SO_PRIORITY refused), one line each saying so, the dry run
# first saying which and changing nothing; a new container with those
# default-asking annotations starts under the tightened config.
# After each runtime, nothing is left behind (the reaper's cgroup too).
#
# Modules: `apply.c`, `cmd_apply.c`, `policy.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc crun
SHIM=$CT_BUILD/tests/faultshim.so
[ -f "$SHIM" ] || tap_skip_all "$SHIM not built (make test-progs)"
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
ct_mount_bpffs || tap_bail "cannot mount a BPF filesystem in $CT_TMP"

# Named by annotation while in audit mode: the operator allows it.
audit=$(ct_config audit '.policies.restricted.mode = "audit" |
	.policies.restricted.audit_by_annotation = true')
enforce=$(ct_config enforce '.')
clamp=$(ct_config clamp '.policies.restricted.setsockopt |=
	map(if .option == "SO_RCVBUF" then .max = 32768 else . end)')
clamp2=$(ct_config clamp2 '.policies.restricted.setsockopt |=
	map(if .option == "SO_RCVBUF" then .max = 16384 else . end) |
	.policies.restricted.getsockopt += [{"level": "SOL_SOCKET", "option": "SO_PRIORITY", "action": "deny"}]')
notallowed=$(ct_config notallowed '.policies.restricted.setsockopt |=
	map(if .option == "SO_RCVBUF" then .max = 32768 else . end) |
	.annotations.allow_policies -= ["restricted"]')

# reset_pins: the pins of the audit config alone (and the generic ones),
# as before each part: the snapshots count pinned programs too.
reset_pins()
{
	"$HOOK" --config "$audit" preload >/dev/null 2>&1
}

# apply CONFIG [ENV...]: `apply` with that config; sets rc and out.
apply()
{
	local cfg=$1

	shift
	out=$(env "$@" "$HOOK" --config "$cfg" apply 2>&1)
	rc=$?
}

# in_cg ARGS...: sockcheck ARGS in the container's cgroup, from the host
# (exec would not join a cgroup the hook made).
in_cg()
{
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$CG" "$SOCKCHECK" "$@"
}

# loop_val KEY: what the container's mark loop printed for KEY.
loop_val()
{
	sed -n "s/^mark_loop_$1=//p" "$OUT" | head -n 1
}

# loop_num KEY: loop_val, 0 when it printed none
loop_num()
{
	local v

	v=$(loop_val "$1")
	echo "${v:-0}"
}

# cg_ids: the ids of our programs on the container's cgroup, sorted.
cg_ids()
{
	timeout 20 bpftool -j cgroup show "$CG" 2>/dev/null |
		jq '.[]? | select(.name | startswith("sh_")) | .id' | sort -n | xargs
}

# switch RT: audit -> enforce under a loop of setsockopt(SO_MARK).
switch()
{
	local rt=$1 id bundle

	id=$(ct_id "$rt")
	bundle=$(ct_bundle -r "$rt" -c "$audit" -a sockopt-hook.io/policy=restricted "$rt" -- \
		/bin/sh -c 'sockcheck mark-loop 6; sleep 120')
	ct_start_ok "$rt: a restricted container in audit mode starts" "$rt" "$id" \
		"$bundle" '^mark_loop=ready' || return 1
	CG=$CT_CG OUT=$CT_OUT
	tap_is "$(ct_record "$id" | jq -r .mode)" audit "$rt: its record says audit mode"
	sleep 1
	"$HOOK" --config "$enforce" preload >/dev/null 2>&1
	apply "$enforce"
	tap_is "$rc" 0 "$rt: apply of the enforce config succeeds"
	tap_like "$out" "^updated +$id: mode audit -> enforce; sock_create replaced; setsockopt replaced; getsockopt replaced \(policy [0-9a-f]{16} -> [0-9a-f]{16}\)
apply: 1 updated, 0 unchanged, 0 left as it was, 0 failed, 0 gone" \
		"$rt: it says what changed, one line, and the summary"
	ct_wait_for "$OUT" '^mark_loop_order=' 100
	tap_ok $((!($(loop_num pass) > 0 && $(loop_num eperm) > 0))) \
		"$rt: the loop's calls passed ($(loop_val pass)), then were refused ($(loop_val eperm))"
	tap_is "$(loop_val changes) $(loop_val other)" "1 0" \
		"$rt: the answer changed once, and every call either passed or got EPERM"
	tap_is "$(loop_val order)" ok "$rt: no call passed after one was refused"
	tap_is "$(in_cg set-mark 1)" "setsockopt=EPERM" "$rt: its next setsockopt(SO_MARK) gets EPERM, no restart"
	tap_is "$(ct_record "$id" | jq -r .mode)" enforce "$rt: its record says enforce mode"
}

clamps()
{
	local rt=$1 ids

	tap_is "$(in_cg rcvbuf 65536)" "rcvbuf=131072" "$rt: enforce: SO_RCVBUF 64 KiB is within 65536"
	"$HOOK" --config "$clamp" preload >/dev/null 2>&1
	apply "$clamp"
	tap_like "$rc $out" "^0 updated +.*: setsockopt replaced " "$rt: apply of a changed clamp replaces setsockopt only"
	tap_is "$(in_cg rcvbuf 65536)" "rcvbuf=65536" "$rt: SO_RCVBUF 64 KiB is clamped to 32768 now"
	ids=$(cg_ids)
	rec=$(jq -c .programs "$CT_STATE_DIR/$(ct_id "$rt").json")
	"$HOOK" --config "$clamp2" preload >/dev/null 2>&1
	HOOK=$(ct_dynamic_hook) apply "$clamp2" LD_PRELOAD="$SHIM" FAULTSHIM=attach:getsockopt:EPERM
	tap_is "$rc" 1 "$rt: apply whose getsockopt swap is refused exits 1"
	tap_like "$out" "^failed +.*: cannot replace its getsockopt program: Operation not permitted; it keeps its programs \(policy [0-9a-f]{16}\)
apply: 0 updated, 0 unchanged, 0 left as it was, 1 failed" "$rt: with one line saying so"
	tap_is "$(cg_ids)" "$ids" "$rt: its programs are the ones it had (setsockopt swapped back)"
	tap_is "$(jq -c .programs "$CT_STATE_DIR/$(ct_id "$rt").json")" "$rec" "$rt: its record is as it was"
	tap_is "$(in_cg rcvbuf 65536)" "rcvbuf=65536" "$rt: and the clamp is still 32768"
	apply "$notallowed"
	tap_is "$rc" 1 "$rt: apply of a config that no longer allows its policy exits 1"
	tap_like "$out" "^left +.*: annotation sockopt-hook.io/policy='restricted' refused: 'restricted' is not in annotations.allow_policies of $notallowed; it keeps its programs \(policy [0-9a-f]{16}\) until it restarts
apply: 0 updated, 0 unchanged, 1 left as it was" "$rt: it is listed as left, with the reason"
	tap_is "$(cg_ids)" "$ids" "$rt: and keeps its programs"
}

reset_pins
for rt in runc crun crun-nocg; do
	before=$(ct_snapshot)
	switch "$rt" && clamps "$rt"
	ct_delete "$rt" "$(ct_id "$rt")"
	reset_pins
	ct_check_same "$rt: after delete, BPF programs, hook state and cgroups are as before" \
		"$before"
done

# ---- a policy removed, status, the dry run --------------------------------
before=$(ct_snapshot)
defaults=$(ct_config defaults '.defaults.policy = "restricted"')
defclamp=$(ct_config defclamp '.defaults.policy = "restricted" |
	.policies.restricted.setsockopt |=
	map(if .option == "SO_RCVBUF" then .max = 32768 else . end)')
removed=$(ct_config removed '.defaults.policy = "" | del(.policies.restricted) |
	.annotations.allow_policies -= ["restricted"]')
"$HOOK" --config "$defaults" preload >/dev/null 2>&1
bundle=$(ct_bundle -c "$defaults" -a sockopt-hook.io/policy=restricted named -- /bin/sh -c 'sleep 120')
ct_start_ok "named: a container that asked for restricted starts" runc "$(ct_id named)" "$bundle"
bundle=$(ct_bundle -c "$defaults" bydefault -- /bin/sh -c 'sleep 120')
ct_start_ok "bydefault: a container that got restricted from the defaults starts" runc \
	"$(ct_id bydefault)" "$bundle"
CG=$CT_CG
ids=$(cg_ids)
tap_like "$("$HOOK" --config "$defaults" status "$(ct_id bydefault)")" \
	"policy hash: [0-9a-f]{16}, as the config has it" "status: its policy is the config's"
tap_like "$("$HOOK" --config "$defclamp" status "$(ct_id bydefault)")" \
	"policy hash: [0-9a-f]{16}; the config's is [0-9a-f]{16} \(.oci-sockopt-hook apply. brings it\)" \
	"status against a changed config: the two hashes, and what brings it"
tap_is "$("$HOOK" --config "$defclamp" --json status "$(ct_id bydefault)" |
	jq -c '.[0].enforcement.policy_hash | [.current, .generic, (.hash == .config_hash)]')" \
	"[false,false,false]" "status --json: not current"
out=$("$HOOK" --config "$removed" apply --dry-run --json 2>&1)
tap_is "$(jq -c '[.dry_run, .left, .updated, ([.containers[].reason] | sort)]' <<<"$out")" \
	'[true,2,0,["policy_removed","policy_unknown"]]' \
	"apply --dry-run --json: both would be left, the reasons told apart"
apply "$removed"
tap_is "$rc" 1 "apply of a config without the policy exits 1"
tap_like "$out" "left +$(ct_id bydefault): $removed gives it no policy any more \(it started with policy 'restricted' from defaults.policy\); it keeps its programs" \
	"the container that got it from the defaults: left, the config gives it none"
tap_like "$out" "left +$(ct_id named): annotation sockopt-hook.io/policy='restricted' refused" \
	"the container that asked for it: left, refused"
tap_is "$(cg_ids)" "$ids" "both keep their programs"
tap_like "$("$HOOK" --config "$removed" status "$(ct_id bydefault)")" \
	"policy hash: [0-9a-f]{16}; the config gives it none now: .* \(it keeps its programs until it restarts\)" \
	"status says the config gives it none now"
ct_delete runc "$(ct_id named)"
ct_delete runc "$(ct_id bydefault)"
reset_pins
ct_check_same "after delete, BPF programs, hook state and cgroups are as before" \
	"$before"

# ---- a node tightened: never weaker than prestart would be now ----------------
before=$(ct_snapshot)
# shellcheck disable=SC2016 # jq program
loose=$(ct_config loose '.defaults.policy = "setonly" |
	.annotations.allow_audit_mode = true |
	.policies.lax = {"setsockopt": [{"level": "SOL_SOCKET", "option": "SO_PRIORITY", "action": "deny"}]} |
	.annotations.allow_policies += ["lax"]')
tight=$(ct_config tight '.defaults.policy = "restricted" |
	.policies.lax = {"setsockopt": [{"level": "SOL_SOCKET", "option": "SO_PRIORITY", "action": "deny"}]} |
	.annotations.allow_bypass_prot_mem = false |
	.annotations.allow_audit_mode = false |
	.annotations.allow_policies = ["restricted"]')
"$HOOK" --config "$loose" preload >/dev/null 2>&1
declare -A TCG TIDS
# tight_start NAME ANNOTATION...: a sleeping container under loose.
tight_start()
{
	local name=$1 args=() b

	shift
	for a in "$@"; do args+=(-a "$a"); done
	b=$(ct_bundle -c "$loose" "${args[@]}" "$name" -- /bin/sh -c 'sleep 120')
	ct_start_ok "$name: starts under the loose config" runc "$(ct_id "$name")" "$b"
	TCG[$name]=$CT_CG
	TIDS[$name]=$(CG=$CT_CG cg_ids)
}
tight_start asksdefault sockopt-hook.io/bypass-prot-mem=false sockopt-hook.io/mode=enforce
tight_start auditing sockopt-hook.io/policy=restricted sockopt-hook.io/mode=audit
tight_start laxpol sockopt-hook.io/policy=lax
tap_is "$(for n in asksdefault auditing laxpol; do ct_record "$(ct_id "$n")" | jq -r '"\(.policy)/\(.mode)"'; done | xargs)" \
	"setonly/enforce restricted/audit lax/enforce" "their records: setonly, restricted in audit mode, lax"
out=$("$HOOK" --config "$tight" apply --dry-run 2>&1)
rc=$?
tap_is "$rc $(grep -c '^would update' <<<"$out")" "0 3" "apply --dry-run of the tightened config: all three would be updated" ||
	tap_diag "$out"
tap_like "$(grep "$(ct_id auditing)" <<<"$out")" \
	"^would update +$(ct_id auditing): annotation sockopt-hook.io/mode='audit' refused: annotations.allow_audit_mode is false in $tight \(audit_mode_not_allowed\): the node's defaults instead; mode audit -> enforce; " \
	"the dry run says which annotation is refused, and that the defaults come instead" || tap_diag "$out"
tap_like "$(grep "$(ct_id laxpol)" <<<"$out")" \
	"^would update +$(ct_id laxpol): annotation sockopt-hook.io/policy='lax' refused: .*\(policy_not_allowed\): the node's defaults instead; policy 'lax' -> 'restricted'" \
	"and for the policy no longer allowed" || tap_diag "$out"
tap_like "$(grep "$(ct_id asksdefault)" <<<"$out")" \
	"^would update +$(ct_id asksdefault): policy 'setonly' -> 'restricted'; " \
	"annotations that ask for the defaults are no request: the new defaults, nothing refused" || tap_diag "$out"
same=0
for n in asksdefault auditing laxpol; do
	[ "$(CG=${TCG[$n]} cg_ids)" = "${TIDS[$n]}" ] || same=1
done
tap_ok "$same" "the dry run changes no program"
"$HOOK" --config "$tight" preload >/dev/null 2>&1
apply "$tight"
tap_is "$rc $(grep -c '^updated' <<<"$out")" "0 3" "apply of the tightened config: all three updated, none left" ||
	tap_diag "$out"
tap_is "$(grep -c "the node's defaults instead" <<<"$out")" 2 "one line each for the two refused, saying so"
for n in asksdefault auditing laxpol; do
	CG=${TCG[$n]}
	tap_ok "$([ -n "$(cg_ids)" ] && [ "$(cg_ids)" != "${TIDS[$n]}" ]; echo $?)" \
		"$n: other programs on its cgroup (${TIDS[$n]} -> $(cg_ids))"
	tap_is "$(ct_record "$(ct_id "$n")" | jq -r '"\(.policy)/\(.mode)"') $(in_cg set-mark 1) $(in_cg setopt dgram 1 12 1)" \
		"restricted/enforce setsockopt=EPERM setopt_1_12=EPERM" \
		"$n: restricted, enforced: SO_MARK and SO_PRIORITY refused, no restart"
done
b=$(ct_bundle -c "$tight" -a sockopt-hook.io/bypass-prot-mem=false \
	-a sockopt-hook.io/mode=enforce newdefault -- /bin/sh -c 'sockcheck set-mark 1')
ct_run runc "$(ct_id newdefault)" "$b"
tap_is "$CT_RC $(sed -n 's/^setsockopt=//p' "$CT_OUT")" "0 EPERM" \
	"prestart under the tightened config: bypass-prot-mem false and mode enforce ask for nothing, the container starts on restricted" ||
	tap_diag "$(cat "$CT_ERR")"
for n in asksdefault auditing laxpol; do ct_delete runc "$(ct_id "$n")"; done
reset_pins
ct_check_same "after delete, BPF programs, hook state and cgroups are as before" \
	"$before"
tap_done
