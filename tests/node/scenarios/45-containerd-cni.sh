#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The pod sandbox policed on a containerd 2.x node with a pod network
# containerd configured as in 40-containerd-cri.sh
# (the example's handler, the systemd cgroup driver) plus a CNI bridge
# network (Debian's containernetworking-plugins: bridge, host-local,
# loopback). containerd runs no hook for the pause container (it builds the
# sandbox's spec without the handler's base spec), so the pod's first
# container polices its sandbox with the built-in sandbox_policy
# (@deny-sockets: no AF_INET or AF_INET6 socket).
#  - a pod with its own network namespace, shareProcessNamespace and
#    runAsUser 65535, on handler sockopt, policy restricted: CNI sets its
#    network up (RunPodSandbox succeeds, the pod has an address of the
#    bridge's subnet, eth0 inside); the sandbox's cgroup has sh_sock_create
#    and a record of its own; the app reaches a server on the node (the
#    bridge's gateway) and one in another pod over TCP;
#  - the app, as the pause process's uid and without capabilities, traces
#    the pause process and makes it call socket(): EPERM
#    (tests/attacks/sandbox_ptrace; skipped where Yama forbids tracing);
#  - the pods removed: CNI released their addresses (no lease left), no
#    record (the reaper released the sandbox's), no program, no scope;
#  - probe and validate name the families the node's kernel offers whose
#    TCP/UDP no cgroup program sees (its module tree has rds).
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"
SRC=$NODE_PAYLOAD/src
# shellcheck source=tests/lib/cri.sh
. "$SRC/tests/lib/cri.sh"

CRI_SOCK=/run/containerd/containerd.sock
CRI_DIR=$NODE_VAR/cri-cni
CRI_DRIVER=systemd
ETC=/etc/containerd
CNI_NAME=sockopt-test
CNI_CONF=/etc/cni/net.d/10-$CNI_NAME.conflist
BRIDGE=sockopt0
SUBNET=10.88.77
GATEWAY=$SUBNET.1
rm -rf "$CRI_DIR" && mkdir -p "$CRI_DIR" "$ETC/conf.d" /etc/cni/net.d

out=$("$SRC/tests/cri/gen-stubs.sh" "$NODE_VAR" 2>&1)
case $? in
0) CRI_STUBS=$(tail -n1 <<<"$out") ;;
77) tap_diag "$out"; tap_skip_all "no CRI stubs here: $(tail -n1 <<<"$out")" ;;
*) tap_diag "$out"; tap_bail "tests/cri/gen-stubs.sh failed" ;;
esac
CNI_BIN=
for d in /usr/lib/cni /opt/cni/bin; do
	[ -x "$d/bridge" ] && [ -x "$d/host-local" ] && [ -x "$d/loopback" ] && CNI_BIN=$d && break
done
[ -n "$CNI_BIN" ] || tap_skip_all "no CNI plugins (containernetworking-plugins) on this node"
tap_ok 0 "CNI plugins in $CNI_BIN"

# --- containerd with a CNI network, as an operator would set it ----------

node_ctd_config --imports "[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dirs = [\"$CNI_BIN\"]
  conf_dir = \"/etc/cni/net.d\""
cp "$SRC/examples/containerd/config-v3.toml" "$ETC/conf.d/sockopt.toml"
cp "$SRC/examples/containerd/sockopt-hook-base-spec.json" "$ETC/"
cat >"$CNI_CONF" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NAME",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$SUBNET.0/24"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}}
  ]
}
EOF
out=$(systemctl restart containerd 2>&1)
tap_ok $? "systemctl restart containerd with the CNI network $CNI_NAME and the example's handler" ||
	tap_diag "$out"
VERSION=$(cri --wait 60 version 2>&1)
tap_like "$VERSION" '^containerd ' "containerd answers CRI: $VERSION" ||
	{ journalctl -u containerd --no-pager | tail -n 30 | sed 's/^/# /'; tap_bail "no CRI"; }

# --- images (as 40-containerd-cri.sh) -------------------------------------

mkdir -p "$CRI_DIR/pause-bin"
cp "$NODE_PAYLOAD/bin/pause" "$CRI_DIR/pause-bin/pause" 2>/dev/null ||
	tap_skip_all "no tests/progs/pause in the payload"
cri_images "$CRI_DIR/images" "$NODE_ROOTFS" "$CRI_DIR/pause-bin/pause"
out=$(for img in busybox pause; do
	ctr -n k8s.io images import "$CRI_DIR/images/$img.tar" 2>&1 || echo "import $img failed"
done)
ids=$(cri image-id "$CRI_BUSYBOX" && cri image-id "$CRI_PAUSE")
tap_like "$ids" '^sha256:[0-9a-f]{64}'$'\n''sha256:[0-9a-f]{64}$' \
	"the busybox and pause images are in CRI's store" || tap_diag "$out" "$ids"

snapshot

# --- a pod with a network of its own, its sandbox policed -----------------

SPEC='{"hostNetwork": false, "shareProcessNamespace": true,
	"securityContext": {"runAsUser": 65535, "runAsGroup": 65535}}'
POD=$(cri_pod net sockopt '{"sockopt-hook.io/policy": "restricted"}' \
	'[{"name": "app", "command": ["sleep", "3600"]}]' "$SPEC")
UID_NET=$(jq -r .metadata.uid "$POD")
cri_run_pod "$POD"
tap_ok $? "pod net (own network, shared pid namespace, uid 65535) on handler sockopt: RunPodSandbox (CNI ADD) and the app start" ||
	journalctl -u containerd --no-pager | tail -n 20 | sed 's/^/# /'
SANDBOX=$CRI_SANDBOX
APP=${CRI_IDS[app]}
POD_IP=$(cri pod-ip "$SANDBOX")
tap_like "$POD_IP" "^${SUBNET//./\\.}\\.[0-9]+$" "the pod has an address on the CNI bridge's subnet: $POD_IP"
tap_like "$(cri_exec "$APP" ip -4 addr show eth0)" "inet $POD_IP/24" "the app sees it on eth0"

PAUSE_PID=$(cri_sandbox_pid "$SANDBOX")
PAUSE_CG=$(cgroup_of "$PAUSE_PID")
tap_is "$(sh_progs "$PAUSE_CG")" "sh_sock_create" \
	"the sandbox's cgroup ($PAUSE_CG) has sandbox_policy's sock_create program"
tap_is "$(record_json "$SANDBOX" 2>&1 | jq -r '"\(.policy) \(.policy_source)"' 2>&1)" \
	"@deny-sockets sandbox_policy" "the sandbox has a record of its own: @deny-sockets, from sandbox_policy"
tap_is "$(sed -n 's/^Uid:\t\([0-9]*\).*/\1/p' "/proc/$PAUSE_PID/status")" 65535 \
	"the pause process runs as uid 65535 (runAsUser)"

# servers: one on the node, at the bridge's gateway; one in another pod
mkdir -p "$CRI_DIR/www" && echo node-says-hello >"$CRI_DIR/www/hello"
busybox httpd -f -p "$GATEWAY:8080" -h "$CRI_DIR/www" &
HTTPD=$!
POD=$(cri_pod peer "" '{}' \
	'[{"name": "web", "command": ["httpd", "-f", "-p", "8081", "-h", "/etc"]}]' \
	'{"hostNetwork": false}')
UID_PEER=$(jq -r .metadata.uid "$POD")
cri_run_pod "$POD"
tap_ok $? "pod peer (own network, default handler) serves on 8081"
PEER_SANDBOX=$CRI_SANDBOX
PEER_IP=$(cri pod-ip "$PEER_SANDBOX")
wait_until 10 bash -c "exec 3<>/dev/tcp/$GATEWAY/8080" 2>/dev/null
tap_is "$(cri_exec "$APP" wget -q -O - "http://$GATEWAY:8080/hello")" node-says-hello \
	"the app reaches the node at the bridge's gateway ($GATEWAY:8080) over TCP"
tap_like "$(cri_exec "$APP" wget -q -O - "http://$PEER_IP:8081/passwd")" '^root:' \
	"the app reaches the peer pod ($PEER_IP:8081) over TCP"
PROBE_OUT=$(cri_exec "$APP" sockcheck all)
tap_is "$(out_val socket_inet6_stream) $(out_val cc)" "EPERM reno" "the app itself is policed (restricted)"

# --- the attack, on the node ------------------------------------------------

SCOPE=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [ "$SCOPE" != 0 ]; then
	tap_skip "sandbox_ptrace" "kernel.yama.ptrace_scope is $SCOPE here: no process may trace a non-descendant"
elif [ ! -x "$NODE_ROOTFS/bin/sandbox_ptrace" ]; then
	tap_skip "sandbox_ptrace" "tests/attacks/sandbox_ptrace is not in the payload"
else
	out=$(cri exec "$APP" sandbox_ptrace 1 EPERM 2>&1)
	tap_relay "attack from the app" "$?" <<<"$out"
fi

# --- the kernel's other families ------------------------------------------

if ls /lib/modules/"$(uname -r)"/kernel/net/rds/rds.ko* >/dev/null 2>&1; then
	tap_like "$("$NODE_HOOK" probe 2>&1 >/dev/null)" "warning: this kernel offers .*AF_RDS \(module present\)" \
		"probe: this kernel's module tree has rds: a warning naming it"
	tap_ok "$("$NODE_HOOK" validate --json "$NODE_CONFIG" 2>/dev/null |
		jq -e 'any(.warnings[]; test("AF_RDS"))' >/dev/null; echo $?)" \
		"validate: the same warning"
else
	tap_skip "families" "no rds module in this kernel's tree"
fi

# --- teardown -----------------------------------------------------------

kill "$HTTPD" 2>/dev/null
rc=0
for entry in "${CRI_PODS[@]}"; do
	cri_remove_pod "${entry%% *}" || rc=1
done
tap_ok $rc "Stop/Remove of both pods (CNI DEL)"
leases=$(find "/var/lib/cni/networks/$CNI_NAME" -name "$SUBNET.*" 2>/dev/null)
tap_is "$leases" "" "CNI released the pods' addresses"
for uid in "$UID_NET" "$UID_PEER"; do
	systemctl stop "kubepods-besteffort-pod${uid//-/_}.slice" 2>/dev/null
done
systemctl stop kubepods-besteffort.slice kubepods.slice 2>/dev/null
wait_until 20 test ! -e "$NODE_STATE/$SANDBOX.json"
tap_ok $? "the reaper released the sandbox's record"
wait_until 20 same_records
tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" "no hook state record left"
check_progs "the BPF programs loaded are those before the pods"
tap_is "$(systemctl list-units --all --plain --no-legend 'cri-containerd-*.scope' | wc -l)" 0 \
	"no cri-containerd scope left"

ip link del "$BRIDGE" 2>/dev/null
node_ctd_restore "$ETC/conf.d/sockopt.toml" "$ETC/sockopt-hook-base-spec.json" "$CNI_CONF"
tap_done
