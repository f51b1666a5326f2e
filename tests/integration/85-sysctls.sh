#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Pod sysctls and routes against a socket policy, in real runc containers
# (each in its own network namespace, as runc's default bundle has it).
#   1. A network sysctl in linux.sysctl sets the default of an option for
#      every socket that never calls setsockopt: net.ipv4.tcp_rmem gives
#      SO_RCVBUF, tcp_keepalive_time TCP_KEEPIDLE, tcp_congestion_control
#      TCP_CONGESTION, and so on. Unpoliced, the container's new sockets
#      hold what the sysctl said (control). Under a policy with a rule on
#      the option, a sysctl that sets the default beyond what the rule lets
#      a setsockopt reach, and beyond what the node gives a new namespace,
#      is refused in one line, reason sysctl_exceeds_policy: a clamp and a
#      force govern the setsockopt call only. Values within the rule, the
#      node's own and a new namespace's defaults start, and hold what they
#      said. Keys with slashes and doubled separators (which runc accepts),
#      hex, whitespace, huge values, bad formats and a long value each get
#      one clear line.
#   2. validate warns that a buffer clamp does not bound TCP autotuning.
#   3. Routes: with CAP_NET_ADMIN in its network namespace, the container
#      replaces its route to 127.0.0.1 with "hoplimit 200 congctl lock
#      cubic": a socket that never calls setsockopt connects with cubic and
#      sends with TTL 200 under a policy that forces reno and clamps IP_TTL
#      to 64, and the route's congestion control replaces even the forced
#      one at connect(); a socket that set IP_TTL keeps its clamped TTL.
#      Without CAP_NET_ADMIN the route change gives EPERM. status names the
#      route_metrics caveat.
#   4. A pod's sysctls are its sandbox's under containerd and CRI-O: a
#      container that joins a sandbox's network namespace by a path (as
#      containerd writes /proc/<pid>/ns/net) carries none. Unpoliced it
#      holds the pod's values (control); under the policy, values past it
#      in the namespace it joins are refused in one line
#      (sysctl_exceeds_policy); a sandbox without sysctls and the node's
#      own namespace (host network) are not.
#
# Modules: `sysctl.c`, `lint.c`, `status_view.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/refuse.sh
. "$here/../lib/refuse.sh"

[ -x "$CT_BUILD/tests/attacks/routes" ] ||
	tap_skip_all "$CT_BUILD/tests/attacks/routes not built (run make test-progs)"
ct_setup runc
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
LOG=$CT_TMP/hook.log
tap_diag "kernel $(uname -r); node: tcp_rmem '$(cat /proc/sys/net/ipv4/tcp_rmem)', congestion control $(cat /proc/sys/net/ipv4/tcp_congestion_control)"

# shellcheck disable=SC2016
CFG=$(ct_config sysctls '
	def rule(l; o; a): {level: l, option: o, action: a};
	.annotations.allow_policies += ["sysctls"] |
	.log_file = $log | .log_format = "json" |
	.policies.sysctls = {setsockopt: [
		rule("SOL_SOCKET"; "SO_RCVBUF"; "clamp") + {max: 65536},
		rule("SOL_SOCKET"; "SO_SNDBUF"; "clamp") + {max: 65536},
		rule("SOL_TCP"; "TCP_KEEPIDLE"; "clamp") + {min: 60, max: 3600},
		rule("SOL_TCP"; "TCP_KEEPCNT"; "force") + {value: 5},
		rule("SOL_TCP"; "TCP_LINGER2"; "clamp") + {max: 30},
		rule("SOL_TCP"; "TCP_CONGESTION"; "force") + {value: "reno"},
		rule("SOL_IP"; "IP_TTL"; "clamp") + {max: 64}]}' --arg log "$LOG") ||
	tap_bail "cannot write the operator config"

# bundle NAME SYSCTL-JSON [POLICY]: a bundle running sockcheck defaults
# with that linux.sysctl, under POLICY (default sysctls; "" for none).
bundle()
{
	local name=$1 sysctl=$2 policy=${3-sysctls} b ann=()

	[ -n "$policy" ] && ann=(-a "sockopt-hook.io/policy=$policy")
	b=$(ct_bundle -c "$CFG" "${ann[@]}" "$name" -- \
		/bin/sh -c 'sockcheck defaults; echo done=ok') || return 1
	jq --argjson s "$sysctl" '.linux.sysctl = $s' "$b/config.json" \
		>"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json" ||
		return 1
	echo "$b"
}

# no NAME SYSCTL-JSON REGEX...: refused, the one line matching each REGEX,
# and the audit line's reason sysctl_exceeds_policy (or the reason given
# as REASON=... first).
no()
{
	local name=$1 sysctl=$2 reason=sysctl_exceeds_policy b

	shift 2
	case ${1:-} in
	REASON=*) reason=${1#REASON=}; shift ;;
	esac
	b=$(bundle "$name" "$sysctl") || { tap_ok 1 "$name: bundle"; return; }
	: >"$LOG"
	refused runc "$name" "$b" "$@"
	tap_is "$(jq -r 'select(.event == "refused") | "\(.reason) \(.setting)"' "$LOG" 2>/dev/null)" \
		"$reason policy sysctls" "$name: the audit line's reason is $reason" ||
		tap_diag "$(cat "$LOG")"
}

# yes NAME SYSCTL-JSON [POLICY] -- KEY=VALUE...: starts, and sockcheck
# defaults prints each KEY=VALUE.
yes()
{
	local name=$1 sysctl=$2 policy=sysctls b kv

	shift 2
	if [ "${1:-}" != -- ]; then
		policy=$1
		shift
	fi
	shift
	b=$(bundle "$name" "$sysctl" "$policy") || { tap_ok 1 "$name: bundle"; return; }
	started runc "$name" "$b"
	for kv in "$@"; do
		grep -qx "$kv" "$CT_OUT"
		tap_ok $? "$name: a new socket holds $kv (no setsockopt)" ||
			tap_diag "$(cat "$CT_OUT")"
	done
}

# ---- 1. linux.sysctl ----------------------------------------------------------

NODE_CC=$(cat /proc/sys/net/ipv4/tcp_congestion_control)
NODE_RMEM=$(cat /proc/sys/net/ipv4/tcp_rmem)
# A congestion control that is neither the node's nor the forced reno.
OTHER_CC=cubic
[ "$NODE_CC" = cubic ] && OTHER_CC=bbr

# Control: unpoliced, the sysctls are what new sockets hold.
yes control '{"net.ipv4.tcp_rmem": "4096 1048576 6291456", "net.ipv4.tcp_keepalive_time": "1", "net.ipv4.tcp_congestion_control": "reno"}' "" -- \
	tcp_rcvbuf=1048576 keepidle=1 cc=reno

no rmem '{"net.ipv4.tcp_rmem": "4096 1048576 6291456"}' \
	"linux\.sysctl 'net\.ipv4\.tcp_rmem'='4096 1048576 6291456' sets the default of the receive buffer of TCP sockets" \
	'SO_RCVBUF.* to 1048576, beyond what policy sysctls lets a setsockopt of SO_RCVBUF reach \(clamp 0\.\.65536, which the kernel keeps as 2 times the value\)' \
	'never calls setsockopt' 'refusing'
no rmem-autotuning '{"net.ipv4.tcp_rmem": "4096 131072 1073741824"}' \
	'the autotuning max of the receive buffer.* to 1073741824'
no wmem '{"net.ipv4.tcp_wmem": "4096 1048576 4194304"}' 'SO_SNDBUF.* to 1048576'
no rmem-default '{"net.core.rmem_default": "1048576"}' \
	'the receive buffer of other sockets.*SO_RCVBUF.* to 1048576'
no keepidle-low '{"net.ipv4.tcp_keepalive_time": "1"}' \
	'TCP_KEEPIDLE.* to 1, .*clamp 60\.\.3600.*a new namespace.s 7200'
no keepcnt '{"net.ipv4.tcp_keepalive_probes": "20"}' 'TCP_KEEPCNT.* to 20, .*force 5'
no fin '{"net.ipv4.tcp_fin_timeout": "600"}' 'TCP_LINGER2.* to 600'
# (The kernel would refuse a congestion control that
# tcp_allowed_congestion_control does not list; the hook refuses first.)
no cc "{\"net.ipv4.tcp_congestion_control\": \"$OTHER_CC\"}" \
	"'net\.ipv4\.tcp_congestion_control'='$OTHER_CC' sets the default of TCP_CONGESTION.*force 'reno'.*the node's is $NODE_CC"
no ttl '{"net.ipv4.ip_default_ttl": "255"}' 'IP_TTL.* to 255,'
# What runc accepts as the same key, and what the kernel reads as numbers.
no slashes '{"net/ipv4/tcp_rmem": "4096 1048576 6291456"}' "'net/ipv4/tcp_rmem'" 'SO_RCVBUF.* to 1048576'
no doubled '{"net..ipv4//tcp_keepalive_time": "1"}' "'net\.\.ipv4//tcp_keepalive_time'" 'TCP_KEEPIDLE.* to 1,'
no hex '{"net.ipv4.tcp_rmem": "0x1000 0x100000 0x600000"}' 'SO_RCVBUF.* to 1048576'
no whitespace '{"net.ipv4.tcp_rmem": "\t 4096  1048576\t6291456 "}' \
	"'[\\\\]+t 4096  1048576[\\\\]+t6291456 '" 'SO_RCVBUF.* to 1048576'
no negative '{"net.ipv4.tcp_keepalive_time": "-5"}' 'TCP_KEEPIDLE.* to -5,'
no huge '{"net.ipv4.tcp_keepalive_time": "99999999999999999999"}' REASON=state_invalid \
	'not an integer as the kernel reads it' 'TCP_KEEPIDLE \(clamp 60\.\.3600\)'
no words '{"net.ipv4.tcp_rmem": "4096 lots 6291456"}' REASON=state_invalid \
	'not one to three integers \(min default max\) as the kernel reads them'
no four '{"net.ipv4.tcp_rmem": "4096 87380 6291456 1"}' REASON=state_invalid \
	'not one to three integers'
no long "$(jq -cn '{"net.ipv4.tcp_keepalive_time": ((" " * 300) + "600")}')" REASON=state_invalid \
	'longer than 256 bytes'
no toobig '{"net.ipv4.tcp_keepalive_time": "4294967297"}' REASON=state_invalid \
	'not an integer as the kernel reads it|out of the kernel'

# Within the rule, or what the node gives anyway: they start, and hold it.
yes rmem-lower '{"net.ipv4.tcp_rmem": "4096 65536 4194304"}' -- tcp_rcvbuf=65536
yes rmem-node "$(jq -cn --arg v "$NODE_RMEM" '{"net.ipv4.tcp_rmem": $v}')" -- \
	"tcp_rcvbuf=$(awk '{print $2}' <<<"$NODE_RMEM")"
yes keepidle-ok '{"net/ipv4/tcp_keepalive_time": "600\n"}' -- keepidle=600
yes keepcnt-fresh '{"net.ipv4.tcp_keepalive_probes": "9"}' -- keepcnt=9
yes keepcnt-forced '{"net.ipv4.tcp_keepalive_probes": "5"}' -- keepcnt=5
yes fin-ok '{"net.ipv4.tcp_fin_timeout": "10"}' -- linger2=10
yes cc-forced '{"net.ipv4.tcp_congestion_control": "reno\n"}' -- cc=reno
yes cc-node "{\"net.ipv4.tcp_congestion_control\": \"$NODE_CC\"}" -- "cc=$NODE_CC"
yes unmapped '{"net.ipv4.ping_group_range": "0 2147483647", "net.ipv4.ip_unprivileged_port_start": "0"}' -- \
	"cc=$NODE_CC"

# ---- 2. validate: a buffer clamp and TCP autotuning ---------------------------

out=$("$HOOK" validate "$CFG" 2>&1)
tap_like "$out" "warning: policies\.sysctls\.setsockopt: the clamp on SO_RCVBUF \(max 65536\) governs setsockopt calls only: TCP autotuning grows the receive buffer of a socket that never sets SO_RCVBUF up to net\.ipv4\.tcp_rmem's max \($(awk '{print $3}' /proc/sys/net/ipv4/tcp_rmem) on this node\)" \
	"validate warns that the SO_RCVBUF clamp does not bound autotuning"
tap_like "$out" "the clamp on SO_SNDBUF \(max 65536\).*net\.ipv4\.tcp_wmem's max" \
	"validate warns the same for SO_SNDBUF"
out=$("$HOOK" validate "$CT_EXAMPLE_CONFIG" 2>&1)
tap_like "$out" "policies\.restricted\.setsockopt: the clamp on SO_RCVBUF" \
	"validate warns about restricted's clamp in examples/config.json"

# ---- 3. Routes ---------------------------------------------------------------

NO_NET_ADMIN='.process.capabilities |= map_values(map(select(. != "CAP_NET_ADMIN")))'
for caps in net_admin no_net_admin; do
	ID=$(ct_id "routes-$caps")
	b=$(ct_bundle -c "$CFG" -a sockopt-hook.io/policy=sysctls "routes-$caps" -- sleep 600) ||
		tap_bail "cannot write a bundle"
	if [ $caps = no_net_admin ]; then
		jq "$NO_NET_ADMIN" "$b/config.json" >"$b/config.json.new" &&
			mv "$b/config.json.new" "$b/config.json"
		want=EPERM
	else
		want=ok
	fi
	ct_start_ok "routes, $caps: the container starts under sysctls" runc "$ID" "$b" || continue
	out=$(timeout 30 runc exec "$ID" routes cubic 200 "$want" 2>&1)
	tap_relay "routes, $caps" $? <<<"$out"
	if [ $caps = net_admin ]; then
		json=$("$HOOK" status --config "$CFG" --json 2>/dev/null)
		tap_ok "$(jq -e --arg id "$ID" '.[] | select(.id == $id) | .enforcement.caveats | any(.[]; .id == "route_metrics" and (.text | test("congctl.*hoplimit.*CAP_NET_ADMIN")))' <<<"$json" >/dev/null; echo $?)" \
			"status names the route_metrics caveat" || tap_diag "$json"
	fi
	ct_delete runc "$ID"
done

# ---- 4. The pod's network namespace -------------------------------------------

# Under containerd and CRI-O a pod's sysctls are its sandbox's: the pod's
# containers join the sandbox's network namespace by a path and carry no
# linux.sysctl of their own. A "sandbox" here: an unpoliced runc container
# (no hook) with the pod's sysctls, holding its network namespace.
# netns_sandbox NAME SYSCTL-JSON: sets NS_PID (empty on failure).
netns_sandbox()
{
	local b

	NS_PID=
	b=$(ct_bundle -c "$CFG" "$1" -- sleep 600) &&
		jq --argjson s "$2" 'del(.hooks) | .linux.sysctl = $s' "$b/config.json" \
			>"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json" ||
		return 1
	ct_start_ok "$1: a pod sandbox with linux.sysctl $2 starts (no hook)" runc "$(ct_id "$1")" "$b" ||
		return 1
	NS_PID=$CT_PID
}

# joining NAME POLICY PID: a bundle running sockcheck defaults in PID's
# network namespace (by its /proc path, as containerd writes it), no
# linux.sysctl, under POLICY ("" for none); prints its path.
joining()
{
	local b

	b=$(bundle "$1" null "$2") &&
		jq --arg p "/proc/$3/ns/net" 'del(.linux.sysctl) |
			.linux.namespaces |= map(if .type == "network" then . + {path: $p} else . end)' \
			"$b/config.json" >"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json" ||
		return 1
	echo "$b"
}

if netns_sandbox pod-sb '{"net.ipv4.tcp_rmem": "4096 1048576 6291456", "net.ipv4.tcp_keepalive_time": "1"}'; then
	b=$(joining pod-control "" "$NS_PID")
	started runc pod-control "$b"
	grep -qx tcp_rcvbuf=1048576 "$CT_OUT" && grep -qx keepidle=1 "$CT_OUT"
	tap_ok $? "pod: unpoliced, a container that joins the pod's namespace holds the pod's sysctls (tcp_rcvbuf=1048576, keepidle=1)" ||
		tap_diag "$(cat "$CT_OUT")"
	b=$(joining pod-app sysctls "$NS_PID")
	: >"$LOG"
	refused runc pod-app "$b" \
		"in the network namespace the container joins, sysctl 'net\.ipv4\.tcp_(rmem|keepalive_time)'" \
		'beyond what policy sysctls lets a setsockopt of (SO_RCVBUF|TCP_KEEPIDLE) reach' 'refusing'
	tap_is "$(jq -r 'select(.event == "refused") | .reason' "$LOG" 2>/dev/null)" \
		sysctl_exceeds_policy "pod: the audit line's reason is sysctl_exceeds_policy" ||
		tap_diag "$(cat "$LOG")"
	ct_delete runc "$(ct_id pod-sb)"
fi
if netns_sandbox plain-sb '{}'; then
	b=$(joining plain-app sysctls "$NS_PID")
	started runc plain-app "$b"
	grep -qx "tcp_rcvbuf=$(awk '{print $2}' <<<"$NODE_RMEM")" "$CT_OUT"
	tap_ok $? "pod without sysctls: the policed container starts, with the node's defaults" ||
		tap_diag "$(cat "$CT_OUT")"
	ct_delete runc "$(ct_id plain-sb)"
fi
# The node's own namespace holds the operator's values: never refused.
b=$(bundle hostnet null) &&
	jq 'del(.linux.sysctl) | .linux.namespaces |= map(select(.type != "network"))' \
		"$b/config.json" >"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json"
started runc hostnet "$b"

ct_check_same "after delete, BPF programs, hook state and cgroups are as before" "$BASE"
tap_done
