#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Audit mode: a policy with "mode": "audit" (or the annotation
# sockopt-hook.io/mode when annotations.allow_audit_mode allows it) runs the
# same programs but applies nothing. Under runc, the restricted policy in
# audit mode: setsockopt(SO_MARK) succeeds and getsockopt reads the value
# back, SO_RCVBUF above max is not clamped, TCP_CONGESTION is not forced,
# denied socket families and types are created, no mark is stamped; status
# (text and --json) shows the mode and would-have counters equal to the
# calls made. An allow-list policy in audit mode counts its misses per
# option. The same policy in enforce mode still denies (control). The
# per-container annotation works when allowed, and is refused, in one line
# with the reason audit_mode_not_allowed, when not. An audit
# policy named by an annotation is refused the same way unless
# allow_audit_mode or the policy's audit_by_annotation says so (validate
# warns about it); the default policy still holds. Nothing is left behind.
#
# Modules: `counters.c`, `policy.c`, `load.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/refuse.sh
. "$here/../lib/refuse.sh"

ct_setup runc
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
BEFORE=$(ct_snapshot)
PORT=4000
LOG=$CT_TMP/hook.log

# Named by an annotation, an audit policy needs the operator's word: here
# audit_by_annotation.
AUDIT=$(ct_config audit '.policies.restricted.mode = "audit" |
	.policies.restricted.audit_by_annotation = true |
	.policies.allowlist = {"default": "deny", "mode": "audit",
		"audit_by_annotation": true,
		"setsockopt": [{"level": "SOL_SOCKET", "option": "SO_RCVBUF",
				"action": "allow"}]} |
	.annotations.allow_policies += ["allowlist"]')
# README's rollout step 4 as an operator may read it: restricted for every
# container, the policy on trial (web) in audit mode and in allow_policies,
# neither allow_audit_mode nor audit_by_annotation.
# shellcheck disable=SC2016 # $log is jq's
BACKDOOR=$(ct_config backdoor '.defaults.policy = "restricted" |
	.policies.web = {"mode": "audit", "setsockopt": [{"level": "SOL_SOCKET",
		"option": "SO_KEEPALIVE", "action": "allow"}]} |
	.annotations.allow_policies += ["web"] |
	.log_file = $log | .log_format = "json"' --arg log "$LOG")
ANN=$(ct_config ann '.annotations.allow_audit_mode = true')
# shellcheck disable=SC2016 # $log is jq's
NOANN=$(ct_config noann '.log_file = $log | .log_format = "json"' \
	--arg log "$LOG")

# validate warns about both: valid, but applying nothing.
err=$("$HOOK" validate "$AUDIT" 2>&1 >/dev/null)
tap_like "$err" "warning: policies\.restricted\.mode is 'audit': its programs count what they would deny, clamp or force and apply none of it" \
	"validate warns that an audit mode policy applies nothing" || tap_diag "$err"
err=$("$HOOK" validate "$ANN" 2>&1 >/dev/null)
tap_like "$err" "warning: annotations\.allow_audit_mode is true: any workload can lift its policy" \
	"validate warns that allow_audit_mode lets workloads lift their policy" || tap_diag "$err"

out_val()
{
	sed -n "s/^$1=//p" "$CT_OUT" | head -n 1
}

# The restricted checks, then a listener on PORT.
WORKLOAD="sockcheck mark-rt 5; sockcheck set-mark 5; sockcheck get-mark;
sockcheck rcvbuf 4194304; sockcheck cc cubic; sockcheck socket inet6 stream;
sockcheck socket inet6 dgram; sockcheck socket inet raw;
sockcheck listen $PORT 600"

# start NAME CONFIG ANNOTATION...: the workload in a detached container.
start()
{
	local name=$1 cfg=$2

	shift 2
	ct_up -c "$cfg" --wait '^listen=' "$@" "$name" -- /bin/sh -c "$WORKLOAD" ||
		return 1
	CG=$CT_CG
}

# would JSON PROGRAM ACTION LEVEL OPTION: the would-have count, or none.
would()
{
	jq -r --arg p "$2" --arg a "$3" --arg l "$4" --arg o "$5" \
		'[.[0].would_have[]? | select(.program == $p and .action == $a
		   and .level == $l and .option == $o) | .count] |
		 if length == 0 then "none" else (add | tostring) end' <<<"$1"
}

# audit_checks NAME: the workload ran untouched.
audit_checks()
{
	local n=$1 rcv

	tap_is "$(out_val markrt)" 5 "$n: setsockopt(SO_MARK, 5) works and getsockopt reads 5 back"
	tap_is "$(out_val setsockopt)" ok "$n: setsockopt(SO_MARK) works"
	tap_is "$(out_val mark)" 0 "$n: getsockopt(SO_MARK) on a new socket reads 0 (no mark stamped)"
	rcv=$(out_val rcvbuf)
	[[ $rcv =~ ^[0-9]+$ ]] && [ "$rcv" -gt 131072 ]
	tap_ok $? "$n: SO_RCVBUF of 4 MiB is not clamped (reads back $rcv)"
	tap_is "$(out_val cc)" cubic "$n: TCP_CONGESTION cubic is not forced to reno"
	tap_is "$(out_val socket_inet6_stream) $(out_val socket_inet6_dgram) $(out_val socket_inet_raw)" \
		"ok ok ok" "$n: AF_INET6 stream, dgram and SOCK_RAW sockets are created"
	tap_is "$(ct_fwmark "$CT_PID" "$PORT")" none "$n: the listener carries no mark (ss from the host)"
	tap_is "$(ct_our_progs "$CG")" "cgroup_getsockopt sh_getsockopt
cgroup_inet_sock_create sh_sock_create
cgroup_setsockopt sh_setsockopt" "$n: our three programs are attached all the same"
}

# count_checks NAME JSON: would-have counters equal the calls made: SO_MARK
# set twice and read twice, one SO_RCVBUF, one TCP_CONGESTION, two AF_INET6
# and one SOCK_RAW socket, six TCP sockets that would have been stamped.
count_checks()
{
	local n=$1 j=$2 got

	got="$(would "$j" setsockopt deny SOL_SOCKET SO_MARK) $(would "$j" getsockopt deny SOL_SOCKET SO_MARK)"
	got+=" $(would "$j" setsockopt clamp SOL_SOCKET SO_RCVBUF) $(would "$j" setsockopt force SOL_TCP TCP_CONGESTION)"
	tap_is "$got" "2 2 1 1" "$n: would deny SO_MARK set 2, get 2; would clamp SO_RCVBUF 1; would force TCP_CONGESTION 1" ||
		tap_diag "$j"
	got="$(would "$j" sock_create deny socket 'AF_INET6 any any') $(would "$j" sock_create deny socket 'any SOCK_RAW any')"
	got+=" $(would "$j" sock_create force SOL_SOCKET SO_MARK) $(would "$j" sock_create force SOL_SOCKET SO_PRIORITY)"
	tap_is "$got" "2 1 6 6" "$n: would deny AF_INET6 2, SOCK_RAW 1; would stamp mark 6, priority 6" ||
		tap_diag "$j"
	tap_is "$(jq -r '[.[0].would_have[].count] | add' <<<"$j")" 21 \
		"$n: nothing else is counted as would-have"
	tap_is "$(jq -r '.[0].counters | [.setsockopt_denied, .setsockopt_clamped, .setsockopt_forced, .getsockopt_denied, .socket_creations_denied] | join(" ")' <<<"$j")" \
		"0 0 0 0 0" "$n: the enforced counters stay 0"
}

# 0. An audit policy named by an annotation, without the
# operator's word, is audit mode by the back door: refused.
err=$("$HOOK" validate "$BACKDOOR" 2>&1 >/dev/null)
tap_like "$err" "warning: policies\.web is in audit mode and in annotations\.allow_policies: a container that names it is refused \(audit_mode_not_allowed\) unless policies\.web\.audit_by_annotation or annotations\.allow_audit_mode is true" \
	"validate warns about an audit policy in allow_policies" || tap_diag "$err"
: >"$LOG"
b=$(ct_bundle -c "$BACKDOOR" -a sockopt-hook.io/policy=web backdoor -- sockcheck all)
refused runc backdoor "$b" 'sockopt-hook\.io/policy=.web. refused: policy web is in audit mode' \
	'allow_audit_mode' 'audit_by_annotation'
tap_is "$(jq -r 'select(.event == "refused") | "\(.reason) \(.annotation) \(.setting)"' "$LOG" 2>/dev/null)" \
	"audit_mode_not_allowed sockopt-hook.io/policy web" \
	"backdoor: the audit line says audit_mode_not_allowed, the annotation and the policy" ||
	tap_diag "$(cat "$LOG")"
# Control: the default policy still holds for a pod that names nothing.
b=$(ct_bundle -c "$BACKDOOR" backdoorctl -- /bin/sh -c 'sockcheck set-mark 5; sockcheck socket inet6 stream')
ct_run runc "$(ct_id backdoorctl)" "$b"
tap_is "$(out_val setsockopt) $(out_val socket_inet6_stream)" "EPERM EPERM" \
	"backdoor control: under defaults.policy, SO_MARK and AF_INET6 are denied" ||
	tap_diag "$(cat "$CT_OUT" "$CT_ERR")"
# With policies.web.audit_by_annotation, the operator's word: it runs.
OPEN=$CT_TMP/configs/open.json
jq '.policies.web.audit_by_annotation = true' "$BACKDOOR" >"$OPEN"
b=$(ct_bundle -c "$OPEN" -a sockopt-hook.io/policy=web backdooropen -- /bin/sh -c 'sockcheck set-mark 5')
ct_run runc "$(ct_id backdooropen)" "$b"
tap_is "$CT_RC $(out_val setsockopt)" "0 ok" \
	"with audit_by_annotation, the audit policy is taken: SO_MARK goes through" ||
	tap_diag "$(cat "$CT_ERR")"

# 1. The policy says "mode": "audit".
start audited "$AUDIT" -a sockopt-hook.io/policy=restricted || tap_done
audit_checks audited
J=$("$HOOK" status --json "$(ct_id audited)" 2>&1)
tap_is "$(jq -r '.[0] | "\(.mode) \(.mode_source)"' <<<"$J")" \
	"audit policy restricted" "audited: status --json: mode audit, from policy restricted" ||
	tap_diag "$J"
count_checks audited "$J"
T=$("$HOOK" status "$(ct_id audited)" 2>&1)
tap_like "$T" $'\n  mode: +audit \\(from policy restricted\\)' "audited: status shows the mode" ||
	tap_diag "$T"
tap_like "$T" $'\n  would have:\n(    .*\n)*    would deny SOL_SOCKET SO_MARK \\(setsockopt\\): 2\n' \
	"status: 'would deny SOL_SOCKET SO_MARK (setsockopt): 2' under 'would have:'" ||
	tap_diag "$T"
T=$("$HOOK" --config "$AUDIT" status "$(ct_id audited)" 2>&1)
tap_like "$T" $'\n  rules: +policy restricted as [^ ]+ has it now \\(audit mode: counted, not applied\\)\n' \
	"audited: status says the rules are counted, not applied" || tap_diag "$T"
ct_delete runc "$(ct_id audited)"

# 2. Control: the same policy in enforce mode still denies.
start enforced "$CT_EXAMPLE_CONFIG" -a sockopt-hook.io/policy=restricted || tap_done
tap_is "$(out_val markrt) $(out_val setsockopt) $(out_val cc) $(out_val socket_inet6_stream)" \
	"EPERM EPERM reno EPERM" "enforced: SO_MARK denied, TCP_CONGESTION forced, AF_INET6 denied"
J=$("$HOOK" status --json "$(ct_id enforced)" 2>&1)
tap_is "$(jq -r '.[0] | "\(.mode) \(has("would_have")) \(.counters.setsockopt_denied)"' <<<"$J")" \
	"enforce false 2" "enforced: status --json: mode enforce, no would_have, 2 denied"
ct_delete runc "$(ct_id enforced)"

# 3. The per-container annotation, allowed by annotations.allow_audit_mode.
CRI=(-a io.kubernetes.cri.container-type=container
	-a io.kubernetes.cri.sandbox-namespace=shop
	-a io.kubernetes.cri.sandbox-name=web-0
	-a io.kubernetes.cri.container-name=app)
start annotated "$ANN" "${CRI[@]}" -a sockopt-hook.io/policy=restricted \
	-a sockopt-hook.io/mode.app=audit || tap_done
audit_checks annotated
J=$("$HOOK" status --json "$(ct_id annotated)" 2>&1)
tap_is "$(jq -r '.[0] | "\(.mode) \(.mode_source)"' <<<"$J")" \
	"audit annotation sockopt-hook.io/mode.app" "annotated: mode audit, from annotation sockopt-hook.io/mode.app"
count_checks annotated "$J"
ct_delete runc "$(ct_id annotated)"

# 4. An allow-list in audit mode: misses counted per option.
b=$(ct_bundle -c "$AUDIT" -a sockopt-hook.io/policy=allowlist allow -- /bin/sh -c \
	'sockcheck keepalive; sockcheck set-mark 1; sockcheck set-mark 2; sockcheck rcvbuf 4096; echo READY; exec sleep 600')
ct_start_ok "allowlist: container starts" runc "$(ct_id allow)" "$b" '^READY$' || tap_done
tap_is "$(out_val keepalive) $(out_val setsockopt)" "1 ok" "allowlist: SO_KEEPALIVE and SO_MARK, not allowed, still work"
J=$("$HOOK" status --json "$(ct_id allow)" 2>&1)
tap_is "$(jq -r '[.[0].would_have[] | "\(.action) \(.level) \(.option) \(.not_allowed) \(.count)"] | sort | join(",")' <<<"$J")" \
	"deny SOL_SOCKET SO_KEEPALIVE true 1,deny SOL_SOCKET SO_MARK true 2" \
	"allowlist: would deny, not allowed: SO_KEEPALIVE 1, SO_MARK 2; SO_RCVBUF (allowed) not counted" ||
	tap_diag "$J"
ct_delete runc "$(ct_id allow)"

# 5. The annotation without annotations.allow_audit_mode: refused.
: >"$LOG"
b=$(ct_bundle -c "$NOANN" -a sockopt-hook.io/policy=restricted \
	-a sockopt-hook.io/mode=audit refusedmode -- sockcheck all)
refused runc refusedmode "$b" 'sockopt-hook\.io/mode' 'allow_audit_mode'
tap_is "$(jq -r 'select(.event == "refused") | .reason' "$LOG" 2>/dev/null)" \
	audit_mode_not_allowed "refusedmode: the audit line's reason is audit_mode_not_allowed" ||
	tap_diag "$(cat "$LOG")"

ct_check_same "after delete, BPF programs, hook state and cgroups are as before" "$BEFORE"
tap_done
