#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The hook end to end under crun with its cgroup manager (v1 hugetlb
# mounted, so crun accepts this hybrid host): the same checks as
# 10-runc-policy.sh.
#
# Modules: `prestart.c`, `cg.c`, `teardown.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/policy_suite.sh
. "$here/../lib/policy_suite.sh"

policy_suite crun prestart createRuntime
