#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `status` with names: five containers under runc, crun and crun without a
# cgroup manager, named the way containerd (io.kubernetes.cri.*) and CRI-O
# (io.kubernetes.pod.*, io.kubernetes.container.name) name them, and one
# plain container with no names.
#   1. the table: one row per container with ID, NAMESPACE, POD,
#      CONTAINER, POLICY, BYPASS and counters, "-" where unknown;
#   2. --namespace, --pod, --container, --policy: exact, combinable, with
#      the ID operand too; no match is an empty table (JSON []) and exit 0;
#      an invalid name is one line and exit 2;
#   3. --json: namespace, pod, container, and "enforcement": the programs
#      are those `bpftool cgroup show` lists on the cgroup, the rules
#      summed up from the config, bypass applied/fell_back/not_asked, the
#      caveats that apply (hook_made_cgroup only where the hook made the
#      cgroup), no drift;
#   4. drift: the test detaches a program of one of its containers itself
#      (bpftool cgroup detach); status then says the record names a
#      program the cgroup no longer has, for that container only;
#   5. another tool's program on one container's cgroup is the
#      other_programs caveat of that container alone, not drift.
#
# Modules: `cmd_status.c`, `status_view.c`, `attach.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc crun crun-nocg
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
# on_unsupported "warn": a bypass container starts on any kernel, with the
# bypass applied or fallen back as the kernel allows.
CFG=$(ct_config warn '.on_unsupported = "warn"')
ST=("$HOOK" --config "$CFG" status)

CRI=(-a io.kubernetes.cri.container-type=container)
# start RUNTIME NAME POLICY [ANNOTATIONS...]: starts a container running
# sleep, or fails the test file.
declare -A ID CG RT
start()
{
	local rt=$1 name=$2 policy=$3

	shift 3
	ID[$name]=$(ct_id "$name")
	RT[$name]=$rt
	ct_up -r "$rt" --desc "$name: starts under $rt ($policy)" -c "$CFG" \
		-a "sockopt-hook.io/policy=$policy" "$@" "$name" -- sleep 600 || tap_done
	CG[$name]=$CT_CG
}

start runc web restricted "${CRI[@]}" \
	-a io.kubernetes.cri.sandbox-namespace=team-a \
	-a io.kubernetes.cri.sandbox-name=web-0 \
	-a io.kubernetes.cri.container-name=app
start crun side setonly "${CRI[@]}" \
	-a io.kubernetes.cri.sandbox-namespace=team-a \
	-a io.kubernetes.cri.sandbox-name=web-0 \
	-a io.kubernetes.cri.container-name=sidecar
start runc db setonly \
	-a io.kubernetes.pod.namespace=team-b \
	-a io.kubernetes.pod.name=db-0 \
	-a io.kubernetes.container.name=db
start runc bulk bulk \
	-a io.kubernetes.pod.namespace=team-b \
	-a io.kubernetes.pod.name=db-0 \
	-a io.kubernetes.container.name=loader
start crun-nocg plain restricted

# Whether bypass-prot-mem can apply here.
if [ "$("$HOOK" probe --json 2>/dev/null | jq -r '.bypass_prot_mem // .bypass // false')" = true ]; then
	BULK_BYPASS=applied
else
	BULK_BYPASS=fell_back
fi

# ---- 1. the table -------------------------------------------------------

text=$("${ST[@]}" 2>&1)
tap_ok $? "status exits 0"
header=$(head -1 <<<"$text")
tap_like "$header" '^ID +NAMESPACE +POD +CONTAINER +POLICY +BYPASS +SOCKETS +DENIED +CLAMPED +FORCED$' \
	"the table's header" || tap_diag "$text"
# row NAME: the table row of that container, its fields space-separated.
row()
{
	awk -v id="${ID[$1]}" '$1 == id { $1 = $1; print; exit }' <<<"$text"
}
tap_like "$(row web)" "^${ID[web]} team-a web-0 app restricted not_asked [0-9]+ [0-9]+ [0-9]+ [0-9]+$" \
	"web (containerd keys): team-a web-0 app restricted"
tap_like "$(row side)" "^${ID[side]} team-a web-0 sidecar setonly not_asked " \
	"side (containerd keys, crun): team-a web-0 sidecar setonly"
tap_like "$(row db)" "^${ID[db]} team-b db-0 db setonly not_asked " \
	"db (CRI-O keys): team-b db-0 db setonly"
tap_like "$(row bulk)" "^${ID[bulk]} team-b db-0 loader bulk $BULK_BYPASS " \
	"bulk (CRI-O keys): team-b db-0 loader bulk, bypass $BULK_BYPASS"
tap_like "$(row plain)" "^${ID[plain]} - - - restricted not_asked " \
	"plain (no names): '-' for namespace, pod and container"
tap_is "$(awk 'NR > 1 && /^[^ ]/ && NF == 10' <<<"$text" | sed -n '/^sht/p' | wc -l)" 5 \
	"five rows, one per container" || tap_diag "$text"

# Each container's block says what enforces what.
for n in web side db bulk plain; do
	tap_like "$text" "
${ID[$n]}
  namespace: [^
]*
  pod: [^
]*
  container: [^
]*
  cgroup: +/" "$n: a block with its names and cgroup follows the table"
done
tap_like "$text" "
  enforced by:
    sock_create prog [0-9]+ on [^:]*/${ID[web]}: deny AF_INET6; deny SOCK_RAW; deny IPPROTO_MPTCP; mark 7; priority 2
    setsockopt prog [0-9]+ on [^:]*: default allow: deny SOL_SOCKET SO_MARK; deny SOL_SOCKET SO_PRIORITY; deny SOL_IP IP_TOS; clamp SOL_SOCKET SO_RCVBUF [0-9-]+\\.\\.65536; force SOL_TCP TCP_CONGESTION =\"reno\"
    getsockopt prog [0-9]+ on [^:]*: default allow: deny SOL_SOCKET SO_MARK
  rules: +policy restricted as $CFG has it now
  bypass-prot-mem: not asked
  drift: +none
  caveats: *
    \\[compat_syscalls\\] [^
]*
    \\[packet_sockets\\] " "web: enforced by: each program, its rules, bypass, no drift, its caveats" ||
	tap_diag "$text"

# ---- 2. filters ---------------------------------------------------------

# ids ARGS...: the ids of the rows status prints for these filters.
ids()
{
	"${ST[@]}" "$@" 2>&1 | awk 'NR > 1 && /^sht/ && NF == 10 { print $1 }' | sort | tr '\n' ' '
}
want()
{
	local n

	for n in "$@"; do echo "${ID[$n]}"; done | sort | tr '\n' ' '
}
tap_is "$(ids --namespace team-a)" "$(want web side)" "--namespace team-a: web and side"
tap_is "$(ids --namespace team-b)" "$(want db bulk)" "--namespace team-b: db and bulk"
tap_is "$(ids --pod web-0)" "$(want web side)" "--pod web-0: web and side"
tap_is "$(ids --container db)" "$(want db)" "--container db: db"
tap_is "$(ids --policy setonly)" "$(want side db)" "--policy setonly: side and db"
tap_is "$(ids --policy restricted)" "$(want web plain)" "--policy restricted: web and plain (no names)"
tap_is "$(ids --namespace team-a --policy setonly)" "$(want side)" \
	"--namespace team-a --policy setonly: side"
tap_is "$(ids --pod web-0 --container app --namespace team-a)" "$(want web)" \
	"--pod web-0 --container app --namespace team-a: web"
tap_is "$(ids --namespace team-a --container db)" "" "--namespace team-a --container db: nothing"
tap_is "$(ids --namespace team)" "" "--namespace team (a prefix): nothing, the match is exact"
out=$("${ST[@]}" --namespace team-b --policy restricted 2>&1)
rc=$?
[ "$rc" = 0 ] && [ "$(grep -c . <<<"$out")" = 1 ] && [[ $out =~ ^ID\  ]]
tap_ok $? "no match: exit 0 and the header alone" || tap_diag "exit $rc:" "$out"
tap_is "$("${ST[@]}" --json --namespace nobody 2>&1 | jq -c .)" "[]" "no match, --json: []"
tap_is "$("${ST[@]}" --json --pod db-0 2>&1 | jq -r '[.[].id] | sort | join(" ")')" \
	"$(want db bulk | sed 's/ $//')" "--json --pod db-0: db and bulk"
out=$("${ST[@]}" "${ID[web]}" --namespace team-a 2>&1)
tap_like "$out" "^${ID[web]}
  namespace: team-a
  pod: +web-0
  container: app
" "status ID --namespace team-a: the one block of web"
out=$("${ST[@]}" "${ID[web]}" --namespace team-b 2>&1)
rc=$?
[ "$rc" = 0 ] && [ "$(grep -c . <<<"$out")" = 1 ]
tap_ok $? "status ID with a filter it does not pass: exit 0, the header alone" || tap_diag "exit $rc:" "$out"

# usage OPTION ARGS...: status ARGS... exits 2 with one line naming OPTION.
usage()
{
	local opt=$1 out rc

	shift
	out=$("${ST[@]}" "$@" 2>&1)
	rc=$?
	[ "$rc" = 2 ] && [ "$(grep -c . <<<"$out")" = 1 ]
	tap_ok $? "status ${*:0:60}: exit 2 and one line" || tap_diag "exit $rc:" "$out"
	tap_like "$out" "^oci-sockopt-hook: .*$opt" "status $*: the line names $opt"
}
usage --namespace --namespace 'Bad Name!'
usage --pod --pod ''
usage --container --container '-x'
usage --policy --policy 'a/b'
usage --policy --json --policy "$(printf 'p%.0s' {1..65})"
usage --pod --namespace team-a --pod 'web 0'
usage "--namespace needs a value" --namespace

# ---- 3. --json ----------------------------------------------------------

json=$("${ST[@]}" --json 2>&1)
tap_ok $? "status --json exits 0"
rec()
{
	jq -c --arg id "${ID[$1]}" '.[] | select(.id == $id)' <<<"$json"
}
tap_is "$(rec web | jq -r '"\(.namespace) \(.pod) \(.container)"')" "team-a web-0 app" \
	"--json web: namespace, pod, container"
tap_is "$(rec db | jq -r '"\(.namespace) \(.pod) \(.container)"')" "team-b db-0 db" \
	"--json db (CRI-O keys): namespace, pod, container"
tap_is "$(rec plain | jq -r '"\(.namespace)|\(.pod)|\(.container)"')" "||" \
	"--json plain: empty namespace, pod, container"
tap_is "$(rec web | jq -r '[.live, .exec.policed, (.counters | type), .policy, .cgroup_created] | join(" ")')" \
	"true true object restricted false" "--json: the keys of before are still there"
for n in web side db bulk plain; do
	got=$(rec "$n" | jq -r '.enforcement.programs[] | "\(.bpf_attach_type) \(.attached_ids | join(","))"' | sort)
	bt=$(timeout 20 bpftool -j cgroup show "${CG[$n]}" 2>/dev/null |
		jq -r '.[] | select(.name | startswith("sh_")) | "\(.attach_type) \(.id)"' | sort)
	tap_is "$got" "$bt" "$n: enforcement.programs are what bpftool cgroup show lists" ||
		tap_diag "$(rec "$n" | jq -c .enforcement.programs)"
	if [ "$n" = bulk ] && [ "$BULK_BYPASS" = fell_back ]; then
		tap_is "$(rec bulk | jq '.enforcement.programs | length')" 0 \
			"bulk: no rules and the bypass fell back: no program"
	else
		tap_is "$(rec "$n" | jq -c '[.enforcement.programs[] | .state] | unique')" '["attached"]' \
			"$n: every program is attached"
	fi
	tap_is "$(rec "$n" | jq -c .enforcement.drift)" "[]" "$n: no drift"
done
tap_is "$(rec web | jq -r '.enforcement.rules.setsockopt')" \
	"$(rec web | jq -r '.enforcement.programs[] | select(.attach == "setsockopt") | .enforces')" \
	"web: rules.setsockopt is what the setsockopt program enforces"
tap_like "$(rec db | jq -r '.enforcement.rules.setsockopt')" '^default allow: deny SOL_SOCKET SO_MARK$' \
	"db: setonly's rule"
tap_is "$(rec db | jq -r '[.enforcement.programs[].attach] | join(" ")')" "setsockopt" \
	"db: setonly attaches a setsockopt program alone"
tap_is "$(rec bulk | jq -r .enforcement.bypass)" "$BULK_BYPASS" "bulk: enforcement.bypass is $BULK_BYPASS"
tap_is "$(rec web | jq -r .enforcement.bypass)" "not_asked" "web: enforcement.bypass is not_asked"
# cav NAME: the caveat ids of a container.
cav()
{
	rec "$1" | jq -r '[.enforcement.caveats[].id] | join(" ")'
}
tap_is "$(cav plain)" "hook_made_cgroup compat_syscalls packet_sockets sock_diag route_metrics" \
	"plain: the hook made its cgroup, and the compat, packet, sock_diag and route_metrics (restricted forces TCP_CONGESTION) caveats"
for n in web side db; do
	tap_unlike=$(cav "$n")
	[[ " $tap_unlike " != *" hook_made_cgroup "* ]]
	tap_ok $? "$n: no hook_made_cgroup caveat ($tap_unlike)"
done
tap_is "$(cav db)" "compat_syscalls" "db: setsockopt only: the compat caveat alone"
if [ "$BULK_BYPASS" = fell_back ]; then
	tap_like "$(cav bulk)" "bypass_fell_back" "bulk: the bypass_fell_back caveat"
else
	tap_ok 0 "bulk: bypass applied, no fell-back caveat to show"
fi
tap_like "$(rec plain | jq -r '.enforcement.caveats[] | select(.id == "hook_made_cgroup") | .text')" \
	"^NOT policed: the hook made this cgroup, so processes started with runc/crun exec stay outside it" \
	"plain: the hook_made_cgroup text"
tap_like "$(rec web | jq -r '.enforcement.caveats[] | select(.id == "compat_syscalls") | .text')" \
	"32-bit compat syscalls .*seccomp" "web: the compat_syscalls text names the mitigation"

# ---- 4. drift -----------------------------------------------------------

SET=$(rec db | jq -r '.enforcement.programs[] | select(.attach == "setsockopt") | .attached_ids[0]')
timeout 20 bpftool cgroup detach "${CG[db]}" setsockopt id "$SET"
tap_ok $? "the test detaches db's setsockopt program $SET itself"
json=$("${ST[@]}" --json 2>&1)
tap_is "$(rec db | jq -c '.enforcement.drift')" \
	"[\"record says setsockopt program $SET on ${CG[db]#"$CT_CG2"}, the cgroup has none\"]" \
	"db: status --json reports the drift" || tap_diag "$(rec db | jq -c .enforcement)"
tap_is "$(rec db | jq -r '.enforcement.programs[0] | "\(.state) \(.recorded_id) \(.attached_ids | length)"')" \
	"missing $SET 0" "db: the program is missing, recorded $SET, none attached"
tap_is "$(rec web | jq -c .enforcement.drift)" "[]" "web: still no drift"
text=$("${ST[@]}" "${ID[db]}" 2>&1)
tap_like "$text" "
    setsockopt \\(record says prog $SET: missing\\) on [^
]*
  rules: +policy setonly as $CFG has it now
  bypass-prot-mem: not asked
  drift:
    record says setsockopt program $SET on [^ ]*, the cgroup has none
" "db: status ID says so in text" || tap_diag "$text"

# ---- 5. other programs --------------------------------------------------

# Another tool's program (tests/progs/cgprog.c), attached with
# BPF_F_ALLOW_MULTI to side's cgroup: it runs for side alone.
CGPROG=$CT_BUILD/tests/cgprog
if [ -x "$CGPROG" ]; then
	out=$("$CGPROG" attach "${CG[side]}" multi ka_other deny-keepalive)
	OTHER=${out#id=}
	[[ $OTHER =~ ^[0-9]+$ ]]
	tap_ok $? "another tool's program $OTHER on side's cgroup" || tap_diag "$out"
	json=$("${ST[@]}" --json 2>&1)
	tap_is "$(rec side | jq -r '.enforcement.caveats[] | select(.id == "other_programs") | .text')" \
		"other programs run for this cgroup too (setsockopt $OTHER (ka_other)): on an ancestor with BPF_F_ALLOW_MULTI they run after ours and can undo its verdicts" \
		"side: the other_programs caveat names it"
	tap_is "$(rec side | jq -c .enforcement.drift)" "[]" "side: another tool's program is no drift"
	tap_is "$(rec web | jq -r '[.enforcement.caveats[].id] | index("other_programs")')" null \
		"web: no other_programs caveat"
	"$CGPROG" detach "${CG[side]}" "$OTHER"
else
	for _ in 1 2 3 4; do tap_skip "other programs" "$CGPROG not built (make test-progs)"; done
fi

for n in web side db bulk plain; do
	ct_delete "${RT[$n]}" "${ID[$n]}"
done
ct_check_same "after delete, BPF programs, hook state and cgroups are as before" "$BASE"
tap_is "$("${ST[@]}" 2>&1)" "no containers are managed by the hook" "after delete, status says so"
tap_done
