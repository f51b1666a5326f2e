#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Node labels on a node whose kernel has the bypass (>= 6.19), with the
# hook and the example config that 00-node installed:
#  - `features` labels bypass-prot-mem=true, as `probe --json` says;
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
out=$("$NODE_HOOK" features 2>&1)
tap_is "$(grep '^sockopt-hook.io/bypass-prot-mem=' <<<"$out")" \
	"sockopt-hook.io/bypass-prot-mem=true" "features: bypass-prot-mem=true" ||
	tap_diag "$out"

mkdir -p "$NFD_DIR"
out=$("$NODE_HOOK" features --nfd-file "$F" 2>&1)
tap_like "$out" "^wrote [0-9]+ label\\(s\\) to $F, expiring at " \
	"features --nfd-file into NFD's features.d"
parsed=$(python3 "$NODE_PAYLOAD/src/tests/lib/nfd_features.py" "$F" --allow-ns sockopt-hook.io)
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
