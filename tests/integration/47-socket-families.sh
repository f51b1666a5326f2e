#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What no cgroup program sees, and the seccomp profile that closes it
# under runc:
#  - a container whose policy stamps mark 7 and priority 2 and forces
#    getsockopt(SO_MARK, SO_PRIORITY) to 0 and TCP_CONGESTION to reno
#    (cubic where reno is the default):
#    sock_diag (NETLINK_SOCK_DIAG, what `ss -tie` reads) shows the real
#    mark (with CAP_NET_ADMIN), priority and congestion control; families
#    no program governs open (AF_VSOCK; AF_PACKET and SOCK_PACKET with
#    CAP_NET_RAW);
#  - the same container under examples/seccomp-socket-allowlist.json:
#    NETLINK_SOCK_DIAG gives EPROTONOSUPPORT, every family but AF_UNIX,
#    AF_INET, AF_INET6 and AF_NETLINK gives EAFNOSUPPORT (AF_VSOCK,
#    AF_PACKET, SOCK_PACKET, AF_SMC, AF_RDS, AF_RXRPC, AF_TIPC), while
#    AF_INET, AF_INET6, AF_UNIX, NETLINK_ROUTE and a TCP listener work;
#  - status names the sock_diag caveat, and (with a kernel module tree that
#    has smc and rds, OCI_SOCKOPT_HOOK_MODULES_DIR) the kernel_sockets
#    caveat; probe and validate warn about those families, and say nothing
#    on this host's own kernel, which has none of them.
#
# Modules: `families.c`, `lint.c`, `cmd_probe.c`, `cmd_validate.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc
[ -x "$CT_ROOTFS/bin/families" ] || tap_skip_all "tests/attacks/families not built (make test-progs)"
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
SECCOMP=$CT_TOP/examples/seccomp-socket-allowlist.json
# getsockopt(TCP_CONGESTION) forced to a name the socket does not have.
FORCED_CC=reno
[ "$(cat /proc/sys/net/ipv4/tcp_congestion_control)" = reno ] && FORCED_CC=cubic
# shellcheck disable=SC2016 # $cc is jq's
CFG=$(ct_config hidden '.policies.hidden = {
	"socket": {"mark": 7, "priority": 2},
	"getsockopt": [
		{"level": "SOL_SOCKET", "option": "SO_MARK", "action": "force", "value": 0},
		{"level": "SOL_SOCKET", "option": "SO_PRIORITY", "action": "force", "value": 0},
		{"level": "SOL_TCP", "option": "TCP_CONGESTION", "action": "force", "value": $cc}]}
	| .annotations.allow_policies += ["hidden"]' --arg cc "$FORCED_CC")

# start NAME [JQ-FILTER]: a detached container under policy hidden (with
# ct_bundle's CAP_NET_ADMIN and CAP_NET_RAW); sets ID.
start()
{
	ct_up -c "$CFG" -a sockopt-hook.io/policy=hidden --jq "${2:-.}" \
		--slurpfile sec "$SECCOMP" "$1" -- sleep 600
	local rc=$?
	ID=$CT_ID
	return "$rc"
}

# check LABEL ARGS...: families ARGS in container $ID, its TAP relayed.
check()
{
	local label=$1 out rc

	shift
	out=$(timeout 30 runc exec "$ID" families "$@" 2>&1)
	rc=$?
	tap_relay "$label" "$rc" <<<"$out"
}

# A kernel module tree with smc (loaded on demand: net-pf-43) and rds (no
# alias: root loads it), as Debian's 7.2 cloud kernel ships rds.
MODS=$CT_TMP/modules
mkdir -p "$MODS/kernel/net/smc" "$MODS/kernel/net/rds"
: >"$MODS/kernel/net/smc/smc.ko.xz"
: >"$MODS/kernel/net/rds/rds.ko.xz"
echo "alias net-pf-43 smc" >"$MODS/modules.alias"

# socket FAMILY TYPE PROTOCOL: the numbers, named for the test lines.
AF_UNIX="1 1 0" AF_INET="2 1 0" AF_INET6="10 1 0" ROUTE="16 3 0"
VSOCK="40 1 0" PACKET="17 3 0" SOCK_PACKET="2 10 0"
SMC="43 1 0" RDS="21 5 0" RXRPC="33 2 2" TIPC="30 5 0"

# --- 1. no seccomp profile: what no program governs ------------------------

if start open; then
	check "no seccomp" diag 7101 shows
	# shellcheck disable=SC2086 # the numbers split on purpose
	{
		check "no seccomp, AF_VSOCK" socket $VSOCK ok
		check "no seccomp, AF_PACKET with CAP_NET_RAW" socket $PACKET ok
		check "no seccomp, SOCK_PACKET with CAP_NET_RAW" socket $SOCK_PACKET ok
	}
	json=$("$HOOK" status --json 2>/dev/null)
	tap_ok "$(jq -e --arg id "$ID" '.[] | select(.id == $id) | .enforcement.caveats | any(.[]; .id == "sock_diag" and (.text | test("NETLINK_SOCK_DIAG.*seccomp-socket-allowlist")))' <<<"$json" >/dev/null; echo $?)" \
		"status: the sock_diag caveat names the seccomp example" || tap_diag "$json"
	tap_ok "$(jq -e --arg id "$ID" '.[] | select(.id == $id) | .enforcement.caveats | all(.[]; .id != "kernel_sockets")' <<<"$json" >/dev/null; echo $?)" \
		"status: no kernel_sockets caveat on this host's kernel (it offers none of those families)"
	json=$(OCI_SOCKOPT_HOOK_MODULES_DIR=$MODS "$HOOK" status --json 2>/dev/null)
	tap_ok "$(jq -e --arg id "$ID" '.[] | select(.id == $id) | .enforcement.caveats | any(.[]; .id == "kernel_sockets" and (.text | test("AF_SMC \\(loaded on demand\\), AF_RDS \\(module present\\)")))' <<<"$json" >/dev/null; echo $?)" \
		"status, a kernel whose module tree has smc (net-pf-43) and rds: the kernel_sockets caveat names both" ||
		tap_diag "$json"
	ct_delete runc "$ID"
fi

# --- 2. the seccomp example ---------------------------------------------

# shellcheck disable=SC2016 # $sec is jq's
if start allowlist '.linux.seccomp = $sec[0]'; then
	tap_like "$(timeout 30 runc exec "$ID" grep Seccomp: /proc/self/status 2>&1)" \
		'Seccomp:[[:space:]]+2' "allowlist: the container runs under a seccomp filter"
	check "allowlist" diag 7102 EPROTONOSUPPORT
	# shellcheck disable=SC2086 # the numbers split on purpose
	{
		check "allowlist, AF_INET" socket $AF_INET ok
		check "allowlist, AF_INET6" socket $AF_INET6 ok
		check "allowlist, AF_UNIX" socket $AF_UNIX ok
		check "allowlist, NETLINK_ROUTE" socket $ROUTE ok
		check "allowlist, socketpair(AF_UNIX)" pair 1 1 ok
		check "allowlist, AF_VSOCK" socket $VSOCK EAFNOSUPPORT
		check "allowlist, AF_PACKET" socket $PACKET EAFNOSUPPORT
		check "allowlist, SOCK_PACKET" socket $SOCK_PACKET EAFNOSUPPORT
		check "allowlist, IPPROTO_SMC" socket 2 1 256 EPROTONOSUPPORT
		check "allowlist, AF_SMC" socket $SMC EAFNOSUPPORT
		check "allowlist, AF_RDS" socket $RDS EAFNOSUPPORT
		check "allowlist, AF_RXRPC" socket $RXRPC EAFNOSUPPORT
		check "allowlist, AF_TIPC" socket $TIPC EAFNOSUPPORT
		check "allowlist, socketpair(AF_TIPC)" pair 30 5 EAFNOSUPPORT
	}
	out=$(timeout 30 runc exec "$ID" sockcheck listen 7103 0 2>&1)
	tap_is "$out" "listen=ok" "allowlist: a TCP listener still works"
	ct_delete runc "$ID"
fi

# --- 3. probe and validate -----------------------------------------------

out=$("$HOOK" probe 2>&1)
tap_like "$out" "families no program sees: +AF_SMC [a-z ]+, AF_RDS [a-z ]+, AF_RXRPC [a-z ]+, AF_TIPC [a-z ]+"$'\n' \
	"probe lists the families no program sees"
json=$("$HOOK" probe --json 2>/dev/null)
tap_is "$(jq -r '.unseen_socket_families | keys | join(" ")' <<<"$json")" "AF_RDS AF_RXRPC AF_SMC AF_TIPC" \
	"probe --json: unseen_socket_families"
if [ "$(jq -r '[.unseen_socket_families[]] | unique | join(" ")' <<<"$json")" = absent ]; then
	[[ $out != *"this kernel offers"* ]]
	tap_ok $? "probe: no warning on this host's kernel (none offered)"
else
	tap_like "$out" "warning: this kernel offers" "probe: this host's kernel offers some: a warning"
fi
out=$(OCI_SOCKOPT_HOOK_MODULES_DIR=$MODS "$HOOK" probe 2>&1 >/dev/null)
tap_like "$out" "warning: this kernel offers AF_SMC \(loaded on demand\), AF_RDS \(module present\): .*seccomp-socket-allowlist\.json" \
	"probe warns when the module tree has smc and rds, naming the seccomp example"
json=$(OCI_SOCKOPT_HOOK_MODULES_DIR=$MODS "$HOOK" probe --json 2>&1)
tap_ok "$(jq -e '(.unseen_socket_families | .AF_SMC == "loaded on demand" and .AF_RDS == "module present") and (.warnings | length == 1 and (.[0] | test("^this kernel offers AF_SMC")))' <<<"$json" >/dev/null; echo $?)" \
	"probe --json: the families' states, and the warning in \"warnings\" (stdout and stderr together still parse)" ||
	tap_diag "$json"
json=$(OCI_SOCKOPT_HOOK_MODULES_DIR=$MODS "$HOOK" validate --json "$CT_EXAMPLE_CONFIG" 2>/dev/null)
tap_ok "$(jq -e '.valid and any(.warnings[]; test("^this kernel offers AF_SMC .*AF_RDS"))' <<<"$json" >/dev/null; echo $?)" \
	"validate warns about them too (the config is valid)" || tap_diag "$json"

ct_check_same "after the containers: BPF programs, hook state and cgroups are as before" "$BASE"
tap_done
