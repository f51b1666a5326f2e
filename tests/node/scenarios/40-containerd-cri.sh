#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# containerd 2.x through CRI, as kubelet runs pods on a systemd node
# (tests/cri/cri.py with the systemd cgroup driver), configured as an
# operator would: /etc/containerd/config.toml (version 3) with the
# example's handler as a drop-in in /etc/containerd/conf.d/
# (examples/containerd/config-v3.toml, unchanged), the
# example base spec in /etc/containerd/ (it runs what `make install` put in
# /usr/local), SystemdCgroup = true, the pause image pinned.
#  - one pod on handler sockopt, three containers: web
#    (sockopt-hook.io/policy.web: restricted), loader (containers.policy:
#    loader=bulk, the bypass), plain (no key): each sees its own policy
#    (/probe: sockcheck all and memacct), in a cri-containerd scope of the
#    pod's kubepods slice; the pause sandbox, which containerd runs
#    without the hook, gets sandbox_policy from web's prestart;
#  - open files (soft and hard) in a pod on sockopt = on the default
#    handler; a control handler with `ctr oci spec`'s rlimits in its base
#    spec (the example before 039d559) caps them at 1024;
#  - an ephemeral debug container with a target (kubectl debug --target:
#    CreateContainer with NamespaceMode TARGET, target_id web) in a pod
#    whose pod-wide key is restricted: containerd joins it to web's pid
#    namespace and the sandbox's others; it starts, sees web's processes,
#    is policed like its pod (restricted, in a scope of its own), and the
#    sandbox is policed;
#  - the annotation on the default handler: not policed (silent);
#  - the tcp_mem pressure scenario (tests/vm/guest) with the workload run
#    by CRI: a pod annotated sockopt-hook.io/bypass-prot-mem: "true" sees no
#    memory pressure, one without it does (figures);
#  - after the pods are removed: no record, no program, no scope or slice.
# node-timeout: 600
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"
SRC=$NODE_PAYLOAD/src
# shellcheck source=tests/lib/cri.sh
. "$SRC/tests/lib/cri.sh"

CRI_SOCK=/run/containerd/containerd.sock
CRI_DIR=$NODE_VAR/cri-pods
CRI_DRIVER=systemd
ETC=/etc/containerd
rm -rf "$CRI_DIR" && mkdir -p "$CRI_DIR" "$ETC/conf.d"

tap_like "$(containerd --version)" ' v?2\.[0-9]+' "containerd 2.x: $(containerd --version)"
node_cri_stubs

# --- containerd configured as an operator would (config version 3) -------

node_ctd_config --imports
# The example for containerd 2.x, as it is: containerd 2.x merges an
# imported file's plugin sections key by key (1.x replaced them whole: see
# 59-containerd-cri.sh).
cp "$SRC/examples/containerd/config-v3.toml" "$ETC/conf.d/sockopt.toml"
cp "$SRC/examples/containerd/sockopt-hook-base-spec.json" "$ETC/"
# The control: a handler whose base spec has `ctr oci spec`'s rlimits, as
# the example had before 039d559.
jq --argjson r "$(ctr oci spec | jq -c .process.rlimits)" '.process.rlimits = $r' \
	"$ETC/sockopt-hook-base-spec.json" >"$ETC/sockopt-rlimits-base-spec.json"
sed -e 's/runtimes\.sockopt/runtimes.sockopt-rlimits/' \
	-e 's/sockopt-hook-base-spec\.json/sockopt-rlimits-base-spec.json/' \
	"$ETC/conf.d/sockopt.toml" >"$ETC/conf.d/sockopt-rlimits.toml"
out=$(systemctl restart containerd 2>&1)
tap_ok $? "systemctl restart containerd with config.toml v3 and conf.d/sockopt.toml" ||
	tap_diag "$out"
VERSION=$(cri --wait 60 version 2>&1)
tap_like "$VERSION" '^containerd ' "containerd answers CRI: $VERSION" ||
	{ journalctl -u containerd --no-pager | tail -n 30 | sed 's/^/# /'; tap_bail "no CRI"; }
dump=$(containerd config dump 2>&1)
sockopt=$(sed -n "/runtimes.sockopt\]/,/runtimes.sockopt.options\]/p" <<<"$dump")
[[ $sockopt == *'pod_annotations = ['*'sockopt-hook.io/*'* &&
	$sockopt == *"$ETC/sockopt-hook-base-spec.json"* &&
	$dump == *'runtimes.runc]'* && $dump == *"$CRI_PAUSE"* ]]
tap_ok $? "the v3 drop-in merges into the CRI runtime plugin: runc, the pinned pause image and the example's handler" ||
	tap_diag "$dump"

# --- images ---------------------------------------------------------------

node_cri_images

# --- one pod, three containers --------------------------------------------

snapshot
CAPS='["NET_ADMIN", "NET_RAW"]'
SLEEPER='["sleep", "3600"]'
POD=$(cri_pod policed sockopt '{
	"sockopt-hook.io/policy.web": "restricted",
	"sockopt-hook.io/containers.policy": "loader=bulk"}' "[
	{\"name\": \"web\", \"command\": $SLEEPER, \"caps\": $CAPS},
	{\"name\": \"loader\", \"command\": $SLEEPER, \"caps\": $CAPS},
	{\"name\": \"plain\", \"command\": $SLEEPER, \"caps\": $CAPS}]")
UID_POLICED=$(jq -r .metadata.uid "$POD")
cri_run_pod "$POD"
tap_ok $? "pod on handler sockopt (RuntimeClass): sandbox and web, loader, plain started" ||
	journalctl -u containerd --no-pager | tail -n 20 | sed 's/^/# /'
SANDBOX=$CRI_SANDBOX
declare -A POLICED=()
for n in "${!CRI_IDS[@]}"; do POLICED[$n]=${CRI_IDS[$n]}; done

PROBE_OUT=$(cri_exec "${POLICED[web]}" /probe)
tap_diag "$PROBE_OUT"
check_restricted "CRI web (policy.web: restricted)"
check_charged "CRI web (restricted, no bypass)" "$(out_val memacct)"
PROBE_OUT=$(cri_exec "${POLICED[loader]}" /probe)
check_bypassed "CRI loader (containers.policy: loader=bulk)"
tap_is "$(out_val setsockopt)" ok "CRI loader (bulk): setsockopt(SO_MARK) works"
PROBE_OUT=$(cri_exec "${POLICED[plain]}" /probe)
check_unpoliced "CRI plain (no key)"

slice=kubepods-besteffort-pod${UID_POLICED//-/_}.slice
WEB_CG=$(cgroup_of "$(cri_pid "${POLICED[web]}")")
tap_like "$WEB_CG" "^/kubepods\\.slice/kubepods-besteffort\\.slice/$slice/cri-containerd-${POLICED[web]}\\.scope\$" \
	"web's cgroup: a cri-containerd scope in the pod's slice ($WEB_CG)"
tap_check "web: the hook's record" test -f "$NODE_STATE/${POLICED[web]}.json"
PAUSE_CG=$(cgroup_of "$(cri_sandbox_pid "$SANDBOX")")
tap_is "$(sh_progs "$PAUSE_CG")" "sh_sock_create" \
	"the pause sandbox ($PAUSE_CG): sandbox_policy's sock_create, from web's prestart"
tap_is "$(record_json "$SANDBOX" 2>&1 | jq -r .policy 2>&1)" @deny-sockets \
	"the pause sandbox: a record of its own (@deny-sockets)"
tap_diag "the sandbox's OCI spec hooks (containerd $(containerd --version | awk '{print $3}')): $(cri inspect-pod "$SANDBOX" | jq -c '.info.runtimeSpec.hooks // {}')"

# --- kubectl debug --target -----------------------------------------------

POD=$(cri_pod debugged sockopt '{"sockopt-hook.io/policy": "restricted"}' \
	"[{\"name\": \"web\", \"command\": $SLEEPER, \"caps\": $CAPS}]")
UID_DEBUGGED=$(jq -r .metadata.uid "$POD")
cri_run_pod "$POD"
tap_ok $? "debug: pod debugged (pod-wide restricted) with web: runs"
DEBUG_SB=$CRI_SANDBOX
DEBUG_WEB=${CRI_IDS[web]}
jq --arg image "$CRI_BUSYBOX" --argjson caps "$CAPS" '.spec.ephemeralContainers = [{
	name: "debugger", image: $image, command: ["sleep", "3600"],
	targetContainerName: "web",
	securityContext: {capabilities: {add: $caps}}}]' "$POD" >"$CRI_DIR/debugged-eph.json"
out=$(cri debug "$CRI_DIR/debugged-eph.json" "$DEBUG_SB" 2>&1)
DEBUGGER=$(jq -r '.ephemeral.debugger // empty' <<<"$out" 2>/dev/null)
tap_ok "$([ -n "$DEBUGGER" ]; echo $?)" \
	"debug: the ephemeral container targeting web starts (CreateContainer, StartContainer), not refused" ||
	{ tap_diag "$out"; journalctl -u containerd --no-pager | tail -n 10 | sed 's/^/# /'; }
if [ -n "$DEBUGGER" ]; then
	spec=$(cri inspect "$DEBUGGER" | jq -c '[.info.runtimeSpec.linux.namespaces[] | select(.path) | "\(.type)=\(.path)"]')
	web_pid=$(cri_pid "$DEBUG_WEB")
	sb_pid=$(cri_sandbox_pid "$DEBUG_SB")
	[[ $spec == *"\"pid=/proc/$web_pid/ns/pid\""* && $spec == *"\"ipc=/proc/$sb_pid/ns/ipc\""* ]]
	tap_ok $? "debug: containerd joins it to web's pid namespace and the sandbox's ipc one ($spec)"
	tap_like "$(cri_exec "$DEBUGGER" ps -o pid,args)" "sleep 3600" \
		"debug: it sees web's processes"
	PROBE_OUT=$(cri_exec "$DEBUGGER" /probe)
	check_restricted "CRI debugger (ephemeral, --target web, pod-wide restricted)"
	tap_like "$(cgroup_of "$(cri_pid "$DEBUGGER")")" "/cri-containerd-$DEBUGGER\.scope\$" \
		"debug: policed in a scope of its own"
	tap_is "$(sh_progs "$(cgroup_of "$sb_pid")")" "sh_sock_create" \
		"debug: the pod's sandbox has sandbox_policy's sock_create"
fi
cri_remove_pod "$DEBUG_SB"
tap_ok $? "debug: the pod is removed"

# --- open files, and the silent case --------------------------------------

POD=$(cri_pod default-handler "" '{"sockopt-hook.io/policy": "restricted"}' \
	"[{\"name\": \"app\", \"command\": $SLEEPER, \"caps\": $CAPS}]")
UID_DEFAULT=$(jq -r .metadata.uid "$POD")
cri_run_pod "$POD"
tap_ok $? "pod on the default handler with sockopt-hook.io/policy: restricted: runs"
DEFAULT_APP=${CRI_IDS[app]}
POD=$(cri_pod rlimits sockopt-rlimits '{}' "[{\"name\": \"app\", \"command\": $SLEEPER}]")
UID_RLIMITS=$(jq -r .metadata.uid "$POD")
cri_run_pod "$POD"
tap_ok $? "pod on the control handler sockopt-rlimits: runs"
RLIMITS_APP=${CRI_IDS[app]}
# shellcheck disable=SC2016 # expanded by the container's shell
NOFILE='echo "$(ulimit -Sn) $(ulimit -Hn)"'
nofile_sockopt=$(cri_exec "${POLICED[web]}" sh -c "$NOFILE")
nofile_default=$(cri_exec "$DEFAULT_APP" sh -c "$NOFILE")
nofile_rlimits=$(cri_exec "$RLIMITS_APP" sh -c "$NOFILE")
echo "FIGURE open files (soft hard) in a pod: default handler $nofile_default, sockopt handler $nofile_sockopt, base spec with ctr oci spec's rlimits $nofile_rlimits"
tap_is "$nofile_sockopt" "$nofile_default" \
	"open files (soft hard) on handler sockopt = on the default handler ($nofile_default)"
[ "$nofile_rlimits" = "1024 1024" ] && [ "$nofile_rlimits" != "$nofile_default" ]
tap_ok $? "control: a base spec with ctr oci spec's rlimits gives \"$nofile_rlimits\", not the default handler's"
PROBE_OUT=$(cri_exec "$DEFAULT_APP" /probe)
check_unpoliced "default handler, annotated (silent: not policed)"
tap_check "default handler: no record" test ! -e "$NODE_STATE/$DEFAULT_APP.json"

# --- the bypass under pressure, the workload run by CRI -------------------

POD=$(cri_pod bypass sockopt '{"sockopt-hook.io/bypass-prot-mem": "true"}' \
	"[{\"name\": \"app\", \"command\": $SLEEPER}]")
UID_BYPASS=$(jq -r .metadata.uid "$POD")
cri_run_pod "$POD"
tap_ok $? "pod with sockopt-hook.io/bypass-prot-mem: \"true\" on handler sockopt: runs"
BYPASS_APP=${CRI_IDS[app]}
POD=$(cri_pod nobypass sockopt '{}' "[{\"name\": \"app\", \"command\": $SLEEPER}]")
UID_NOBYPASS=$(jq -r .metadata.uid "$POD")
cri_run_pod "$POD"
tap_ok $? "pod without the annotation on handler sockopt: runs"
NOBYPASS_APP=${CRI_IDS[app]}

# /proc/sys is read-only in a container: the node sets tcp_mem (the pods
# share its network namespace), as tests/vm/guest/run.sh does with -m.
TCP_MEM=$(cat /proc/sys/net/ipv4/tcp_mem)
restore_tcp_mem() { echo "$TCP_MEM" >/proc/sys/net/ipv4/tcp_mem; }
trap restore_tcp_mem EXIT
echo "1000 1000 1000" >/proc/sys/net/ipv4/tcp_mem
# pressure NAME CONTAINER-ID: the pressure scenario in the container; sets
# P_COUNT (TcpExtTCPMemoryPressures growth)
pressure()
{
	local line

	line=$(cri --timeout 120 exec "$2" memacct pressure -n 200 -b 262144 -t 5 2>&1 | tail -n1)
	P_COUNT=$(sed -n 's/.*pressures=\([0-9]*\).*/\1/p' <<<" $line")
	echo "FIGURE CRI pressure $1: pressures=${P_COUNT:-error} $line"
}
pressure "bypass-prot-mem pod" "$BYPASS_APP"
tap_is "${P_COUNT:-error}" 0 "tcp_mem 1000 pages, CRI pod with the bypass: TCPMemoryPressures 0"
pressure "pod without the bypass" "$NOBYPASS_APP"
[[ ${P_COUNT:-} =~ ^[0-9]+$ ]] && [ "$P_COUNT" -gt 0 ]
tap_ok $? "tcp_mem 1000 pages, CRI pod without the bypass: TCPMemoryPressures ${P_COUNT:-error} > 0"
restore_tcp_mem

# --- teardown -------------------------------------------------------------

rc=0
for entry in "${CRI_PODS[@]}"; do
	cri_remove_pod "${entry%% *}" || rc=1
done
tap_ok $rc "Stop/Remove of every container and pod sandbox"
tap_is "$(cri pods)" "" "containerd lists no pod sandbox"
# kubelet's pod container manager removes the pod slices (this node has no
# kubelet: and the kubepods slices, which it would keep).
for uid in "$UID_POLICED" "$UID_DEBUGGED" "$UID_DEFAULT" "$UID_RLIMITS" "$UID_BYPASS" "$UID_NOBYPASS"; do
	systemctl stop "kubepods-besteffort-pod${uid//-/_}.slice" 2>/dev/null
done
systemctl stop kubepods-besteffort.slice kubepods.slice 2>/dev/null
# The sandboxes' records: their reapers release them as the scopes go.
wait_until 20 same_records
tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" "no hook state record left"
check_progs "the BPF programs loaded are those before the pods"
wait_until 20 test ! -d /sys/fs/cgroup/kubepods.slice
tap_ok $? "no kubepods cgroup left"
tap_is "$(systemctl list-units --all --plain --no-legend 'cri-containerd-*.scope' | wc -l)" 0 \
	"no cri-containerd scope left"

# the node's containerd as it was
node_ctd_restore "$ETC/conf.d/sockopt.toml" "$ETC/conf.d/sockopt-rlimits.toml" \
	"$ETC/sockopt-hook-base-spec.json" "$ETC/sockopt-rlimits-base-spec.json"
tap_done
