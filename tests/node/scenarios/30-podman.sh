#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# podman 5 through its default hooks.d directory (no --hooks-dir: the file
# `make install` put in /usr/share/containers/oci/hooks.d) with its systemd
# cgroup manager: `podman run --rm` with the policy and the bypass, one
# without annotations (the hooks.d file leaves it alone), and a detached
# container driven by exec, stop and rm. Nothing left after each.
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"

# CAP_NET_ADMIN and CAP_NET_RAW: SO_MARK and raw sockets are then refused
# by the policy, not by podman's default capabilities
caps=(--cap-add NET_ADMIN --cap-add NET_RAW)
ann=("${caps[@]}" --annotation "$NODE_ANN_POLICY=restricted" --annotation "$NODE_ANN_BYPASS=true")
info=$(podman info --format '{{.Host.OCIRuntime.Name}} {{.Host.CgroupManager}} {{.Host.CgroupsVersion}}' 2>&1)
tap_diag "$(podman --version), $info"
tap_like "$info" ' systemd v2$' "podman: systemd cgroup manager, cgroup v2"

libpod_scopes() {
	systemctl list-units --all --plain --no-legend 'libpod-*.scope' | awk '{ print $1 }'
}

# the directories podman reads hooks from, as it says at debug level
dirs=$(podman --log-level=debug run --rm --network=none "$NODE_IMAGE" true 2>&1 |
	sed -n 's/.*msg="reading hooks from \([^"]*\)".*/\1/p' | tr '\n' ' ')
tap_diag "podman reads hooks from: $dirs"
tap_like "$dirs" "(^| )$NODE_HOOKSD " "podman reads hooks from $NODE_HOOKSD by default"

# podman 5 does not read /etc/containers/oci/hooks.d by default: the
# hooks.d file there alone polices nothing
mkdir -p "$NODE_ETC_HOOKSD"
mv "$NODE_HOOKSD/oci-sockopt-hook.json" "$NODE_ETC_HOOKSD/"
PROBE_OUT=$(podman run --rm --network=none "${ann[@]}" "$NODE_IMAGE" /probe 2>&1)
tap_is "$(out_val cc)" cubic \
	"podman 5 ignores $NODE_ETC_HOOKSD by default: the hooks.d file there alone polices nothing"
mv "$NODE_ETC_HOOKSD/oci-sockopt-hook.json" "$NODE_HOOKSD/"
tap_check "the hooks.d file back in $NODE_HOOKSD" test -f "$NODE_HOOKSD/oci-sockopt-hook.json"

# --rm, with the policy and the bypass
snapshot
PROBE_OUT=$(podman run --rm --network=none "${ann[@]}" "$NODE_IMAGE" /probe 2>&1)
tap_ok $? "podman run --rm with the annotations"
tap_diag "$PROBE_OUT"
check_restricted "podman run --rm"
check_bypassed "podman run --rm"
tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" "podman run --rm: no hook state record left"
check_progs "podman run --rm: the BPF programs loaded are those before"
wait_until 20 test -z "$(libpod_scopes)"
tap_ok $? "podman run --rm: no libpod scope left ($(libpod_scopes | tr '\n' ' '))"

# no annotations: the hooks.d "when" leaves it alone
PROBE_OUT=$(podman run --rm --network=none "${caps[@]}" "$NODE_IMAGE" /probe 2>&1)
tap_ok $? "podman run --rm without annotations"
check_unpoliced "podman, no annotations"
check_charged "podman, no annotations" "$(out_val memacct)"

# detached: run -d, exec, stop, rm
snapshot
cid=$(podman run -d --name node-podman --network=none "${ann[@]}" "$NODE_IMAGE" sleep 600 2>&1)
tap_ok $? "podman run -d" || tap_diag "$cid"
pid=$(podman inspect -f '{{.State.Pid}}' node-podman)
cg=$(cgroup_of "$pid")
tap_like "$cg" "^/machine\\.slice/libpod-$cid\\.scope(/container)?\$" \
	"podman: the container's cgroup is a systemd scope ($cg)"
scope="libpod-$cid.scope"
tap_is "$(systemctl show -P ActiveState "$scope")" active "podman: systemd knows the scope (active)"
tap_is "$(sh_progs "$cg")" "sh_getsockopt sh_setsockopt sh_sock_bypass" \
	"podman: our programs in effect on the container's cgroup"
tap_check "podman: the hook's record $NODE_STATE/$cid.json" test -f "$NODE_STATE/$cid.json"
PROBE_OUT=$(podman exec node-podman /probe 2>&1)
tap_ok $? "podman exec"
tap_diag "$PROBE_OUT"
check_restricted "podman exec"
check_bypassed "podman exec"
out=$(podman stop -t 1 node-podman 2>&1)
tap_ok $? "podman stop" || tap_diag "$out"
tap_is "$(podman inspect -f '{{.State.Status}}' node-podman 2>&1)" exited "podman: stopped container exited"
out=$(podman rm node-podman 2>&1)
tap_ok $? "podman rm" || tap_diag "$out"
check_gone podman "$scope" "${cg%/container}"
tap_done
