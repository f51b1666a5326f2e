#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# crun 1.2x with the systemd cgroup manager (`crun --cgroup-manager=systemd
# run`), the same bundle and checks as 10-runc-systemd.sh.
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"

oci_runtime_scenario crun --cgroup-manager=systemd
tap_done
