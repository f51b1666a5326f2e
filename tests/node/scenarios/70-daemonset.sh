#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The DaemonSet installed from the image, through containerd's CRI: 00-node's
# install undone and its state directory moved aside (a node that never
# saw the hook), containerd 2.x with Debian's own config.toml (no imports
# line), the image that `make image` built (the payload's image/)
# imported with `ctr images import` and tagged
# localhost/oci-sockopt-hook:node-suite, and the objects `kubectl
# kustomize` rendered on the host from tests/node/kustomize/daemonset (an
# operator's overlay over examples/kubernetes/overlays/runtimeclass:
# nri=pod, add_import=true, that image), the DaemonSet's pod and its
# ConfigMap run by tests/cri/cri.py as kubelet runs it (cgroupfs driver):
#  - install, configure (runtime configure --add-import --restart: the
#    imports line added to Debian's config.toml, containerd restarts under
#    the pod; then --nri pod, which checks containerd's NRI) and preload
#    exit 0, in order; the nri container (the NRI plugin) and the agent run;
#  - the node has the binary (the one built), the ConfigMap's config, the
#    hooks.d file, the handlers sockopt and sockopt-bypass, the pins;
#  - the agent's feature file (installed=true, bypass-prot-mem=true,
#    nri=true: the plugin in the DaemonSet's pod registered, as NFD reads
#    it) and metrics file appear;
#  - a workload pod on handler sockopt gets its policy, one on
#    sockopt-bypass its bypass, and the agent's metrics name them; an
#    annotated pod on the default handler (no RuntimeClass, no base spec)
#    gets its policy from the plugin running in the DaemonSet's pod, and a
#    plain one on it stays unpoliced;
#  - wiring that heals: config.toml overwritten with Debian's (as node
#    tooling would) and containerd restarted: the handlers are gone; with
#    no hand on the node the agent puts the imports line and the drop-in
#    back and restarts containerd, a new pod on sockopt is policed, and
#    the agent's oci_sockopt_hook_wiring_repairs_total says 1 repaired;
#  - the uninstall: the pods removed (the agent's SIGTERM removes the
#    feature file, the plugin's its status), then the pod of
#    tests/node/kustomize/uninstall (examples/kubernetes/overlays/uninstall)
#    run the same way: its init container undoes the install on the node,
#    and a before/after snapshot (files, config.toml byte for byte,
#    containerd's config dump, pins, the keys cgroup, the state directory,
#    units, records) finds the node as it was before the DaemonSet came.
# 00-node's install and state directory are put back at the end.
# About 2.5 minutes (containerd restarted six times, the image imported),
# more under TCG on a loaded host:
# node-timeout: 600
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"
SRC=$NODE_PAYLOAD/src
# shellcheck source=tests/lib/cri.sh
. "$SRC/tests/lib/cri.sh"

CRI_SOCK=/run/containerd/containerd.sock
CRI_DIR=$NODE_VAR/ds-pods
CRI_DRIVER=cgroupfs
MAIN=/etc/containerd/config.toml
IMAGE_TAR=$NODE_PAYLOAD/image/oci-sockopt-hook.tar
DS_YAML=$NODE_PAYLOAD/kubernetes/daemonset.yaml
UNINSTALL_YAML=$NODE_PAYLOAD/kubernetes/uninstall.yaml
NFD=/etc/kubernetes/node-feature-discovery/features.d/oci-sockopt-hook
PROM=/var/lib/prometheus/node-exporter/oci-sockopt-hook.prom
rm -rf "$CRI_DIR" && mkdir -p "$CRI_DIR"
# No image: the build host lacks what make image needs (it says what);
# anything else is the rig's failure. python3-yaml is in the image's
# package list: without it the image is broken. No rendered overlays:
# the build host has no kubectl (scripts/k8s-tools.sh says why).
[ -s "$NODE_PAYLOAD/image/none" ] && tap_skip_all "$(cat "$NODE_PAYLOAD/image/none")"
[ -r "$IMAGE_TAR" ] || tap_bail "no image in the payload, and no reason why"
{ [ -r "$DS_YAML" ] && [ -r "$UNINSTALL_YAML" ]; } ||
	tap_skip_all "no rendered overlays in the payload (no kubectl on the build host: scripts/k8s-tools.sh)"
python3 -c 'import yaml' 2>/dev/null || tap_bail "python3-yaml is not in the node image (tests/node/image/packages lists it)"
node_cri_stubs

node_forget_hook
tap_ok $? "00-node's install undone (make uninstall): no binary, config, hooks.d file or pins"
# and its state directory aside: the node never saw the hook
rm -rf "$CRI_DIR/state.saved"
[ ! -e "$NODE_STATE" ] || mv "$NODE_STATE" "$CRI_DIR/state.saved"
node_ctd_keep
tap_is "$(grep -c '^imports' "$MAIN")" 0 "containerd's config.toml is Debian's: no imports line"
VERSION=$(cri --wait 60 version 2>&1)
tap_like "$VERSION" '^containerd ' "containerd answers CRI: $VERSION"
node_cri_images
# snap: node_state and what only an uninstall must put back: the state
# directory, the keys cgroup, the uninstall's own directory
snap() {
	node_state
	find "$NODE_STATE" /var/lib/oci-sockopt-hook-uninstall -printf '%p %y\n' 2>/dev/null | sort
	ls -d /sys/fs/cgroup/oci-sockopt-hook.keys 2>&1
	sha256sum "$MAIN"
}
BEFORE=$(snap)

# --- the image and the DaemonSet's pod ----------------------------------------

out=$(ctr -n k8s.io images import --base-name localhost/oci-sockopt-hook "$IMAGE_TAR" 2>&1)
tag=$(tar -xOf "$IMAGE_TAR" index.json | jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]')
# the tag tests/node/kustomize/ names (the archive's is VERSION-COMMIT)
out="$out $(ctr -n k8s.io images tag --force "localhost/oci-sockopt-hook:$tag" localhost/oci-sockopt-hook:node-suite 2>&1)"
IMAGE=localhost/oci-sockopt-hook:node-suite
tap_like "$(cri image-id "$IMAGE" 2>&1)" '^sha256:' "ctr images import and tag: $IMAGE (built as $tag) in CRI's store" ||
	tap_diag "$out"
POD=$CRI_DIR/daemonset-pod.json
CMS=$CRI_DIR/configmaps.json
UID_DS=$(cat /proc/sys/kernel/random/uuid)
out=$(python3 - "$DS_YAML" "$IMAGE" "$UID_DS" "$POD" "$CMS" <<'PY'
import json, sys, yaml
src, image, uid, pod_out, cms_out = sys.argv[1:]
docs = {d["kind"]: d for d in yaml.safe_load_all(open(src)) if d}
ds, cm = docs["DaemonSet"], docs["ConfigMap"]
tmpl = ds["spec"]["template"]
cs = tmpl["spec"]["initContainers"] + tmpl["spec"]["containers"]
placeholder = {c["image"] for c in cs}
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": ds["metadata"]["name"] + "-node",
                    "namespace": ds["metadata"]["namespace"], "uid": uid,
                    "labels": tmpl["metadata"]["labels"]},
       "spec": tmpl["spec"]}
json.dump(pod, open(pod_out, "w"))
json.dump([cm], open(cms_out, "w"))
print(" ".join(c["name"] for c in cs), "|", " ".join(sorted(placeholder)))
PY
)
tap_like "$out" '^install configure preload nri agent \| localhost/oci-sockopt-hook:node-suite$' \
	"the DaemonSet's pod spec as kubectl kustomize rendered it, its image set by the overlay's images: $out"
tap_is "$(jq -c '.[0].data | [.runtime, .nri, .add_import]' "$CMS")" '["containerd","pod","true"]' \
	"its ConfigMap: runtime containerd (overlays/runtimeclass), nri pod and add_import true (the operator's overlay)"
# nri_files: what `runtime configure --nri` could write for the plugin:
# its unit, its link in /opt/nri/plugins, an NRI drop-in of containerd's.
nri_files() {
	find /etc/systemd/system /opt/nri/plugins -printf '%p %y\n' 2>/dev/null | sort
	find /etc/containerd -name '*nri*' 2>/dev/null
}
NRI_FILES=$(nri_files)
CRI_OPTS=(--timeout 300 --configmaps "$CMS")
t0=$SECONDS
cri_run_pod "$POD"
tap_ok $? "the DaemonSet's pod: install, configure, preload exit 0, nri and the agent run ($((SECONDS - t0)) s)" ||
	journalctl -u containerd --no-pager | tail -n 20 | sed 's/^/# /'
AGENT=${CRI_IDS[agent]}
NRI_CTR=${CRI_IDS[nri]}
CRI_OPTS=()
echo "FIGURE daemonset pod to running agent: $((SECONDS - t0)) s"
for c in install configure preload; do
	id=$(jq -r --arg n "$c" '.init[$n] // empty' <<<"$CRI_RUN_OUT")
	tap_diag "$c: $(cri logs "$id" 2>&1 | tr '\n' ' ' | cut -c1-400)"
done
cmp -s "$NODE_HOOK" "$SRC/build/oci-sockopt-hook"
tap_ok $? "install: the node's hook is the binary built on the host"
tap_is "$(jq -c . "$NODE_CONFIG")" "$(jq -r '.[0].data["config.json"]' "$CMS" | jq -c .)" \
	"install: the node's config is the ConfigMap's"
tap_is "$(jq -r .hook.path "$NODE_HOOKSD/oci-sockopt-hook.json")" "$NODE_HOOK" \
	"install: the hooks.d file runs the installed hook"
dump=$(containerd config dump)
[[ $dump == *"runtimes.sockopt]"* && $dump == *"runtimes.sockopt-bypass]"* ]]
tap_ok $? "configure: containerd (restarted) has the handlers sockopt and sockopt-bypass"
tap_is "$(grep -c '^imports = \["/etc/containerd/conf.d/\*.toml"\]$' "$MAIN")" 1 \
	"configure --add-import: Debian's config.toml imports /etc/containerd/conf.d/*.toml"
cmp -s /etc/containerd/oci-sockopt-hook/main-config-before-import.toml "$CRI_DIR/config.toml.orig"
tap_ok $? "and the file as it was is kept byte for byte"
tap_like "$(ls /sys/fs/bpf/oci-sockopt-hook 2>&1)" 'sock_create-[0-9a-f]{16}' \
	"preload: the programs are pinned (<kind>-<policy hash>)"
tap_like "$(cri logs "$(jq -r '.init.configure // empty' <<<"$CRI_RUN_OUT")" 2>&1)" \
	'the plugin runs from a pod \(the DaemonSet.s nri container\)' \
	"configure: --nri pod checked containerd's NRI (on)"
tap_is "$(nri_files)" "$NRI_FILES" \
	"configure: --nri pod wrote nothing (no plugin unit, no link in /opt/nri/plugins, no NRI drop-in)"
wait_until 60 nri_registered
tap_ok $? "nri: the plugin in the DaemonSet's pod registered with containerd (features on the node)" ||
	tap_diag "$(cri logs "$NRI_CTR" 2>&1 | tail -n 5)"
tap_is "$(jq -c '[.registered, .runtime, .mode]' "$NODE_STATE/nri.status" 2>&1)" '[true,"containerd","socket"]' \
	"nri: its status in the node's state directory: registered to containerd, through its socket"
# shellcheck disable=SC2317 # called through wait_until
nfd_nri() { grep -qx 'sockopt-hook.io/nri=true' "$NFD" 2>/dev/null; }
wait_until 60 nfd_nri
parsed=$(python3 "$SRC/tests/lib/nfd_features.py" "$NFD" 2>&1)
tap_is "$(jq -c '[.labels["sockopt-hook.io/installed"], .labels["sockopt-hook.io/bypass-prot-mem"], .labels["sockopt-hook.io/nri"]]' <<<"$parsed")" \
	'["true","true","true"]' "the agent's feature file: installed=true, bypass-prot-mem=true, nri=true" ||
	tap_diag "$parsed" "$(cri logs "$AGENT" 2>&1 | tail -n 5)"
wait_until 60 test -s "$PROM"
tap_like "$(cat "$PROM" 2>&1)" 'oci_sockopt_hook_build_info\{' "the agent's metrics file"

# --- workloads ---------------------------------------------------------------

snapshot
SLEEPER='["sleep", "3600"]'
m=$(cri_pod web sockopt '{"sockopt-hook.io/policy": "restricted"}' \
	"[{\"name\": \"web\", \"command\": $SLEEPER, \"caps\": [\"NET_ADMIN\", \"NET_RAW\"]}]")
cri_run_pod "$m"
tap_ok $? "a workload pod on handler sockopt: runs"
WEB=${CRI_IDS[web]}
PROBE_OUT=$(cri_exec "$WEB" /probe)
check_restricted "workload on sockopt"
m=$(cri_pod loader sockopt-bypass '{"sockopt-hook.io/bypass-prot-mem": "true"}' \
	"[{\"name\": \"loader\", \"command\": $SLEEPER}]")
cri_run_pod "$m"
tap_ok $? "a workload pod on handler sockopt-bypass: runs"
PROBE_OUT=$(cri_exec "${CRI_IDS[loader]}" /probe)
check_bypassed "workload on sockopt-bypass"
# No RuntimeClass: the default handler (runc: no base spec, no
# pod_annotations), the hook only from the plugin in the DaemonSet's pod.
m=$(cri_pod nri-web "" '{"sockopt-hook.io/policy": "restricted"}' \
	"[{\"name\": \"app\", \"command\": $SLEEPER, \"caps\": [\"NET_ADMIN\", \"NET_RAW\"]}]")
cri_run_pod "$m"
tap_ok $? "an annotated pod on the default handler: runs"
PROBE_OUT=$(cri_exec "${CRI_IDS[app]}" /probe)
check_restricted "default handler, through the DaemonSet's NRI plugin"
m=$(cri_pod nri-plain "" '{}' \
	"[{\"name\": \"plain\", \"command\": $SLEEPER, \"caps\": [\"NET_ADMIN\", \"NET_RAW\"]}]")
cri_run_pod "$m"
PLAIN_CG=$(cgroup_of "$(cri_pid "${CRI_IDS[plain]}")")
tap_is "$(our_progs "$PLAIN_CG")" "" "a plain pod on the default handler: no program (the config has no defaults)"
# metrics_name_both: container_info has web (policy restricted) and
# loader (the bypass)
# shellcheck disable=SC2317 # called through wait_until
metrics_name_both() {
	grep -q '^oci_sockopt_hook_container_info{.*container="web".*policy="restricted"' "$PROM" &&
		grep -q '^oci_sockopt_hook_container_info{.*container="loader".*bypass="true"' "$PROM"
}
wait_until 40 metrics_name_both
tap_ok $? "the agent's metrics name both workloads (container_info: web with policy restricted, loader with the bypass)" ||
	tap_diag "$(grep container_info "$PROM")"

# --- wiring that heals ----------------------------------------------------------

# repairs: the agent's counter, "REPAIRED FAILED"
AGENT_PROM=/var/lib/prometheus/node-exporter/oci-sockopt-hook-agent.prom
repairs() { sed -n 's/^oci_sockopt_hook_wiring_repairs_total{runtime="containerd",outcome="\(repaired\|failed\)"} //p' "$AGENT_PROM" 2>/dev/null | tr '\n' ' '; }
tap_is "$(repairs)" "0 0 " "the agent's repairs counter: 0 repaired, 0 failed"
# shellcheck disable=SC2317 # called through wait_until
handlers_back() { containerd config dump 2>/dev/null | grep -q 'runtimes\.sockopt\]'; }
# node tooling writes its config.toml, then restarts containerd (the
# agent may repair at any moment after the write: what it sees is read
# at once)
cp "$CRI_DIR/config.toml.orig" "$MAIN"
gone=$(containerd config dump 2>/dev/null | grep -c 'runtimes\.sockopt\]')
systemctl restart containerd
cri --wait 60 version >/dev/null
tap_is "$gone" 0 "config.toml overwritten with Debian's (containerd restarted): its config has no handler sockopt"
t0=$SECONDS
wait_until 120 handlers_back
tap_ok $? "with no hand on the node, the agent put them back ($((SECONDS - t0)) s)" ||
	tap_diag "$(cri logs "$AGENT" 2>&1 | tail -n 10)"
cri --wait 60 version >/dev/null
tap_is "$(grep -c '^imports = \["/etc/containerd/conf.d/\*.toml"\]$' "$MAIN")" 1 \
	"config.toml imports the drop-in's directory again (add_import)"
tap_like "$(cri logs "$AGENT" 2>&1)" "wiring missing: containerd's handlers; putting it back" \
	"the agent's log says what it put back"
# shellcheck disable=SC2317 # called through wait_until
repaired_once() { [ "$(repairs)" = "1 0 " ]; }
wait_until 40 repaired_once
tap_is "$(repairs)" "1 0 " "oci_sockopt_hook_wiring_repairs_total: 1 repaired, 0 failed"
m=$(cri_pod healed sockopt '{"sockopt-hook.io/policy": "restricted"}' \
	"[{\"name\": \"healed\", \"command\": $SLEEPER, \"caps\": [\"NET_ADMIN\", \"NET_RAW\"]}]")
cri_run_pod "$m"
tap_ok $? "a new pod on handler sockopt runs"
PROBE_OUT=$(cri_exec "${CRI_IDS[healed]}" /probe)
check_restricted "after the repair, on sockopt"

# --- the uninstall --------------------------------------------------------------

rc=0
for entry in "${CRI_PODS[@]}"; do
	cri_remove_pod "${entry%% *}" || rc=1
done
CRI_PODS=()
tap_ok $rc "the workloads and the DaemonSet's pod stop and go"
tap_check "the agent removed its feature file as it stopped" test ! -e "$NFD"
tap_check "the plugin removed its status as it stopped" test ! -e "$NODE_STATE/nri.status"
# The lock is a flock(): the file may stay; nobody may hold it.
[ ! -e "$NODE_STATE/nri.lock" ] || flock -n "$NODE_STATE/nri.lock" true
tap_ok $? "no plugin holds the node's NRI lock once the pods went"
wait_until 20 pod_cgroups_gone
tap_ok $? "no pod cgroup left" ||
	find /sys/fs/cgroup/kubepods -name cgroup.procs -exec grep -H . {} + | sed 's/^/# /'

UPOD=$CRI_DIR/uninstall-pod.json
out=$(python3 - "$UNINSTALL_YAML" "$(cat /proc/sys/kernel/random/uuid)" "$UPOD" <<'PY'
import json, sys, yaml
src, uid, pod_out = sys.argv[1:]
ds = next(d for d in yaml.safe_load_all(open(src)) if d and d["kind"] == "DaemonSet")
tmpl = ds["spec"]["template"]
json.dump({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": ds["metadata"]["name"] + "-node",
                        "namespace": ds["metadata"]["namespace"], "uid": uid,
                        "labels": tmpl["metadata"]["labels"]},
           "spec": tmpl["spec"]}, open(pod_out, "w"))
print(" ".join(c["name"] for c in tmpl["spec"]["initContainers"] + tmpl["spec"]["containers"]),
      "|", " ".join(sorted({c["image"] for c in tmpl["spec"]["initContainers"] + tmpl["spec"]["containers"]})))
PY
)
tap_is "$out" "uninstall done | localhost/oci-sockopt-hook:node-suite" "the uninstall DaemonSet's pod, as kubectl kustomize rendered it"
CRI_OPTS=(--timeout 300)
cri_run_pod "$UPOD"
tap_ok $? "its init container undid the install on the node, exit 0; the pod waits" ||
	journalctl -u containerd --no-pager | tail -n 20 | sed 's/^/# /'
CRI_OPTS=()
tap_diag "uninstall: $(cri logs "$(jq -r '.init.uninstall // empty' <<<"$CRI_RUN_OUT")" 2>&1 | grep -v '^[-+@ ]' | tr '\n' ' ' | cut -c1-600)"
for entry in "${CRI_PODS[@]}"; do
	cri_remove_pod "${entry%% *}" >/dev/null 2>&1
done
CRI_PODS=()
cri --wait 60 version >/dev/null
wait_until 20 pod_cgroups_gone
cmp -s "$MAIN" "$CRI_DIR/config.toml.orig"
tap_ok $? "config.toml byte-identical to Debian's (the --add-import edit undone)"
tap_is "$(state_records | tr '\n' ' ')" "" "no hook record left"
after=$(snap)
tap_is "$after" "$BEFORE" "the node as it was before the DaemonSet: files, containerd's config, pins, keys cgroup, state directory, units" ||
	diff <(echo "$BEFORE") <(echo "$after") | sed 's/^/# /'

cmp -s "$MAIN" "$CRI_DIR/config.toml.orig" || node_ctd_restore
rm -rf "$NODE_STATE"
[ ! -e "$CRI_DIR/state.saved" ] || mv "$CRI_DIR/state.saved" "$NODE_STATE"
out=$(node_make install)
tap_ok $? "00-node's install and state directory put back for later scenarios" || tap_diag "$out"
tap_done
