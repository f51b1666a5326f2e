#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The kustomize base and overlays of examples/kubernetes/ as an operator's
# GitOps repository uses them, rendered by `kubectl kustomize` (Debian
# unstable's kubectl 1.36, offline) and each object checked strictly
# against the Kubernetes API's schemas (tests/k8s/validate.mjs: 1.27 as
# the 1.30 floor, 1.33, the newest; the prometheus-operator CRDs):
#  - each overlay (nri, hooks, runtimeclass, monitoring, admission,
#    uninstall) renders, and every object it renders passes; the base's
#    ConfigMap keys are what each overlay's comment says; RuntimeClasses
#    only in runtimeclass;
#  - an operator's overlay over any of them sets the image once
#    (`images:`) and every container gets it, and the config once
#    (configMapGenerator, behavior: merge): the DaemonSet still names the
#    one ConfigMap, whose config.json the hook's validate takes;
#  - a planted unknown field (a misspelt securityContext key in a patch,
#    an unknown key in the ServiceMonitor, a key at the top of an object)
#    fails the check, naming the field's path: what a real API server
#    would drop without a word;
#  - no hand-kept copy of the manifests is left beside the overlays.
#
# Modules: (`examples/kubernetes/`, `tests/k8s/validate.mjs`)
# Root: no
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/host.sh
. "$here/../lib/host.sh"
# shellcheck source=../lib/k8s.sh
. "$here/../lib/k8s.sh"

k8s_require
tap_require_cmd jq
HOOK=${HOOK:-$TESTS_BUILD/oci-sockopt-hook}
EX=$TESTS_TOP/examples/kubernetes
TMP=$(mktemp -d /tmp/sockopt-hook-kustomize.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

tap_like "$("$K8S_KUBECTL" version --client 2>&1 | head -n1)" '^Client Version: v1\.' \
	"kubectl: $("$K8S_KUBECTL" version --client 2>&1 | head -n1)"

# --- each overlay -------------------------------------------------------------

for o in $K8S_OVERLAYS; do
	out=$(k8s_render "$EX/overlays/$o" 2>&1)
	tap_ok $? "kubectl kustomize overlays/$o" || { tap_diag "$out"; continue; }
	k8s_json <<<"$out" >"$TMP/$o.json"
	v=$(k8s_validate "$TMP/$o.json" 2>&1)
	tap_ok $? "overlays/$o: $(jq length "$TMP/$o.json") objects, each valid against the API's schemas, strictly ($(grep -c '^ok ' <<<"$v") checks)" ||
		tap_diag "$(grep -v '^ok ' <<<"$v")"
done
cm() { jq -r --arg k "$2" '.[] | select(.kind == "ConfigMap" and .metadata.name == "oci-sockopt-hook-config") | .data[$k]' "$TMP/$1.json"; }
tap_is "$(for o in nri hooks runtimeclass; do echo -n "$o:$(cm "$o" runtime)/$(cm "$o" nri) "; done)" \
	"nri:/pod hooks:/ runtimeclass:containerd/ " "the ConfigMap's runtime/nri keys per overlay"
tap_is "$(jq -r '[.[] | .kind] | sort | unique | join(" ")' "$TMP/nri.json")" \
	"ConfigMap DaemonSet Namespace ServiceAccount" "the base: Namespace, ServiceAccount, ConfigMap, DaemonSet, no RuntimeClass"
tap_is "$(jq -r '[.[] | select(.kind == "RuntimeClass") | .handler] | join(" ")' "$TMP/runtimeclass.json")" \
	"sockopt sockopt-bypass" "overlays/runtimeclass: the RuntimeClasses sockopt and sockopt-bypass"
tap_is "$(jq -r '[.[] | .kind] | sort | join(" ")' "$TMP/monitoring.json")" \
	"ConfigMap PrometheusRule ServiceMonitor" "overlays/monitoring: the dashboard's ConfigMap, a PrometheusRule, a ServiceMonitor"

# --- the operator's overlay: the image and the config, once each ---------------

for o in nri hooks runtimeclass uninstall; do
	mine=$TMP/mine-$o
	mkdir -p "$mine"
	jq '.policies.mine = {"setsockopt": [{"level": "SOL_SOCKET", "option": "SO_MARK", "action": "deny"}]}' \
		"$EX/base/config.json" >"$mine/config.json"
	{
		echo "resources: [\"$(realpath --relative-to="$mine" "$EX/overlays/$o")\"]"
		echo "images: [{name: ghcr.io/example/oci-sockopt-hook, newName: registry.example/ops/oci-sockopt-hook, newTag: \"1.2.3\"}]"
		[ "$o" = uninstall ] || cat <<'Y'
configMapGenerator:
  - name: oci-sockopt-hook-config
    namespace: oci-sockopt-hook
    behavior: merge
    files: [config.json]
Y
	} >"$mine/kustomization.yaml"
	k8s_render "$mine" 2>&1 | k8s_json >"$TMP/mine-$o.json"
	tap_is "$(jq -r '[.[] | select(.kind == "DaemonSet") | .spec.template.spec | (.initContainers + .containers)[] | .image] | unique | join(" ")' "$TMP/mine-$o.json")" \
		"registry.example/ops/oci-sockopt-hook:1.2.3" "overlay over $o: one images: entry sets every container's image"
	[ "$o" = uninstall ] && continue
	names=$(jq -r '[.[] | select(.kind == "DaemonSet") | .spec.template.spec | (.volumes[] | .configMap.name // empty), ((.initContainers + .containers)[] | .env[]? | .valueFrom.configMapKeyRef.name)] | unique | join(" ")' "$TMP/mine-$o.json")
	tap_is "$names" "oci-sockopt-hook-config" "overlay over $o: the DaemonSet names the one ConfigMap"
	jq -j '.[] | select(.kind == "ConfigMap") | .data["config.json"]' "$TMP/mine-$o.json" >"$TMP/mine-$o.cfg"
	cmp -s "$TMP/mine-$o.cfg" "$mine/config.json"
	tap_ok $? "overlay over $o: its config.json is the ConfigMap's, byte for byte"
	out=$("$HOOK" validate "$TMP/mine-$o.cfg" 2>&1)
	tap_ok $? "and the hook's validate takes it" || tap_diag "$out"
done
v=$(k8s_validate "$TMP"/mine-*.json 2>&1)
tap_ok $? "the operator's overlays render valid objects" || tap_diag "$(grep -v '^ok ' <<<"$v")"

# --- a planted unknown field fails ----------------------------------------------

bad=$TMP/bad
mkdir -p "$bad"
cat >"$bad/kustomization.yaml" <<EOF2
resources: ["$(realpath --relative-to="$bad" "$EX/overlays/nri")"]
patches:
  - target: {kind: DaemonSet, name: oci-sockopt-hook}
    patch: |
      - op: add
        path: /spec/template/spec/containers/1/securityContext/readOnlyRootFilesytem
        value: true
EOF2
k8s_render "$bad" | k8s_json >"$TMP/bad.json"
tap_is "$(jq -r '.[] | select(.kind == "DaemonSet") | .spec.template.spec.containers[1].securityContext.readOnlyRootFilesytem' "$TMP/bad.json")" true \
	"kubectl kustomize renders a misspelt field as it is (kustomize knows no schema)"
v=$(k8s_validate "$TMP/bad.json" 2>&1)
tap_is "$?" 1 "the check fails on it"
tap_like "$v" "FAIL bad.json: DaemonSet oci-sockopt-hook/oci-sockopt-hook \(Kubernetes newest\): spec\.template\.spec\.containers\[1\]\.securityContext\.readOnlyRootFilesytem: unknown field" \
	"naming its path, for each Kubernetes version" || tap_diag "$v"
tap_is "$(grep -c '^FAIL.*readOnlyRootFilesytem: unknown field' <<<"$v")" 3 "1.27, 1.33 and the newest each refuse it"
jq '(.[] | select(.kind == "ServiceMonitor") | .spec.endpoints[0]) += {"honourLabels": true}' \
	"$TMP/monitoring.json" >"$TMP/bad-monitor.json"
v=$(k8s_validate "$TMP/bad-monitor.json" 2>&1)
tap_like "$?:$v" "^1:.*ServiceMonitor oci-sockopt-hook/oci-sockopt-hook \(@kubernetes-models/prometheus-operator [0-9.]+\): spec\.endpoints\[0\]\.honourLabels: unknown field" \
	"an unknown key in the ServiceMonitor (a CRD): refused with its path"
jq '(.[] | select(.kind == "ValidatingAdmissionPolicyBinding")) += {"spce": {}}' \
	"$TMP/admission.json" >"$TMP/bad-vap.json"
v=$(k8s_validate "$TMP/bad-vap.json" 2>&1)
tap_like "$?:$v" "^1:.*ValidatingAdmissionPolicyBinding sockopt-hook-[a-z]+ \(Kubernetes 1\.33\): spce: unknown field" \
	"an unknown key at the top of an admission binding: refused"
jq '(.[] | select(.kind == "DaemonSet") | .spec.template.spec.containers[0].imagePullPolicy) = "Sometimes"' \
	"$TMP/nri.json" >"$TMP/bad-enum.json"
v=$(k8s_validate "$TMP/bad-enum.json" 2>&1)
tap_like "$?:$v" "^1:.*imagePullPolicy must be equal to one of the allowed values" \
	"a value the schema does not allow: refused by the schema's own check"

# --- no hand-kept copies ------------------------------------------------------

tap_is "$(cd "$EX" && find . -maxdepth 1 -name '*.yaml' | sort | tr '\n' ' ')" \
	"./pod-per-container.yaml ./pod-redis.yaml ./pod-restricted.yaml " \
	"examples/kubernetes/ holds the example pods only; every installed object comes from base/ and overlays/"
tap_done
