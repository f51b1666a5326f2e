#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The hook end to end under runc: a container annotated with policy
# "restricted" (attached at prestart, then at createRuntime), one without
# annotations and one with policy "setonly"; after each `runc delete`
# nothing is left behind.
#
# Modules: `prestart.c`, `policy.c`, `load.c`, `attach.c`, `teardown.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/policy_suite.sh
. "$here/../lib/policy_suite.sh"

policy_suite runc prestart createRuntime
