#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Audit lines reach a real journald (systemd's, on the node): a runc
# container asking for a policy the installed config does not have is
# refused, and the journal holds one entry with the hook's fields, the
# pod's names as containerd's CRI writes them, the annotation and the
# setting: what `journalctl OCI_SOCKOPT_HOOK_...=` finds on a node.
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"

command -v journalctl >/dev/null || tap_skip_all "journalctl not in the node image"
[ -S /run/systemd/journal/socket ] || tap_skip_all "no journald socket on the node"

id=node-journald-$$
ann='{"sockopt-hook.io/policy": "nosuch",
      "io.kubernetes.cri.container-type": "container",
      "io.kubernetes.cri.sandbox-namespace": "shop",
      "io.kubernetes.cri.sandbox-name": "web-0",
      "io.kubernetes.cri.container-name": "app"}'
make_bundle "$NODE_VAR/bundles/$id" "$id" "system.slice:runc:$id" "$ann"
tap_ok $? "bundle asking for policy 'nosuch', with containerd's pod names"
runc --systemd-cgroup run -d -b "$NODE_VAR/bundles/$id" "$id" </dev/null >/dev/null 2>"$NODE_VAR/$id.err"
tap_ok $((! $?)) "runc refuses the container (prestart fails)"
tap_like "$(cat "$NODE_VAR/$id.err")" "nosuch" "runc shows the hook's one line" ||
	sed 's/^/# /' "$NODE_VAR/$id.err"
runc delete -f "$id" >/dev/null 2>&1

# journald may take a moment to make the entry visible to readers.
# shellcheck disable=SC2317 # called through wait_until
entry() {
	journalctl -o json --no-pager SYSLOG_IDENTIFIER=oci-sockopt-hook \
		OCI_SOCKOPT_HOOK_CONTAINER_ID="$id" OCI_SOCKOPT_HOOK_EVENT=refused
}
# shellcheck disable=SC2317 # called through wait_until
has_entry() { [ -n "$(entry)" ]; }
wait_until 10 has_entry
tap_is "$(entry | wc -l)" 1 "one audit entry in the journal for the container"
e=$(entry | head -n1)
tap_is "$(jq -r '[.OCI_SOCKOPT_HOOK_REASON, .OCI_SOCKOPT_HOOK_NAMESPACE, .OCI_SOCKOPT_HOOK_POD, .OCI_SOCKOPT_HOOK_CONTAINER] | join(" ")' <<<"$e")" \
	"policy_unknown shop web-0 app" "its reason and the pod's names" || tap_diag "$e"
tap_is "$(jq -r '"\(.OCI_SOCKOPT_HOOK_ANNOTATION)=\(.OCI_SOCKOPT_HOOK_SETTING)"' <<<"$e")" \
	"sockopt-hook.io/policy=nosuch" "the annotation and its setting"
tap_is "$(jq -r .PRIORITY <<<"$e")" 5 "at notice priority"
tap_like "$(jq -r .MESSAGE <<<"$e")" "^refused \\(policy_unknown\\): " "MESSAGE says what happened"
tap_check "nothing left behind: no record" test ! -e "$NODE_STATE/$id.json"
tap_done
