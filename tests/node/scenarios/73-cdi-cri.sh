#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# CDI through the CRI, as a device plugin's Allocate or a DRA driver's
# claim makes kubelet ask for it: containerd 2.x with Debian's own
# config.toml (CDI on by default: enable_cdi, spec dirs /etc/cdi and
# /var/run/cdi, as its config dump says) and nothing of ours wired into it
# (no handler, base spec, pod_annotations, NRI plugin), pods through
# tests/cri/cri.py (cgroupfs driver: Debian's runc handler has no
# SystemdCgroup). `runtime configure --cdi` writes the spec, then:
#  - a pod whose container app has sockopt-hook.io/policy=restricted in
#    its ContainerConfig's CDI_devices (cri.py --cdi-device) and no
#    annotation: containerd injects the device's hooks (its OCI spec runs
#    the hook with --cdi-device), app is policed (SO_MARK refused, the
#    SO_RCVBUF clamp read back, TCP_CONGESTION forced to reno), our
#    programs on its cgroup, `status` names the device as the source;
#    plain, in the same pod without the device, is not (CDI polices
#    those that ask); after the pod is removed: no record, the programs
#    loaded are those before, no pod cgroup;
#  - the config no longer allows restricted while the spec still offers
#    it (its path unit stopped): the hook refuses the device in one line
#    (in StartContainer's error), app never runs, no record; after `cdi
#    refresh` containerd refuses the device itself;
#  - `runtime unconfigure --cdi`: the node as before (node_state).
# node-timeout: 600
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"
SRC=$NODE_PAYLOAD/src
# shellcheck source=tests/lib/cri.sh
. "$SRC/tests/lib/cri.sh"

CRI_SOCK=/run/containerd/containerd.sock
CRI_DIR=$NODE_VAR/cdi-pods
CRI_DRIVER=cgroupfs
SPEC=/etc/cdi/sockopt-hook.io-policy.json
DEV=sockopt-hook.io/policy=restricted
rm -rf "$CRI_DIR" && mkdir -p "$CRI_DIR"
cp "$NODE_CONFIG" "$CRI_DIR/hook-config.orig"
node_cri_stubs

tap_like "$(containerd --version)" ' v?2\.[0-9]+' "containerd 2.x: $(containerd --version)"
VERSION=$(cri --wait 60 version 2>&1)
tap_like "$VERSION" '^containerd ' "containerd answers CRI: $VERSION" ||
	{ journalctl -u containerd --no-pager | tail -n 30 | sed 's/^/# /'; tap_bail "no CRI"; }
dump=$(containerd config dump 2>&1)
cdi=$(grep -E '^ *(enable_cdi|cdi_spec_dirs) = ' <<<"$dump" | sed 's/^ *//' | sort)
tap_is "$cdi" "cdi_spec_dirs = ['/etc/cdi', '/var/run/cdi']"$'\n''enable_cdi = true' \
	"Debian's config: CDI on by default (config dump: enable_cdi = true, cdi_spec_dirs /etc/cdi and /var/run/cdi)"
[[ $dump != *runtimes.sockopt* && $dump != *sockopt-hook* ]] &&
	[ "$(systemctl is-active oci-sockopt-hook-nri.service)" != active ] &&
	[ ! -e /opt/nri/plugins/50-oci-sockopt-hook ]
tap_ok $? "nothing of ours in containerd: no handler, base spec, pod_annotations or NRI plugin"
node_cri_images
CDI_DIR_WAS=$([ -d /etc/cdi ] && echo yes || echo no)
BEFORE=$(node_state)

out=$("$NODE_HOOK" runtime configure --cdi 2>&1)
tap_like "$?:$out" "^0:$SPEC: created" "runtime configure --cdi writes $SPEC" || tap_diag "$out"

# --- a container that asks for the device, one that does not -----------------

snapshot
SLEEPER='["sleep", "3600"]'
CAPS='["NET_ADMIN", "NET_RAW"]'
POD=$(cri_pod cdi "" '{}' "[
	{\"name\": \"app\", \"command\": $SLEEPER, \"caps\": $CAPS},
	{\"name\": \"plain\", \"command\": $SLEEPER, \"caps\": $CAPS}]")
CRI_OPTS=(--cdi-device "app=$DEV")
cri_run_pod "$POD"
tap_ok $? "pod cdi on the default handler, no annotation, app with CDI_devices $DEV: runs" ||
	journalctl -u containerd --no-pager | tail -n 20 | sed 's/^/# /'
CRI_OPTS=()
APP=${CRI_IDS[app]} PLAIN=${CRI_IDS[plain]}
spec=$(cri inspect "$APP" | jq -c '.info.runtimeSpec | [[.annotations // {} | keys[] | select(startswith("sockopt-hook.io"))],
	[.hooks.createRuntime[]?.args | join(" ")]]')
tap_like "$spec" "^\\[\\[\\],\\[\"oci-sockopt-hook createRuntime --cdi-device $DEV\"\\]\\]\$" \
	"app's OCI spec: no annotation of ours, the device's createRuntime hook (containerd injected it)"
PROBE_OUT=$(cri_exec "$APP" /probe)
tap_diag "$PROBE_OUT"
check_restricted "CRI app (CDI_devices $DEV)"
cg=$(cgroup_of "$(cri_pid "$APP")")
tap_is "$(sh_progs "$cg")" "sh_getsockopt sh_setsockopt sh_sock_create" "app: our programs in effect on $cg"
st=$("$NODE_HOOK" status --json 2>&1)
tap_is "$(jq -r --arg id "$APP" '.[] | select(.id == $id) | "\(.policy) from \(.policy_source)"' <<<"$st" 2>&1)" \
	"restricted from CDI device $DEV" "status: app's policy from the CDI device" || tap_diag "$st"
PROBE_OUT=$(cri_exec "$PLAIN" /probe)
check_unpoliced "CRI plain (same pod, no device)"
tap_check "plain: no record" test ! -e "$NODE_STATE/$PLAIN.json"
cri_remove_pod "$CRI_SANDBOX"
tap_ok $? "the pod is removed"
wait_until 20 same_records
tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" "no hook record left"
check_progs "the BPF programs loaded are those before the pod"
wait_until 20 pod_cgroups_gone
tap_ok $? "no pod cgroup left"

# --- a device for a policy the config no longer allows -----------------------

# remove_pods: every pod sandbox containerd has (a failed run-pod leaves
# its sandbox, as kubelet would until it retries)
remove_pods() {
	local sb rc=0

	for sb in $(cri pods); do
		cri remove-pod "$sb" || rc=1
	done
	return $rc
}
# the path unit stopped, so that nothing refreshes the spec
systemctl stop oci-sockopt-hook-preload.path
jq '.annotations.allow_policies -= ["restricted"]' "$CRI_DIR/hook-config.orig" >"$NODE_CONFIG"
tap_is "$(jq -r '[.devices[].name] | index("restricted") != null' "$SPEC")" true \
	"the spec still offers restricted, the config no longer allows it"
snapshot
POD=$(cri_pod stale "" '{}' "[{\"name\": \"app\", \"command\": $SLEEPER}]")
out=$(cri --cdi-device "app=$DEV" run-pod "$POD" 2>&1)
rc=$?
tap_diag "$out"
tap_ok $((rc == 0)) "pod stale, app with CDI_devices $DEV: refused (exit $rc)"
tap_is "$(grep -c 'oci-sockopt-hook: container ' <<<"$out")" 1 "one line of the hook's in StartContainer's error"
tap_like "$out" "oci-sockopt-hook: container [0-9a-f]{64}: CDI device $DEV refused: 'restricted' is not in annotations\\.allow_policies of $NODE_CONFIG" \
	"it names the device and the setting"
tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" "no record"
remove_pods
tap_ok $? "the pod's sandbox removed"
out=$(systemctl start oci-sockopt-hook-preload.service 2>&1)
tap_ok $? "the preload service (cdi refresh) for that config" || tap_diag "$out"
tap_is "$(jq -c '[.devices[].name]' "$SPEC")" '["bulk","setonly","bypass-prot-mem"]' \
	"cdi refresh: restricted's device is gone from the spec"
out=$(cri --cdi-device "app=$DEV" run-pod "$POD" 2>&1)
tap_like "$?:$out" "^1:.*unresolvable CDI devices $DEV" \
	"containerd refuses the device itself now" || tap_diag "$out"
remove_pods
tap_ok $? "its sandbox removed"
tap_is "$(cri pods)" "" "containerd lists no pod sandbox"
wait_until 20 same_records
tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" "no hook record left"
wait_until 20 pod_cgroups_gone
tap_ok $? "no pod cgroup left"
cp "$CRI_DIR/hook-config.orig" "$NODE_CONFIG"
systemctl start oci-sockopt-hook-preload.service oci-sockopt-hook-preload.path

# --- unconfigure: the node as before ------------------------------------------

out=$("$NODE_HOOK" runtime unconfigure --cdi 2>&1)
tap_like "$?:$out" "^0:$SPEC: removed" "runtime unconfigure --cdi removes the spec" || tap_diag "$out"
# /etc/cdi is every CDI vendor's: unconfigure takes out our spec, not the
# directory configure made; it goes here if the node had none
tap_is "$(ls -A /etc/cdi 2>&1)" "" "/etc/cdi holds nothing any more"
[ "$CDI_DIR_WAS" = yes ] || rmdir /etc/cdi
after=$(node_state)
tap_is "$after" "$BEFORE" "the node as before (files, pins, records, units)" ||
	diff <(echo "$BEFORE") <(echo "$after") | sed 's/^/# /'
tap_done
