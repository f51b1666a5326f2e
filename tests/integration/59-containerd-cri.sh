#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Pods through containerd's CRI, as kubelet runs them: a private
# Debian 12 containerd 1.6 (config version 2, the handler of
# examples/containerd/config.toml as a drop-in, its base runtime spec
# pointed at the built hook), driven by tests/cri/cri.py with kubelet's
# messages (cgroupfs driver, host network). What the workload sees, by
# ExecSync of sockcheck in the containers:
#  - one pod on the "sockopt" handler, three containers: web
#    (sockopt-hook.io/policy.web: restricted), loader (the list form,
#    sockopt-hook.io/containers.policy: loader=setonly), plain (no key):
#    each gets its own policy; the pause sandbox (which containerd runs
#    without the hook) gets sandbox_policy from web's prestart, and a
#    record its reaper releases;
#  - the open-files limit of a pod on "sockopt" equals that of a pod on
#    the default handler, where a handler whose base spec carries
#    `ctr oci spec`'s process.rlimits (the example before 039d559) caps
#    it at 1024: SOCKOPT_BASE_SPEC=<that file> makes the check fail;
#  - an ephemeral debug container with a target (kubectl debug --target:
#    CreateContainer with NamespaceMode TARGET and target_id) in a pod
#    whose pod-wide key is restricted: it starts in the target's pid
#    namespace, policed like its pod;
#  - a pod with the annotation on the default handler (no RuntimeClass) is
#    not policed: the silent case, as it is today;
#  - after the pods are removed and containerd stopped: no record, no
#    program, no cgroup, no mount, nothing in /run/containerd.
#
# Modules: `container.c`, `policy.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/cri.sh
. "$here/../lib/cri.sh"
# shellcheck source=../lib/ctd.sh
. "$here/../lib/ctd.sh"

EXAMPLES=$CT_TOP/examples/containerd
SOCKOPT_BASE_SPEC=${SOCKOPT_BASE_SPEC:-$EXAMPLES/sockopt-hook-base-spec.json}

ctd_require

ct_init
BASE=$(ct_snapshot)
ctd_init
CRI_DIR=$CT_TMP/cri
LOG=$CT_TMP/hook.log
HOOK_CONFIG=$(ct_config cri ". + {log_file: \"$LOG\", log_level: \"debug\"}")
mkdir -p "$CRI_DIR"

# shellcheck disable=SC2317 # the EXIT trap calls it
cleanup()
{
	ctd_cleanup
	ct_cleanup
}
trap cleanup EXIT

# --- containerd 1.6, config version 2 with drop-ins ------------------------

# base_spec OUT [JQ]: the example's base spec with the hooks pointed at the
# built hook, the test's config and state dir.
base_spec()
{
	jq --arg hook "$HOOK" --arg cfg "OCI_SOCKOPT_HOOK_CONFIG=$HOOK_CONFIG" \
		--arg state "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" \
		--arg pins "OCI_SOCKOPT_HOOK_PIN_DIR=$CT_PIN_DIR" \
		--arg path "$CT_HOOK_PATH_ENV" \
		".hooks |= map_values(map(.path = \$hook |
			.env = [\$path, \$cfg, \$state, \$pins]))${2:+ | $2}" \
		"$SOCKOPT_BASE_SPEC" >"$1"
}
base_spec "$CTD/sockopt-hook-base-spec.json"
# The control: the base spec as made before 039d559, `ctr oci spec`'s
# rlimits in it.
RLIMITS=$(ctr oci spec | jq -c .process.rlimits)
base_spec "$CTD/rlimits-base-spec.json" ".process.rlimits = $RLIMITS"

ctd_main_config "$CTD/config.toml"

# example_handler NAME BASE-SPEC: the example's handler as an operator
# merges it: named NAME, its base spec where we put it, the cgroupfs driver
# of this host, runc's state under ours.
example_handler()
{
	sed -e '/^version = /d' \
		-e "s|/etc/containerd/sockopt-hook-base-spec.json|$CTD/$2|" \
		-e "s|SystemdCgroup = true|SystemdCgroup = false\n    Root = \"$CTD/runc\"|" \
		-e "s/runtimes\.sockopt/runtimes.$1/" "$EXAMPLES/config.toml"
}

# The drop-in: the node's CRI section and, in the same file for the
# reason above, the example's handler, then the control handler
# sockopt-rlimits (the rlimits base spec).
{
	ctd_node_cri
	example_handler sockopt sockopt-hook-base-spec.json
	example_handler sockopt-rlimits rlimits-base-spec.json
} >"$CTD/conf.d/10-cri.toml"

# What an operator who drops the example in as a file of its own gets from
# containerd 1.6: a CRI section with that handler and nothing else (no
# runc, the default sandbox image), which the CRI plugin refuses to load.
mkdir -p "$CTD/alone/conf.d"
sed "s|$CTD/conf.d|$CTD/alone/conf.d|" "$CTD/config.toml" >"$CTD/alone/config.toml"
ctd_node_cri >"$CTD/alone/conf.d/10-cri.toml"
cp "$EXAMPLES/config.toml" "$CTD/alone/conf.d/20-sockopt.toml"
alone=$(containerd --config "$CTD/alone/config.toml" config dump 2>&1)
[[ $alone == *'runtimes.sockopt]'* && $alone != *'runtimes.runc]'* &&
	$alone != *"$CRI_PAUSE"* ]]
tap_ok $? "containerd 1.6: the example as a drop-in file of its own replaces the node's CRI section (runc handler and sandbox_image gone)" ||
	tap_diag "$alone"

ctd_start "$CTD/config.toml"
VERSION=$CTD_VERSION
tap_like "$VERSION" '^containerd ' \
	"private containerd (config version 2, the example's drop-in) answers CRI: $VERSION" ||
	{ tap_diag "$(tail -n 30 "$CTD/containerd.log")"; tap_bail "containerd did not start"; }
CONFIG_DUMP=$(containerd --config "$CTD/config.toml" config dump 2>/dev/null)
[[ $CONFIG_DUMP == *'runtimes.runc]'* && $CONFIG_DUMP == *"$CRI_PAUSE"* &&
	$(sed -n '/runtimes.sockopt]/,/runtimes.sockopt.options]/p' <<<"$CONFIG_DUMP") == *'pod_annotations = ["sockopt-hook.io/*"]'* ]]
tap_ok $? "the merged config: runc, the pause image, the example's handler sockopt with pod_annotations [\"sockopt-hook.io/*\"]" ||
	tap_diag "$CONFIG_DUMP"

cri_images "$CRI_DIR/images" "$CT_ROOTFS" "$CT_BUILD/tests/pause" ||
	tap_bail "cannot build the image archives"
out=$(for img in busybox pause; do
	ctr -a "$CRI_SOCK" -n k8s.io images import "$CRI_DIR/images/$img.tar" 2>&1 || echo "import $img failed"
done)
ids=$(cri image-id "$CRI_BUSYBOX" && cri image-id "$CRI_PAUSE")
tap_like "$ids" '^sha256:[0-9a-f]{64}'$'\n''sha256:[0-9a-f]{64}$' \
	"ctr images import: the busybox and pause images are in CRI's store" ||
	tap_diag "$out" "$ids"

# --- one pod, three containers, three policies ------------------------------

SLEEPER='["sleep", "3600"]'
POD=$(cri_pod policed sockopt '{
	"sockopt-hook.io/policy.web": "restricted",
	"sockopt-hook.io/containers.policy": "loader=setonly"}' "[
	{\"name\": \"web\", \"command\": $SLEEPER, \"caps\": [\"NET_ADMIN\"]},
	{\"name\": \"loader\", \"command\": $SLEEPER, \"caps\": [\"NET_ADMIN\"]},
	{\"name\": \"plain\", \"command\": $SLEEPER, \"caps\": [\"NET_ADMIN\"]}]")
CTD_UIDS+=("$(jq -r .metadata.uid "$POD")")
cri_run_pod "$POD"
tap_ok $? "pod on handler sockopt: RunPodSandbox, CreateContainer and StartContainer of web, loader, plain" ||
	tap_diag "$(tail -n 20 "$CTD/containerd.log")" "$(cat "$LOG" 2>/dev/null)"
SANDBOX=$CRI_SANDBOX
declare -A POLICED=()
for n in "${!CRI_IDS[@]}"; do POLICED[$n]=${CRI_IDS[$n]}; done

tap_is "$(cri_exec "${POLICED[web]}" sockcheck get-mark)" "mark=EPERM" \
	"web (sockopt-hook.io/policy.web: restricted): getsockopt(SO_MARK) gives EPERM"
tap_is "$(cri_exec "${POLICED[web]}" sockcheck set-mark 5)" "setsockopt=EPERM" \
	"web: setsockopt(SO_MARK) gives EPERM"
tap_is "$(cri_exec "${POLICED[loader]}" sockcheck get-mark)" "mark=0" \
	"loader (containers.policy: loader=setonly): getsockopt(SO_MARK) allowed"
tap_is "$(cri_exec "${POLICED[loader]}" sockcheck set-mark 5)" "setsockopt=EPERM" \
	"loader: setsockopt(SO_MARK) gives EPERM"
tap_is "$(cri_exec "${POLICED[plain]}" sockcheck set-mark 5)" "setsockopt=ok" \
	"plain (no key of its own, no pod-wide key): setsockopt(SO_MARK) allowed (it has CAP_NET_ADMIN)"
ann=$(cri_spec_annotations "${POLICED[web]}")
[[ $ann == *'"io.kubernetes.cri.container-name":"web"'* &&
	$ann == *'"sockopt-hook.io/policy.web":"restricted"'* &&
	$ann == *'"sockopt-hook.io/containers.policy":"loader=setonly"'* ]]
tap_ok $? "web's OCI spec: containerd names the container and passes the pod's sockopt-hook.io keys" ||
	tap_diag "$ann"

WEB_CG=$(ct_cgroup_of "$(cri_pid "${POLICED[web]}")")
tap_ok "$([ -n "$WEB_CG" ] && [ -n "$(ct_our_progs "$WEB_CG")" ] &&
	[ -f "$CT_STATE_DIR/${POLICED[web]}.json" ]; echo $?)" \
	"web: the hook's programs on its cgroup ($WEB_CG) and its record in the state dir"
PAUSE_PID=$(cri_sandbox_pid "$SANDBOX")
PAUSE_CG=$(ct_cgroup_of "$PAUSE_PID")
progs=$(ct_our_progs "$PAUSE_CG")
tap_ok "$([ -n "$PAUSE_CG" ] && [ "$progs" = "cgroup_inet_sock_create sh_sock_create" ] &&
	[ "$(ct_record "$SANDBOX" | jq -r .policy)" = @deny-sockets ]; echo $?)" \
	"the pause sandbox ($PAUSE_CG): sandbox_policy's sock_create attached, and a record of its own (@deny-sockets)" ||
	tap_diag "pause pid '$PAUSE_PID', cgroup '$PAUSE_CG', programs: $progs" "$(ls "$CT_STATE_DIR")"
# containerd 1.6 makes the sandbox's spec without the handler's base spec
# (so without the hook): the pod's first container policed it, from its
# own prestart (its spec joins the sandbox's ipc namespace by pid).
SANDBOX_HOOKS=$(cri inspect-pod "$SANDBOX" | jq -c '.info.runtimeSpec.hooks // {}')
if [ "$SANDBOX_HOOKS" = "{}" ]; then
	tap_is "$(grep -cF "container $SANDBOX" "$LOG")" 0 \
		"the pause sandbox's OCI spec has no hook (containerd 1.6 does not apply base_runtime_spec to it): the hook never ran for it, a container of its pod policed it"
else
	tap_like "$(grep -F "container $SANDBOX" "$LOG")" "attached 1 program" \
		"the hook ran for the pause sandbox and attached sandbox_policy"
fi

# --- kubectl debug --target ------------------------------------------------------

POD=$(cri_pod debugged sockopt '{"sockopt-hook.io/policy": "restricted"}' \
	"[{\"name\": \"web\", \"command\": $SLEEPER, \"caps\": [\"NET_ADMIN\"]}]")
CTD_UIDS+=("$(jq -r .metadata.uid "$POD")")
cri_run_pod "$POD"
tap_ok $? "debug: pod debugged (pod-wide restricted) with web: runs"
DEBUG_SB=$CRI_SANDBOX
DEBUG_WEB=${CRI_IDS[web]}
jq --arg image "$CRI_BUSYBOX" '.spec.ephemeralContainers = [{
	name: "debugger", image: $image, command: ["sleep", "3600"],
	targetContainerName: "web",
	securityContext: {capabilities: {add: ["NET_ADMIN"]}}}]' "$POD" >"$CRI_DIR/debugged-eph.json"
out=$(cri debug "$CRI_DIR/debugged-eph.json" "$DEBUG_SB" 2>&1)
DEBUGGER=$(jq -r '.ephemeral.debugger // empty' <<<"$out" 2>/dev/null)
tap_ok "$([ -n "$DEBUGGER" ]; echo $?)" \
	"debug: the ephemeral container targeting web starts, not refused" ||
	tap_diag "$out" "$(tail -n 5 "$LOG" 2>/dev/null)"
if [ -n "$DEBUGGER" ]; then
	spec=$(cri inspect "$DEBUGGER" | jq -c '[.info.runtimeSpec.linux.namespaces[] | select(.path) | "\(.type)=\(.path)"]')
	[[ $spec == *"\"pid=/proc/$(cri_pid "$DEBUG_WEB")/ns/pid\""* &&
		$spec == *"\"ipc=/proc/$(cri_sandbox_pid "$DEBUG_SB")/ns/ipc\""* ]]
	tap_ok $? "debug: containerd joins it to web's pid namespace and the sandbox's ipc one ($spec)"
	tap_like "$(cri_exec "$DEBUGGER" ps -o pid,args)" "sleep 3600" "debug: it sees web's processes"
	tap_is "$(cri_exec "$DEBUGGER" sockcheck set-mark 5)" "setsockopt=EPERM" \
		"debug: policed like its pod (restricted: setsockopt(SO_MARK) gives EPERM)"
	tap_is "$(cri_exec "$DEBUGGER" sockcheck socket inet6 stream)" "socket_inet6_stream=EPERM" \
		"debug: socket(AF_INET6) gives EPERM"
fi

# --- the open-files limit ------------------------------------------------------

POD=$(cri_pod default-handler "" '{"sockopt-hook.io/policy": "restricted"}' \
	"[{\"name\": \"app\", \"command\": $SLEEPER, \"caps\": [\"NET_ADMIN\"]}]")
CTD_UIDS+=("$(jq -r .metadata.uid "$POD")")
cri_run_pod "$POD"
tap_ok $? "pod on the default handler (no RuntimeClass) with sockopt-hook.io/policy: restricted: runs"
DEFAULT_APP=${CRI_IDS[app]}
POD=$(cri_pod rlimits sockopt-rlimits '{"sockopt-hook.io/policy": "restricted"}' \
	"[{\"name\": \"app\", \"command\": $SLEEPER}]")
CTD_UIDS+=("$(jq -r .metadata.uid "$POD")")
cri_run_pod "$POD"
tap_ok $? "pod on handler sockopt-rlimits (base spec with \`ctr oci spec\`'s rlimits): runs"
RLIMITS_APP=${CRI_IDS[app]}

# The soft and the hard limit: a node whose containerd runs with a soft
# limit of 1024 (systemd's default) shows the base spec's cap only in the
# hard one.
# shellcheck disable=SC2016 # expanded by the container's shell
NOFILE='echo "$(ulimit -Sn) $(ulimit -Hn)"'
nofile_sockopt=$(cri_exec "${POLICED[web]}" sh -c "$NOFILE")
nofile_default=$(cri_exec "$DEFAULT_APP" sh -c "$NOFILE")
nofile_rlimits=$(cri_exec "$RLIMITS_APP" sh -c "$NOFILE")
tap_diag "report: open files (soft hard) in a pod: default handler $nofile_default, sockopt handler $nofile_sockopt, base spec with ctr oci spec's rlimits $nofile_rlimits"
tap_is "$nofile_sockopt" "$nofile_default" \
	"the open-files limits (soft hard) on handler sockopt are the default handler's ($nofile_default)"
tap_is "$nofile_rlimits" "1024 1024" \
	"control: a base spec with \`ctr oci spec\`'s process.rlimits caps the pod at 1024 (the example before 039d559)"
tap_is "$(cri_exec "$RLIMITS_APP" sockcheck get-mark)" "mark=EPERM" \
	"control: the sockopt-rlimits pod is policed (restricted)"

# --- the silent case: the annotation without the RuntimeClass -----------------

APP_CG=$(ct_cgroup_of "$(cri_pid "$DEFAULT_APP")")
tap_is "$(cri_exec "$DEFAULT_APP" sockcheck set-mark 5; cri_exec "$DEFAULT_APP" sockcheck get-mark)" \
	"setsockopt=ok"$'\n'"mark=0" \
	"default handler: sockopt-hook.io/policy is ignored, SO_MARK can be set and read (silent: no hook runs)"
tap_ok "$([ -n "$APP_CG" ] && [ -z "$(ct_our_progs "$APP_CG")" ] &&
	[ ! -e "$CT_STATE_DIR/$DEFAULT_APP.json" ]; echo $?)" \
	"default handler: no program on the container's cgroup, no record"
ann=$(cri_spec_annotations "$DEFAULT_APP")
[[ $ann != *sockopt-hook.io* ]]
tap_ok $? "default handler: the pod's sockopt-hook.io key is not in the container's OCI spec (no pod_annotations)" ||
	tap_diag "$ann"

# --- teardown ------------------------------------------------------------------

rc=0
for entry in "${CRI_PODS[@]}"; do
	cri_remove_pod "${entry%% *}" || rc=1
done
tap_ok $rc "StopContainer, RemoveContainer, StopPodSandbox, RemovePodSandbox of the four pods"
tap_is "$(cri pods)" "" "containerd lists no pod sandbox"
# The sandboxes' records: their reapers release them as the cgroups go.
for _ in $(seq 1 50); do
	[ -z "$(find "$CT_STATE_DIR" -name '*.json' ! -name 'shared-*')" ] && break
	sleep 0.1
done
tap_is "$(find "$CT_STATE_DIR" -name '*.json' ! -name 'shared-*')" "" \
	"no record left in the hook's state dir (the sandboxes' reapers released theirs)"
ctd_remove_pod_cgroups
ct_check_same "after the pods: BPF programs, hook state and cgroups (v2) are as before" "$BASE"
ctd_check_clean "after the pods"
tap_done
