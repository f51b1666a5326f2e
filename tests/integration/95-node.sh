#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The hook on a node as users run it: a Debian unstable node (systemd as
# PID 1, cgroup v2 only, the VM suite's >= 6.19 kernel, runc 1.3, crun
# 1.2x, podman 5, containerd 2.x) booted under QEMU (tests/node/), the hook
# installed there with `make install`, the scenarios' TAP and figures
# reported here. QEMU touches no host BPF program, cgroup or hook state
# (89-node-runner.sh shows the node's own tools on the host); the lock is
# held as for every suite.
#
# Modules: all
# Root: yes
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/host.sh
. "$here/../lib/host.sh"
tap_require_root
host_lock || tap_bail "cannot take $HOST_LOCK"

host_qemu_suite tests/node/run-node-suite.sh node-suite '^boot:\|^node:'
