#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Issue 2 under crun --cgroup-manager=disabled: the container stays in the
# caller's cgroup, so the hook must make a cgroup of its own. The same checks
# as 10-runc-policy.sh.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/tap.sh"
. "$here/../lib/container.sh"
. "$here/../lib/policy_suite.sh"

policy_suite crun-nocg prestart
