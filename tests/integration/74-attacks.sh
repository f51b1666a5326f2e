#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A hostile workload against the datapath, under real runc: each program in
# tests/attacks/ tries one way around a rule inside a policed container and
# asserts the kernel's final state (see each program's header):
#   longbuf   values longer than a page, IPv4's 1-byte values
#   values    bits the kernel reads otherwise than as a signed int
#   aliases   SOL_UDPLITE, *FORCE, *_NEW, BINDTOIFINDEX, SOL_IP on AF_INET6
#   getshort  getsockopt into short buffers under a forced value
#   mptcp     an MPTCP socket, which forwards SOL_SOCKET and SOL_TCP options
#             to its TCP subflows; and the known gap: subflows carry the
#             stamped mark only after a setsockopt on the MPTCP socket (a
#             listener's never), closed by denying IPPROTO_MPTCP, as the
#             example policies that stamp a mark do.
# A control run of the same programs, in a container whose policy only
# stamps mark 7 (no option rule; a non-zero mark, so that the forced
# SO_MARK 0 of getshort differs from the real one), shows each attack,
# check by check, does change the kernel's state when nothing stops it:
# every check of every program fails there. Under "getforce", sock_diag
# (ss -e, which no getsockopt rule hides) shows the mark 7 the kernel
# really stamped.
#
# Modules: (the BPF programs)
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

for p in longbuf values aliases getshort; do
	[ -x "$CT_BUILD/tests/attacks/$p" ] ||
		tap_skip_all "$CT_BUILD/tests/attacks/$p not built (run make test-progs)"
done
ct_setup runc
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR

# shellcheck disable=SC2016 # jq program
CFG=$(ct_config attacks '
	def set(l; o; a): {level: l, option: o, action: a};
	def clamp(l; o; m): set(l; o; "clamp") + {max: m};
	.annotations.allow_policies += ["attacks", "getforce"] |
	.policies.attacks = {
		socket: {mark: 7},
		setsockopt: [
			clamp("SOL_SOCKET"; "SO_RCVBUF"; 65536),
			clamp("SOL_SOCKET"; "SO_SNDBUF"; 65536),
			clamp("SOL_SOCKET"; "SO_RCVLOWAT"; 1000),
			clamp("SOL_SOCKET"; "SO_KEEPALIVE"; 0),
			clamp("SOL_SOCKET"; "SO_PRIORITY"; 6),
			clamp("SOL_SOCKET"; "SO_MAX_PACING_RATE"; 1000000),
			clamp("SOL_TCP"; "TCP_NOTSENT_LOWAT"; 131072),
			clamp("SOL_IP"; "IP_TOS"; 32),
			clamp("SOL_IP"; "IP_TTL"; 32),
			clamp("SOL_IPV6"; "IPV6_UNICAST_HOPS"; 32),
			set("SOL_TCP"; "TCP_CONGESTION"; "force") + {value: "reno"},
			set("SOL_UDP"; "UDP_CORK"; "deny"),
			set("SOL_SOCKET"; "SO_TIMESTAMP"; "deny"),
			set("SOL_SOCKET"; "SO_RCVTIMEO"; "deny"),
			set("SOL_SOCKET"; "SO_BINDTODEVICE"; "deny"),
			set("SOL_SOCKET"; "SO_MARK"; "deny")]} |
	.annotations.allow_policies += ["stamp"] |
	.policies.stamp = {socket: {mark: 7}} |
	.policies.getforce = {
		socket: {mark: 7},
		getsockopt: [
			set("SOL_SOCKET"; "SO_MARK"; "force") + {value: 0},
			set("SOL_TCP"; "TCP_CONGESTION"; "force") + {value: "reno"},
			set("SOL_IP"; "IP_TTL"; "force") + {value: 5},
			set("SOL_SOCKET"; "SO_MAX_PACING_RATE"; "force") + {value: 12345}]}') ||
	{ echo "Bail out! cannot write the operator config"; exit 1; }

# start NAME [ct_bundle options...]: a detached container running sleep;
# sets ID and PID.
start()
{
	local name=$1

	shift
	ID=$(ct_id "$name")
	ct_up -c "$CFG" "$@" "$name" -- sleep 600 || return 1
	PID=$CT_PID
}

# attack PROGRAM: runs it in the container $ID and relays its results.
attack()
{
	local out rc

	out=$(timeout 60 runc exec "$ID" "$1" 2>&1)
	rc=$?
	tap_relay "$1" "$rc" <<<"$out"
}

# ---- Control: nothing stops the attacks in a container with no rule -------

# control PROGRAM: runs it in $ID; each of its checks must fail there (the
# attack changed the kernel's state), one TAP line per check.
control()
{
	local out rc line n=0

	out=$(timeout 60 runc exec "$ID" "$1" 2>&1)
	rc=$?
	while IFS= read -r line; do
		case $line in
		"not ok "*)
			n=$((n + 1))
			tap_ok 0 "control: $1: the attack gets through: $(tap_description "$line")"
			;;
		"ok "*)
			n=$((n + 1))
			tap_ok 1 "control: $1: the attack gets through: $(tap_description "$line") (holds with no rule: the check cannot fail)"
			;;
		esac
	done <<<"$out"
	[ "$rc" != 0 ] && [ "$n" -gt 0 ]
	tap_ok $? "control: $1 ran its checks ($n, exit $rc)" || tap_diag "$out"
}

if start control -a sockopt-hook.io/policy=stamp; then
	for p in longbuf values aliases getshort; do
		control "$p"
	done
	ct_delete runc "$ID"
fi

# held MODE: runs "mptcp MODE" in $ID with its connection held open; sets
# OUT (its TAP) and SUBFLOWS (ss -tnie of the container's netns meanwhile).
held()
{
	ct_hold "mptcp-$1" timeout 60 runc exec "$ID" mptcp "$1" || return 1
	ct_wait_for "$CT_TMP/mptcp-$1.out" '^held'
	SUBFLOWS=$(nsenter -t "$PID" -n ss -tnie state established 2>&1)
	ct_release
	OUT=$(cat "$CT_TMP/mptcp-$1.out")
	return 0
}

# ---- The attacks under their policies ----------------------------------------

if start attacks -a sockopt-hook.io/policy=attacks; then
	for p in longbuf values aliases; do
		attack "$p"
	done
	held hold
	tap_relay mptcp 0 <<<"$(grep -v '^held' <<<"$OUT")"
	tap_diag "subflows:" "$SUBFLOWS"
	tap_is "$(grep -c 'tcp-ulp-mptcp' <<<"$SUBFLOWS")" 2 \
		"mptcp: ss sees the connection's two TCP subflows"
	held quiet
	tap_diag "subflows of a quiet connection:" "$SUBFLOWS"
	tap_is "$(grep -c 'tcp-ulp-mptcp' <<<"$SUBFLOWS") $(grep -c 'fwmark:0x7' <<<"$SUBFLOWS")" "2 0" \
		"mptcp gap: with no option set, neither subflow carries the stamped mark 0x7 (the kernel syncs it only after a setsockopt)"
	ct_delete runc "$ID"
fi
if start restricted -a sockopt-hook.io/policy=restricted; then
	out=$(timeout 60 runc exec "$ID" mptcp quiet 2>&1 </dev/null)
	tap_like "$out" 'not ok 1 - socket\(AF_INET, SOCK_STREAM, IPPROTO_MPTCP\) works \(EPERM\)' \
		"mptcp mitigation: the example restricted policy, which stamps a mark, denies IPPROTO_MPTCP (EPERM)"
	ct_delete runc "$ID"
fi
if start getforce -a sockopt-hook.io/policy=getforce; then
	attack getshort
	if ct_hold getshort-hold timeout 60 runc exec "$ID" getshort hold &&
		ct_wait_for "$CT_TMP/getshort-hold.out" '^held'; then
		listen=$(nsenter -t "$PID" -n ss -tlne 2>&1)
		ct_release
		tap_like "$listen" '127\.0\.0\.1:[0-9]+ .*fwmark:0x7\b' \
			"getforce: sock_diag shows the listener's real mark 0x7 (the stamp applied; getsockopt shows the forced 0)"
	else
		tap_ok 1 "getforce: getshort hold runs ($(cat "$CT_TMP/getshort-hold.out" 2>&1))"
	fi
	ct_delete runc "$ID"
fi

ct_check_same "after the containers are deleted, BPF programs, hook state and cgroups are as before" \
	"$BASE"
tap_done
