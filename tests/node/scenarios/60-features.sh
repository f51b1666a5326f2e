#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Node labels on a node whose kernel has the bypass (>= 6.19), with the
# hook and the example config that 00-node installed (its hooks.d file in
# /usr/share/containers/oci/hooks.d):
#  - containerd is here but has no handler sockopt: `features` labels
#    installed=false and bypass-prot-mem=false (RuntimeClass pods would
#    fail here), and says why (71-runtime-configure shows true/true once
#    containerd is configured);
#  - as a podman/CRI-O node (no containerd on PATH), where the hooks.d file
#    is the wiring: bypass-prot-mem=true, as `probe --json` says;
#  - the NFD feature file, written where nfd-worker reads it, read by
#    tests/lib/nfd_features.py (NFD's local-source rules): the labels that
#    RuntimeClass sockopt-bypass selects on are there (installed=true,
#    bypass-prot-mem=true), so pods that ask for the bypass land here;
#  - the DaemonSet agent's cleanup: the file goes when it is removed.
# No NFD daemon runs: the file is read by the parser, not by nfd-worker.
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"

NFD_DIR=/etc/kubernetes/node-feature-discovery/features.d
F=$NFD_DIR/oci-sockopt-hook
command -v python3 >/dev/null || tap_skip_all "python3 not in the node image"

bypass=$("$NODE_HOOK" probe --json | jq -r .bypass_prot_mem)
tap_is "$bypass" true "probe --json: this kernel ($(uname -r)) has SK_BPF_BYPASS_PROT_MEM"
json=$("$NODE_HOOK" features --json 2>/dev/null)
tap_is "$(jq -c '[.labels["sockopt-hook.io/installed"], .labels["sockopt-hook.io/bypass-prot-mem"]]' <<<"$json")" \
	'["false","false"]' "containerd without the handler sockopt: installed=false, bypass-prot-mem=false"
tap_like "$(jq -r .wiring.missing <<<"$json")" "^containerd has no runtime handler sockopt" \
	"features --json says why" || tap_diag "$json"
# A node without containerd (podman, CRI-O without crio on PATH here): the
# hooks.d file that 00-node installed is the wiring.
mkdir -p "$NODE_VAR/nopath" && ln -sf "$(command -v rm)" "$NODE_VAR/nopath/rm"
podman_node() { env PATH="$NODE_VAR/nopath" "$NODE_HOOK" "$@"; }
out=$(podman_node features 2>&1)
tap_is "$(grep '^sockopt-hook.io/bypass-prot-mem=' <<<"$out")" \
	"sockopt-hook.io/bypass-prot-mem=true" "features where the hooks.d file is the wiring: bypass-prot-mem=true" ||
	tap_diag "$out"

mkdir -p "$NFD_DIR"
out=$(podman_node features --nfd-file "$F" 2>&1)
tap_like "$out" "^wrote [0-9]+ label\\(s\\) to $F, expiring at " \
	"features --nfd-file into NFD's features.d"
parsed=$(python3 "$NODE_PAYLOAD/src/tests/lib/nfd_features.py" "$F")
tap_ok $? "NFD's local source reads it without an error" || tap_diag "$parsed"
tap_is "$(jq -c '.labels | with_entries(select(.key | test("installed|bypass")))' <<<"$parsed")" \
	'{"sockopt-hook.io/bypass-prot-mem":"true","sockopt-hook.io/installed":"true"}' \
	"the labels RuntimeClass sockopt-bypass selects on: this node qualifies"
tap_is "$(jq -r '.labels | keys[] | select(startswith("sockopt-hook.io/policy."))' <<<"$parsed" | sort | tr '\n' ' ')" \
	"sockopt-hook.io/policy.bulk sockopt-hook.io/policy.restricted sockopt-hook.io/policy.setonly " \
	"one label per policy the example config lets annotations choose"
rm -f "$F"
tap_check "the file removed (as the agent does on SIGTERM): nothing left for NFD" \
	test -z "$(ls -A "$NFD_DIR")"
rmdir -p "$NFD_DIR" 2>/dev/null

tap_done
