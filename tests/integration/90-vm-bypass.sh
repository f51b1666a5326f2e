#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The memory-accounting opt-out, proven on a kernel that has it: boots a
# Debian kernel >= 6.19 under QEMU (tests/vm/) and runs the hook there;
# a second boot (the amd64 flavour, syscall.x32=y) tries the x32 and i386
# ABIs against the policy and the seccomp example.
# The guest's TAP is this suite's TAP; the figures are reported.
#
# Modules: `load.c`, `prestart.c`
# Root: yes
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/host.sh
. "$here/../lib/host.sh"
tap_require_root
host_lock || tap_bail "cannot take $HOST_LOCK"
host_qemu_suite tests/vm/run-vm-suite.sh vm-suite '^boot:'
