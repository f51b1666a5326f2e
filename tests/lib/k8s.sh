# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034
#
# The Kubernetes manifests as an operator gets them: `kubectl kustomize`
# of an overlay of examples/kubernetes/ (Debian unstable's kubectl,
# scripts/k8s-tools.sh puts it in BUILD/k8s/), and their check against the
# API's schemas (tests/k8s/validate.mjs). Source host.sh first.
#
#   K8S_KUBECTL, K8S_MODULES     the tools
#   k8s_require                  skips the file without them
#   k8s_render DIR               the rendered YAML of a kustomization
#   k8s_json < YAML              the objects as one JSON array
#   k8s_validate FILE.json...    validate.mjs's lines; its exit status
K8S_KUBECTL=$TESTS_BUILD/k8s/kubectl
K8S_MODULES=$TESTS_BUILD/k8s
K8S_OVERLAYS="nri hooks runtimeclass monitoring admission uninstall"

k8s_require()
{
	[ -x "$K8S_KUBECTL" ] ||
		tap_skip_all "$K8S_KUBECTL missing (scripts/deps.sh check runs scripts/k8s-tools.sh)"
	[ -d "$K8S_MODULES/node_modules/k8s-newest" ] ||
		tap_skip_all "$K8S_MODULES/node_modules missing (scripts/k8s-tools.sh)"
	tap_require_cmd node python3
	python3 -c 'import yaml' 2>/dev/null || tap_skip_all "python3-yaml missing"
}

k8s_render() { "$K8S_KUBECTL" kustomize "$1"; }

k8s_json()
{
	python3 -c 'import sys, yaml, json
json.dump([d for d in yaml.safe_load_all(sys.stdin) if d], sys.stdout)'
}

k8s_validate() { node "$TESTS_TOP/tests/k8s/validate.mjs" "$K8S_MODULES" "$@"; }
