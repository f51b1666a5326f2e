#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A start path that never verifies: no prestart verifies a program,
# whatever its policy.
# Under runc, on a BPF filesystem of the test's own where `preload` pinned
# the generic programs of a config that names no policy at all: a
# container whose policy has no pin starts on the generic programs, loads
# nothing, and is policed exactly as the specialised copies police (the
# restricted checks of the policy suite, the mark seen from the host, a
# cgroup nested in the container, audit mode and its would-have counters);
# a generic program attached with no state refuses every call (the
# window between attach and the state being written fails closed); a
# bypass-prot-mem container on a kernel without it is refused without a
# verifier run; record mode still loads its own copies; `apply` then puts
# the container's own copies in place (`status` says which it runs), and
# gc drops its rules in the generic programs once its cgroup is gone. A
# planted generic pin (an allow-all program under sh_gen_set's name) is
# not attached: a warning, the policy's own copy instead, and preload
# replaces it. A pod sandbox's sandbox_policy with no pin starts on the
# generic sock_create program too.
#
# Modules: `generic.c`, `load.c`, `attach.c`, `preload.c`, `teardown.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/policy_suite.sh
. "$here/../lib/policy_suite.sh"

ct_setup runc
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
ct_mount_bpffs || tap_bail "cannot mount a BPF filesystem in $CT_TMP"

# prog_name PIN: the name of the program behind a pin.
prog_name()
{
	timeout 20 bpftool -j prog show pinned "$1" | jq -r .name
}

# generic_pin NAME: the pin of the generic program called NAME.
generic_pin()
{
	local p

	for p in "$CT_PIN_DIR"/*; do
		[ "$(prog_name "$p")" = "$1" ] && echo "$p" && return 0
	done
	return 1
}

# rules_entries: how many attachments' rules the generic programs hold (the
# distinct rules ids, the first 8 bytes of gen_rules' keys).
rules_entries()
{
	timeout 20 bpftool -j map show |
		jq -r '.[] | select(.name == "gen_rules") | .id' |
		while read -r id; do
			timeout 20 bpftool -j map dump id "$id" | jq -r '.[].key[0:8] | join("")'
		done | sort -u | grep -c .
}

# gc_until_rules N: gc until the generic programs hold N attachments' rules
# (a cgroup is freed, and its storage with it, a little after it is
# removed): the count left.
gc_until_rules()
{
	local n i
	for i in $(seq 50); do
		"$HOOK" gc >/dev/null
		n=$(rules_entries)
		[ "$n" = "$1" ] && break
		sleep 0.2
	done
	echo "$n"
}

# ---- the generic programs, and nothing else ---------------------------------
# sandbox_policy "": the built-in one for pod sandboxes is a policy too.
none=$(ct_config none '.policies = {} | .annotations.allow_policies = [] |
	.annotations.allow_bypass_prot_mem = false | .sandbox_policy = ""')
out=$("$HOOK" --config "$none" preload 2>&1)
tap_is "$?" 0 "preload of a config without policies succeeds"
tap_like "$out" "preloaded 0 program\(s\) for 0 policy variant\(s\)" "it pins no policy's program"
tap_like "$out" "generic programs: 6 pinned \(6 now, 0 unpinned\)" \
	"and the 6 generic programs (3 attach types x enforce, audit; no bypass on this kernel)"
names=$(for p in "$CT_PIN_DIR"/*; do prog_name "$p"; done | sort | uniq -c | awk '{ print $2 "x" $1 }' | xargs)
tap_is "$names" "sh_gen_getx2 sh_gen_setx2 sh_gen_sockx2" "the pins are sh_gen_* programs"
tap_is "$("$HOOK" probe --json | jq -c '[.preloaded_programs, .generic_programs]')" "[0,6]" \
	"probe counts them apart"
tap_like "$("$HOOK" --config "$none" preload)" "generic programs: 6 pinned \(0 now" \
	"a second preload keeps them (checked, not loaded again)"
before=$(ct_snapshot)

# ---- a policy with no pin starts on them, loading nothing --------------------
progs_before=$(host_prog_count)
start_listener runc restricted -a sockopt-hook.io/policy=restricted
tap_is "$(host_prog_count)" "$progs_before" "restricted: prestart loaded no program (no verifier run)"
tap_is "$(out_val setsockopt)" EPERM "restricted: setsockopt(SO_MARK) gives EPERM"
rcv=$(out_val rcvbuf)
[[ $rcv =~ ^[0-9]+$ ]] && [ "$rcv" -le 131072 ]
tap_ok $? "restricted: SO_RCVBUF of 4 MiB reads back <= 131072 (got $rcv)"
tap_is "$(out_val cc)" reno "restricted: TCP_CONGESTION cubic reads back reno"
tap_is "$(out_val socket_inet6_stream)" EPERM "restricted: socket(AF_INET6, SOCK_STREAM) gives EPERM"
tap_is "$(out_val socket_inet_raw)" EPERM "restricted: socket(AF_INET, SOCK_RAW) gives EPERM"
tap_is "$(out_val socket_inet_stream)" ok "restricted: socket(AF_INET, SOCK_STREAM) still works"
tap_is "$(out_val keepalive)" 1 "restricted: SO_KEEPALIVE still works"
tap_is "$(out_val mark)" EPERM "restricted: getsockopt(SO_MARK) gives EPERM"
tap_is "$(ct_fwmark "$CT_PID" "$PORT")" 0x7 "restricted: new sockets carry mark 7 (ss from the host)"
tap_is "$(ct_our_progs "$CG")" "cgroup_getsockopt sh_gen_get
cgroup_inet_sock_create sh_gen_sock
cgroup_setsockopt sh_gen_set" "restricted: the generic programs are attached"
RCG=$CG
# A cgroup nested in the container runs the container's attachment, with
# its state: a socket made there is policed the same.
mkdir "$RCG/nested"
nested=$(sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" set-mark 3' _ "$RCG/nested" "$SOCKCHECK")
rmdir "$RCG/nested"
tap_is "$nested" "setsockopt=EPERM" "restricted: a process in a cgroup nested in the container gets EPERM too"
tap_is "$(rules_entries)" 2 "the generic setsockopt and getsockopt programs hold its rules, one rules id each"
tap_like "$("$HOOK" --config "$CT_EXAMPLE_CONFIG" status "$(ct_id restricted)")" \
	"policy hash: [0-9a-f]{16}, as the config has it; it runs generic programs until .oci-sockopt-hook apply. swaps in its own copies" \
	"status says it runs the generic programs"

# ---- the window between attach and state fails closed ------------------------
raw=$CT_CG2/$CT_PREFIX-raw
mkdir "$raw"
attached=1
timeout 20 bpftool cgroup attach "$raw" sock_create pinned "$(generic_pin sh_gen_sock)" multi &&
	timeout 20 bpftool cgroup attach "$raw" setsockopt pinned "$(generic_pin sh_gen_set)" multi &&
	timeout 20 bpftool cgroup attach "$raw" getsockopt pinned "$(generic_pin sh_gen_get)" multi &&
	attached=0
tap_ok "$attached" "the generic programs attach to a cgroup with no state written (bpftool)"
inraw()
{
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$raw" "$SOCKCHECK" "$@"
}
tap_is "$(inraw socket inet stream)" "socket_inet_stream=EPERM" "no state: socket() gives EPERM"
timeout 20 bpftool cgroup detach "$raw" sock_create pinned "$(generic_pin sh_gen_sock)"
tap_is "$(inraw keepalive | head -n 1)" "keepalive=EPERM" "no state: setsockopt(SO_KEEPALIVE) gives EPERM"
timeout 20 bpftool cgroup detach "$raw" setsockopt pinned "$(generic_pin sh_gen_set)"
tap_is "$(inraw get-mark)" "mark=EPERM" "no state: getsockopt(SO_MARK) gives EPERM"
timeout 20 bpftool cgroup detach "$raw" getsockopt pinned "$(generic_pin sh_gen_get)"
tap_is "$(inraw keepalive)" "keepalive=1" "detached: the calls pass again"
rmdir "$raw"

# ---- audit mode on them ------------------------------------------------------
with_restricted=$(ct_snapshot)
audit=$(ct_config audit '.annotations.allow_audit_mode = true')
start_listener runc audited -c "$audit" -a sockopt-hook.io/policy=restricted -a sockopt-hook.io/mode=audit
tap_is "$(host_prog_count)" "$progs_before" "audited: prestart loaded no program"
tap_is "$(out_val setsockopt) $(out_val socket_inet6_stream) $(out_val cc)" "ok ok cubic" \
	"audited: nothing applied (SO_MARK set, AF_INET6 made, cubic kept)"
tap_is "$(ct_our_progs "$CG")" "cgroup_getsockopt sh_gen_get
cgroup_inet_sock_create sh_gen_sock
cgroup_setsockopt sh_gen_set" "audited: the generic programs are attached"
wh=$("$HOOK" --config "$audit" --json status "$(ct_id audited)" |
	jq -c '[.[0].would_have[] | select(.option == "SO_MARK" or .option == "AF_INET6 any any") | "\(.program) \(.action) \(.option)"] | sort')
tap_is "$wh" '["getsockopt deny SO_MARK","setsockopt deny SO_MARK","sock_create deny AF_INET6 any any","sock_create force SO_MARK"]' \
	"audited: status reads what it would have done from the generic programs' state"
delete_and_compare runc audited "$with_restricted"

# ---- refused without a verifier run -------------------------------------------
bundle=$(ct_bundle -a sockopt-hook.io/policy=bulk bulk -- /bin/true)
ct_run runc "$(ct_id bulk)" "$bundle"
tap_ok $((CT_RC == 0)) "bulk (bypass-prot-mem, on_unsupported fail) is refused on this kernel (exit $CT_RC)"
tap_like "$(cat "$CT_ERR")" "lacks SK_BPF_BYPASS_PROT_MEM" "with the reason"
tap_is "$(host_prog_count)" "$progs_before" "and no program was loaded to find it out"

# ---- record mode still loads its own -----------------------------------------
rec=$(ct_config rec ".record = {\"allow\": true, \"dir\": \"$CT_TMP/recorded\"}")
bundle=$(ct_bundle -c "$rec" -a sockopt-hook.io/policy=setonly -a sockopt-hook.io/record=r recorded -- \
	/bin/sh -c 'sockcheck set-mark 1; sleep 120')
ct_start_ok "recorded: container starts" runc "$(ct_id recorded)" "$bundle" '^setsockopt='
tap_is "$(ct_our_progs "$CT_CG")" "cgroup_getsockopt sh_getsockopt
cgroup_inet_sock_create sh_sock_create
cgroup_setsockopt sh_setsockopt" "recorded: record mode loads its own copies (their footprint tables are the container's)"
ct_delete runc "$(ct_id recorded)"

# ---- apply puts its own copies in place -----------------------------------------
out=$("$HOOK" --config "$CT_EXAMPLE_CONFIG" preload 2>&1)
tap_like "$out" "preloaded 5 program\(s\)" "preload of the example config pins restricted's programs (and the pod sandboxes')"
out=$("$HOOK" --config "$CT_EXAMPLE_CONFIG" apply 2>&1)
tap_is "$?" 0 "apply succeeds"
tap_like "$out" "^updated +$(ct_id restricted): sock_create: generic program -> its own copy; setsockopt: generic program -> its own copy; getsockopt: generic program -> its own copy" \
	"apply swaps the generic programs for the preloaded copies"
tap_is "$(ct_our_progs "$RCG")" "cgroup_getsockopt sh_getsockopt
cgroup_inet_sock_create sh_sock_create
cgroup_setsockopt sh_setsockopt" "restricted: its own copies are attached now"
tap_like "$("$HOOK" --config "$CT_EXAMPLE_CONFIG" status "$(ct_id restricted)")" \
	"policy hash: [0-9a-f]{16}, as the config has it
" "status: it runs what the config gives it, from its own copies"
sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" set-mark 3' _ "$RCG" "$SOCKCHECK" >"$CT_TMP/after"
tap_is "$(cat "$CT_TMP/after")" "setsockopt=EPERM" "restricted: still refused on its own copies"
tap_is "$(gc_until_rules 2)" 2 "its rules stay in the generic programs while its cgroup lives (the audited container's go)"
"$HOOK" --config "$none" preload >/dev/null # the policy pins go again
delete_and_compare runc restricted "$before"
tap_is "$(gc_until_rules 0)" 0 "and gc drops them once its cgroup is gone"

# ---- a record lost: gc drops the rules of a cgroup that is gone too ---------
start_listener runc lost -a sockopt-hook.io/policy=setonly
tap_is "$(ct_our_progs "$CG")" "cgroup_setsockopt sh_gen_set" "lost: setonly starts on sh_gen_set"
tap_is "$(rules_entries)" 1 "lost: its rules are in the generic setsockopt program"
rm "$CT_STATE_DIR/$(ct_id lost).json" # as a hook killed before its record would leave it
touch "$CT_STATE_DIR/last-gc"          # no gc in this poststop
ct_delete runc "$(ct_id lost)"
tap_is "$(gc_until_rules 0)" 0 "lost: with no record, gc drops its rules once its cgroup is gone"

# ---- a pod sandbox whose sandbox_policy has no pin starts on them too ---------
# As CRI-O runs a sandbox (its own prestart): the built-in sandbox_policy,
# never preloaded here, from the generic sock_create program.
progs_before=$(host_prog_count)
bundle=$(ct_bundle -a io.kubernetes.cri-o.ContainerType=sandbox \
	-a io.kubernetes.pod.namespace=shop -a io.kubernetes.pod.name=pod sandbox -- pause)
if ct_start_ok "sandbox: the pause sandbox starts" runc "$(ct_id sandbox)" "$bundle"; then
	tap_is "$(host_prog_count)" "$progs_before" "sandbox: prestart loaded no program"
	tap_is "$(ct_our_progs "$CT_CG")" "cgroup_inet_sock_create sh_gen_sock" \
		"sandbox: sandbox_policy's sock_create is the generic program"
	tap_is "$(sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" socket inet stream' _ "$CT_CG" "$SOCKCHECK")" \
		"socket_inet_stream=EPERM" "sandbox: socket() in its cgroup gives EPERM"
	ct_delete runc "$(ct_id sandbox)"
fi

# ---- a planted generic pin is not attached ------------------------------------
# What another tool or a mistake could leave under a generic program's name:
# an allow-all cgroup_sockopt program called sh_gen_set (tests/progs/cgprog)
# in place of both sh_gen_set pins. It is checked as the policies' pins are
# (progcheck.h): a warning, and the policy's own program loaded instead.
CGPROG=$CT_BUILD/tests/cgprog
planted=0
for p in "$CT_PIN_DIR"/*; do
	[ "$(prog_name "$p")" = sh_gen_set ] || continue
	rm "$p" && "$CGPROG" pin "$p" setsockopt sh_gen_set && planted=$((planted + 1))
done
tap_is "$planted" 2 "planted: an allow-all sh_gen_set in place of each generic setsockopt pin"
LOG=$CT_TMP/planted.log
# shellcheck disable=SC2016 # $log is jq's
logged=$(ct_config logged '.log_file = $log' --arg log "$LOG")
start_listener runc planted -c "$logged" -a sockopt-hook.io/policy=setonly
tap_is "$(out_val setsockopt)" EPERM "planted: setsockopt(SO_MARK) still gives EPERM"
tap_is "$(ct_our_progs "$CG")" "cgroup_setsockopt sh_setsockopt" \
	"planted: the planted program is not attached: setonly's own copy is"
tap_like "$(cat "$LOG")" "warning: container [^ ]*: pin $CT_PIN_DIR/setsockopt-[0-9a-f]{16} is not the generic setsockopt program this hook loads: it has no .rodata; loading the policy's programs instead" \
	"planted: one warning naming the pin and why"
ct_delete runc "$(ct_id planted)"
tap_like "$("$HOOK" --config "$none" preload)" "generic programs: 6 pinned \(2 now" \
	"preload replaces the two planted pins"
tap_is "$(for p in "$CT_PIN_DIR"/*; do prog_name "$p"; done | sort | uniq -c | awk '{ print $2 "x" $1 }' | xargs)" \
	"sh_gen_getx2 sh_gen_setx2 sh_gen_sockx2" "and only the generic programs are pinned again"

tap_done
