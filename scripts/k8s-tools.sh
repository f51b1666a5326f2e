#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# k8s-tools.sh BUILD_DIR
#
# The two tools the manifests' checks need (tests/integration/28-kustomize.sh,
# the node suite's DaemonSet scenarios), installed under BUILD_DIR only;
# scripts/deps.sh check calls this:
#
#   BUILD_DIR/k8s/kubectl          `kubectl kustomize` (offline): Debian's
#                                  kubectl from the unstable suite (Debian 12
#                                  has none), its .deb fetched through the
#                                  mirror this machine's apt sources name
#                                  (tests/vm/fetch-deb.sh: apt checks it
#                                  against the suite's signed Release file)
#                                  and unpacked, not installed
#   BUILD_DIR/k8s/node_modules/    the Kubernetes API's schemas as npm's
#                                  kubernetes-models has them, pinned by
#                                  tests/k8s/package-lock.json (npm ci)
#
# Each is done once: a kubectl that runs and a node_modules matching the
# lock are used as they are.
# Exit 0, or 1 with one line saying what failed.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(mkdir -p "$1" && cd "$1" && pwd)
out=$build/k8s
mkdir -p "$out"
fail() { echo "k8s-tools: $*" >&2; exit 1; }

if ! "$out/kubectl" version --client >/dev/null 2>&1; then
	deb=$("$top/tests/vm/fetch-deb.sh" "$build" kubectl 2>"$out/fetch.log" | tail -n1) ||
		fail "cannot download kubectl from Debian's unstable suite: $(tail -n1 "$out/fetch.log")"
	tmp=$(mktemp -d "$out/.deb.XXXXXX")
	dpkg-deb -x "$deb" "$tmp"
	install -m 0755 "$tmp/usr/bin/kubectl" "$out/kubectl"
	rm -rf "$tmp"
	"$out/kubectl" version --client >/dev/null || fail "$out/kubectl does not run"
fi

if ! cmp -s "$top/tests/k8s/package-lock.json" "$out/package-lock.json" ||
	[ ! -d "$out/node_modules/k8s-newest" ]; then
	command -v npm >/dev/null || fail "npm not found (scripts/deps.sh check installs it)"
	cp "$top/tests/k8s/package.json" "$top/tests/k8s/package-lock.json" "$out/"
	(cd "$out" && npm ci --no-audit --no-fund --loglevel=error >"$out/npm.log" 2>&1) ||
		fail "npm ci in $out failed: $(tail -n1 "$out/npm.log")"
fi
