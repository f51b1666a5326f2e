#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# runc 1.3 with the systemd cgroup driver: `runc --systemd-cgroup run`
# with a bundle carrying the example hooks, the "restricted" policy and the
# memory-accounting opt-out. Inside: the policy and the bypass; the
# container's cgroup is system.slice/runc-ID.scope; after delete: no record,
# no program, no scope. A process outside, on the same node, stays charged.
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"

out=$(memacct measure -p tcp -f 4 -P 1024 2>&1 | tail -n1)
tap_diag "outside any container: $out"
check_charged "node, no container" "$out"
oci_runtime_scenario runc --systemd-cgroup
tap_done
