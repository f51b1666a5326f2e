#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `status` on a live container: a "restricted" container runs detached
# under runc, `runc exec` makes a known number of socket calls inside it,
# and `status --json` shows the container with exactly those counts in its
# per-CPU counters. Text mode for one id, and an unknown id fails with one
# line. The table row sums the counters up; without a readable operator
# config the rules are unknown, with one they are named. After delete the
# container is gone from status.
#
# Modules: `cmd_status.c`, `counters.c`, `status_view.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR

ID=$(ct_id status)
B=$(ct_bundle -a sockopt-hook.io/policy=restricted status -- sleep 600)
ct_start_ok "restricted container starts detached" runc "$ID" "$B" || tap_done
tap_diag "init pid $CT_PID"

# The empty container has made no socket yet.
json=$("$HOOK" status --json 2>&1)
tap_is "$(jq -c --arg id "$ID" '[.[] | select(.id == $id) | .counters[]] | add' <<<"$json" 2>&1)" 0 \
	"status --json before any call: every counter is 0" || tap_diag "$json"

# inside N ARGS...: runs sockcheck ARGS... N times in the container and
# checks each run printed WANT (the last argument).
inside()
{
	local n=$1 want=${*: -1} args=("${@:2:$#-2}") out bad=0

	for _ in $(seq 1 "$n"); do
		out=$(timeout 30 runc exec "$ID" sockcheck "${args[@]}" 2>&1)
		[[ $out =~ $want ]] || bad=1
	done
	tap_ok $bad "${n}x sockcheck ${args[*]} in the container: $want" ||
		tap_diag "last output: $out"
}

# Each sockcheck run below makes exactly one socket(); the table is what
# the restricted policy of examples/config.json does to each call.
inside 3 set-mark 5 '^setsockopt=EPERM$'                # 3 set denied
inside 2 rcvbuf 4194304 '^rcvbuf=131072$'               # 2 clamped (2 x 65536)
inside 1 cc cubic '^cc=reno$'                           # 1 set forced
inside 2 get-mark '^mark=EPERM$'                        # 2 get denied
inside 1 keepalive '^keepalive=1$'                      # no rule
inside 1 socket inet6 stream '^socket_inet6_stream=EPERM$' # 1 creation denied
inside 1 socket inet raw '^socket_inet_raw=EPERM$'      # 1 creation denied
inside 1 socket inet dgram '^socket_inet_dgram=ok$'     # created

WANT='{"sockets_created":10,"sockets_bypassed":0,"socket_creations_denied":2,"setsockopt_denied":3,"setsockopt_clamped":2,"setsockopt_forced":1,"getsockopt_denied":2,"getsockopt_forced":0}'

json=$("$HOOK" status --json 2>&1)
tap_ok $? "status --json exits 0"
jq -e 'type == "array"' <<<"$json" >/dev/null 2>&1
tap_ok $? "status --json prints a JSON array" || tap_diag "$json"
rec=$(jq -c --arg id "$ID" '.[] | select(.id == $id)' <<<"$json" 2>/dev/null)
tap_is "$(jq -r '.live' <<<"$rec")" true "status --json shows the container live"
tap_is "$(jq -c '.counters' <<<"$rec")" "$WANT" \
	"counters match the calls made: 10 created, 2 creations denied, 3 set denied, 2 clamped, 1 forced, 2 get denied" ||
	tap_diag "$rec"
tap_is "$(jq -r '"\(.policy) \(.policy_source)"' <<<"$rec")" \
	"restricted annotation sockopt-hook.io/policy" "the record names the policy and its source (the annotation)"
tap_is "$(jq -r '.cgroup_path' <<<"$rec")" "$(ct_cgroup_of "$CT_PID")" \
	"the record's cgroup is the container's cgroup"
tap_is "$(jq -r '[.programs[].attach] | sort | join(" ")' <<<"$rec")" \
	"getsockopt setsockopt sock_create" "the record lists the three attached programs"
ids=$(jq -r '.programs[].id' <<<"$rec" | sort -n | tr '\n' ' ')
attached=$(timeout 20 bpftool -j cgroup show "$(ct_cgroup_of "$CT_PID")" 2>/dev/null |
	jq -r '.[] | select(.name | startswith("sh_")) | .id' | sort -n | tr '\n' ' ')
tap_is "$ids" "$attached" "the program ids in status are the ones attached to the cgroup"

text=$("$HOOK" status "$ID" 2>&1)
tap_ok $? "status ID (text) exits 0"
tap_like "$text" "^$ID
  namespace: -
  pod: +-
  container: -
  cgroup: +/[^
]*
  policy: +restricted \(from annotation sockopt-hook.io/policy\)" \
	"status ID: the id, no names (not a Kubernetes container), its cgroup and its policy"
tap_like "$text" "counters: +sockets_created=10 socket_creations_denied=2 setsockopt_denied=3 setsockopt_clamped=2 setsockopt_forced=1 getsockopt_denied=2
" \
	"status ID: the non-zero counters"
tap_like "$text" "programs: +(sock_create|setsockopt|getsockopt)=[0-9]+ " \
	"status ID: the program ids"
# Without a readable operator config the programs are still the kernel's,
# and the rules are said to be unknown, once.
tap_like "$text" "
  enforced by:
    sock_create prog [0-9]+ on /[^:]*: rules unknown
    setsockopt prog [0-9]+ on /[^:]*: rules unknown
    getsockopt prog [0-9]+ on /[^:]*: rules unknown
  rules: +unknown: the operator config cannot be read: [^
]*
  bypass-prot-mem: not asked
  drift: +none
" "status ID without a config: the programs, rules unknown, no drift" || tap_diag "$text"
text=$("$HOOK" --config "$CT_EXAMPLE_CONFIG" status "$ID" 2>&1)
tap_like "$text" "
    setsockopt prog [0-9]+ on /[^:]*: default allow: deny SOL_SOCKET SO_MARK; deny SOL_SOCKET SO_PRIORITY; deny SOL_IP IP_TOS; clamp SOL_SOCKET SO_RCVBUF [0-9]+\\.\\.65536; force SOL_TCP TCP_CONGESTION =\"reno\"
" "status ID with the config: what the setsockopt program enforces" || tap_diag "$text"
# The table sums the counters: 2 + 3 + 2 denied, 2 clamped, 1 forced.
text=$("$HOOK" status 2>&1)
tap_like "$text" "^ID +NAMESPACE +POD +CONTAINER +POLICY +BYPASS +SOCKETS +DENIED +CLAMPED +FORCED
$ID +- +- +- +restricted +not_asked +10 +7 +2 +1
" "status (text): the table row, with the counters summed up" || tap_diag "$text"

out=$("$HOOK" status no-such-container 2>&1)
rc=$?
[ "$rc" = 1 ] && [ "$(grep -c . <<<"$out")" = 1 ]
tap_ok $? "status with an unknown id: exit 1 and one line" || tap_diag "exit $rc:" "$out"
tap_is "$out" "oci-sockopt-hook: no container 'no-such-container' is managed by the hook" \
	"status with an unknown id: the line names the id"

ct_delete runc "$ID"
ct_check_same "after delete, BPF programs, hook state and cgroups are as before" "$BASE"
tap_is "$("$HOOK" status --json 2>&1 | jq -c .)" "[]" "after delete, status --json is []"
tap_is "$("$HOOK" status 2>&1)" "no containers are managed by the hook" \
	"after delete, status (text) says so"

tap_done
