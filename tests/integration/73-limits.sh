#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What a socket policy does not hold against, and the mitigation for each,
# in real runc containers under real policies. The attack programs
# (tests/attacks/) assert what the other end of the packet saw.
#   1. Per-packet control messages (UDP sendmsg) set what the setsockopt
#      rules police: SO_MARK (with CAP_NET_RAW or CAP_NET_ADMIN),
#      SO_PRIORITY, IP_TOS (which also sets the packet's priority), IP_TTL,
#      IPV6_TCLASS and IPV6_HOPLIMIT. Without both capabilities the SO_MARK
#      cmsg gives EPERM and SO_PRIORITY stops at 6; the rest is rewritten by
#      netfilter rules in the container's netns, matched on its cgroup.
#   2. A priority stamped by cgroup/sock_create is overridden by
#      setsockopt(SO_PRIORITY, 0-6) without privilege and by
#      setsockopt(IP_TOS); the example "restricted" policy denies both and
#      the stamp holds; forcing SO_PRIORITY to the stamp and IP_TOS to 0
#      holds it too. The SO_PRIORITY and IP_TOS cmsgs still set the
#      priority of single packets.
#   3. Packet sockets never reach cgroup/sock_create: with CAP_NET_RAW a
#      container sends frames with any TTL/TOS and without the stamp, through
#      socket(AF_PACKET), socket(AF_INET, SOCK_PACKET), io_uring and the
#      i386 syscalls. Dropping CAP_NET_RAW refuses them all, and so does
#      examples/seccomp-no-packet.json; a naive profile (socket(AF_PACKET)
#      only) misses SOCK_PACKET and io_uring.
#
# Modules: (the BPF programs)
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

for p in cmsg priority packet; do
	[ -x "$CT_BUILD/tests/attacks/$p" ] ||
		tap_skip_all "$CT_BUILD/tests/attacks/$p not built (run make test-progs)"
done
tap_require_cmd iptables ip6tables
ct_setup runc
SECCOMP=$CT_TOP/examples/seccomp-no-packet.json
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
tap_diag "kernel $(uname -r)"

# "sockopts" polices at the socket every value a cmsg can set; "stamp"
# only stamps a mark and a priority, as a policy might without denying;
# "stampforce" keeps its stamp by forcing SO_PRIORITY to it and IP_TOS to 0
# (__ip_sock_set_tos leaves sk_priority alone when the TOS does not change).
# shellcheck disable=SC2016
CFG=$(ct_config limits '
	def rule(l; o; a): {level: l, option: o, action: a};
	.annotations.allow_policies += ["sockopts", "stamp", "stampforce"] |
	.policies.stamp = {socket: {mark: 7, priority: 2}} |
	.policies.stampforce = {socket: {mark: 7, priority: 2}, setsockopt: [
		rule("SOL_SOCKET"; "SO_PRIORITY"; "force") + {value: 2},
		rule("SOL_IP"; "IP_TOS"; "force") + {value: 0}]} |
	.policies.sockopts = {socket: {mark: 7, priority: 2}, setsockopt: [
		rule("SOL_SOCKET"; "SO_MARK"; "deny"),
		rule("SOL_SOCKET"; "SO_PRIORITY"; "deny"),
		rule("SOL_IP"; "IP_TOS"; "deny"),
		rule("SOL_IP"; "IP_TTL"; "clamp") + {max: 64},
		rule("SOL_IPV6"; "IPV6_TCLASS"; "deny"),
		rule("SOL_IPV6"; "IPV6_UNICAST_HOPS"; "clamp") + {max: 64}]}') ||
	{ echo "Bail out! cannot write the operator config"; exit 1; }

# jq filters for the bundle. The test bundles grant CAP_NET_ADMIN and
# CAP_NET_RAW (ct_bundle); these take them away again.
NO_NET_CAPS='.process.capabilities |= map_values(map(select(. != "CAP_NET_RAW" and . != "CAP_NET_ADMIN")))'
NO_NET_RAW='.process.capabilities |= map_values(map(select(. != "CAP_NET_RAW")))'
# A frame for 127.0.0.1 arriving on lo is a martian unless route_localnet.
LOCALNET='.linux.sysctl = {"net.ipv4.conf.lo.route_localnet": "1"}'

# start NAME POLICY JQ-FILTER [JQ-ARGS...]: a detached container running
# sleep under POLICY; sets ID and CG.
start()
{
	local name=$1 policy=$2 filter=$3

	shift 3
	ID=$(ct_id "$name")
	CG=
	ct_up --desc "$name: container starts under policy $policy" --jq "$filter" "$@" \
		-c "$CFG" -a "sockopt-hook.io/policy=$policy" "$name" -- sleep 600 || return 1
	CG=$CT_CG
}

# attack LABEL PROGRAM ARGS...: runs an attack program in the container
# and relays its TAP lines.
attack()
{
	local label=$1 out rc

	shift
	out=$(timeout 30 runc exec "$ID" "$@" 2>&1)
	rc=$?
	tap_relay "$label" "$rc" <<<"$out"
}

# killed LABEL PROGRAM ARGS...: the program must die of SIGSYS (exit 159)
# before it prints a result.
killed()
{
	local label=$1 out rc

	shift
	out=$(timeout 30 runc exec "$ID" "$@" 2>&1)
	rc=$?
	[ "$rc" = 159 ] && ! grep -q '^ok ' <<<"$out"
	tap_ok $? "$label: '$*' is killed by SIGSYS (exit $rc, want 159)" ||
		tap_diag "$out"
}

# ---- 1. Per-packet control messages -----------------------------------------

if start cmsg sockopts '.'; then
	attack "cmsg, CAP_NET_RAW" cmsg mark 99 EPERM 99
	attack "cmsg, CAP_NET_ADMIN" cmsg priority 9 EPERM 9
	attack "cmsg" cmsg tos 184 EPERM 184 4
	attack "cmsg" cmsg ttl 255 64 255
	attack "cmsg" cmsg tclass 184 EPERM 184
	attack "cmsg" cmsg hoplimit 255 64 255
	ct_delete runc "$ID"
fi

if start cmsg-nocaps sockopts "$NO_NET_CAPS"; then
	attack "cmsg, no CAP_NET_RAW/CAP_NET_ADMIN" cmsg mark 99 EPERM EPERM
	attack "cmsg, no CAP_NET_RAW/CAP_NET_ADMIN" cmsg priority 7 EPERM EPERM
	attack "cmsg, no CAP_NET_RAW/CAP_NET_ADMIN, 0-6 stay open" \
		cmsg priority 6 EPERM 6
	# The operator's rules, in the container's netns (which the container
	# cannot change without CAP_NET_ADMIN), for its cgroup only.
	nf_ok=0
	path=${CG#"$CT_CG2"}
	for ipt in iptables ip6tables; do
		for target in "DSCP --set-dscp 0" "CLASSIFY --set-class 0:2" \
			"MARK --set-mark 7" \
			"$([ $ipt = iptables ] && echo "TTL --ttl-set" || echo "HL --hl-set") 64"; do
			# shellcheck disable=SC2086
			out=$(nsenter -t "$CT_PID" -n $ipt -t mangle -A OUTPUT \
				-m cgroup --path "$path" -j $target 2>&1) ||
				{ nf_ok=1; tap_diag "$ipt -j $target: $out"; }
		done
	done
	tap_ok $nf_ok "netfilter: mangle OUTPUT rules in the container's netns, for cgroup $path"
	attack "cmsg, netfilter" cmsg tos 184 EPERM 0 2
	attack "cmsg, netfilter" cmsg ttl 255 64 64
	attack "cmsg, netfilter" cmsg tclass 184 EPERM 0
	attack "cmsg, netfilter" cmsg hoplimit 255 64 64
	attack "cmsg, netfilter" cmsg priority 6 EPERM 2
	out=$(timeout 30 runc exec "$ID" ip addr add 192.0.2.9/32 dev lo 2>&1)
	tap_ok $((!$?)) "netfilter: the container cannot change its netns (ip addr add: ${out:-ok}), so it cannot remove the rules"
	ct_delete runc "$ID"
fi

# ---- 2. SO_PRIORITY and IP_TOS against a stamped priority --------------------

if start stamp stamp "$NO_NET_CAPS"; then
	attack "stamp only, unprivileged" priority 2 ok:6 ok:6
	ct_delete runc "$ID"
fi
if start stampforce stampforce "$NO_NET_CAPS"; then
	attack "stamp, SO_PRIORITY and IP_TOS forced" priority 2 ok:2 ok:2
	attack "stamp, IP_TOS forced to 0, per packet" cmsg tos 16 0 16 6
	ct_delete runc "$ID"
fi
if start restricted restricted '.'; then
	tap_is "$(jq -c '[.policies.restricted.setsockopt[] | select(.action == "deny") | .option]' "$CT_EXAMPLE_CONFIG")" \
		'["SO_MARK","SO_PRIORITY","IP_TOS"]' \
		"restricted (examples/config.json) denies SO_MARK, SO_PRIORITY and IP_TOS, as it stamps mark 7 and priority 2"
	attack "restricted, CAP_NET_ADMIN" priority 2 EPERM:2 EPERM:2
	attack "restricted, per packet" cmsg priority 6 EPERM 6
	attack "restricted, per packet" cmsg tos 16 EPERM 16 6
	ct_delete runc "$ID"
fi

# ---- 3. Packet sockets -------------------------------------------------------

HOWS=(af_packet sock_packet uring int80 socketcall)
if start packet restricted "$LOCALNET"; then
	tap_is "$(timeout 30 runc exec "$ID" sockcheck socket inet raw)" \
		"socket_inet_raw=EPERM" "packet: the policy denies socket(AF_INET, SOCK_RAW)"
	for how in "${HOWS[@]}"; do
		attack "packet, CAP_NET_RAW" packet "$how" sent
	done
	attack "packet, CAP_NET_RAW" packet af_xdp opens
	ct_delete runc "$ID"
fi

if start packet-noraw restricted "$NO_NET_RAW | $LOCALNET"; then
	for how in "${HOWS[@]}" af_xdp; do
		attack "packet, no CAP_NET_RAW (CAP_NET_ADMIN kept)" packet "$how" EPERM
	done
	ct_delete runc "$ID"
fi

# shellcheck disable=SC2016 # $sec is a jq variable
if start packet-seccomp restricted "$LOCALNET"' | .linux.seccomp = $sec[0]' \
	--slurpfile sec "$SECCOMP"; then
	tap_like "$(grep '^Seccomp:' "/proc/$CT_PID/status")" '2$' \
		"seccomp-no-packet: the container runs under a seccomp filter"
	tap_is "$(timeout 30 runc exec "$ID" sockcheck socket inet dgram)" \
		"socket_inet_dgram=ok" "seccomp-no-packet: socket(AF_INET, SOCK_DGRAM) still works"
	for how in af_packet sock_packet uring af_xdp; do
		attack "seccomp-no-packet, CAP_NET_RAW" packet "$how" EPERM
	done
	killed "seccomp-no-packet" packet int80 EPERM
	killed "seccomp-no-packet" packet socketcall EPERM
	ct_delete runc "$ID"
fi

# A naive profile: only socket(AF_PACKET, ...), with the i386 ABI allowed.
# shellcheck disable=SC2016
if start packet-naive restricted "$LOCALNET"' | .linux.seccomp = ($sec[0] |
	.architectures += ["SCMP_ARCH_X86"] | .syscalls = .syscalls[:1])' \
	--slurpfile sec "$SECCOMP"; then
	attack "naive seccomp" packet af_packet EPERM
	attack "naive seccomp" packet int80 EPERM
	attack "naive seccomp misses SOCK_PACKET" packet sock_packet sent
	attack "naive seccomp misses io_uring" packet uring sent
	# runc's libseccomp applies the socket rule to socketcall too.
	attack "naive seccomp" packet socketcall EPERM
	ct_delete runc "$ID"
fi

ct_check_same "after all containers are deleted, BPF programs, hook state and cgroups are as before" \
	"$BASE"
tap_done
