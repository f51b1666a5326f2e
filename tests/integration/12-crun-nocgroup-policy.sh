#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The hook end to end under crun --cgroup-manager=disabled: the container
# stays in the caller's cgroup, so the hook must make a cgroup of its own.
# The same checks as 10-runc-policy.sh, plus a caller in a non-root cgroup
# shared with another process.
#
# Modules: `cg.c`, `teardown.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/policy_suite.sh
. "$here/../lib/policy_suite.sh"

# The caller's cgroup is not the root but holds another process: the hook
# must still give the container a cgroup of its own, and leave the other
# process and its cgroup alone.
extra_checks()
{
	local rt=$1 before=$2 shared mine sleeper

	shared=$CT_CG2/$(ct_id caller)
	mine=$(ct_cgroup_of $$)
	ct_sleeper "$shared" || return
	sleeper=$CT_SLEEPER
	echo $$ >"$shared/cgroup.procs"
	start_listener "$rt" shared -a sockopt-hook.io/policy=restricted
	echo $$ >"$mine/cgroup.procs"
	tap_is "$(out_val setsockopt)" EPERM "$rt shared: setsockopt(SO_MARK) gives EPERM"
	check_own_cgroup "$rt" shared
	tap_is "$(cat "$shared/cgroup.procs")" "$sleeper" \
		"$rt shared: the other process stays where it was"
	tap_is "$(ct_our_progs "$shared" effective)" "" \
		"$rt shared: no program of ours on the shared cgroup"
	ct_delete "$rt" "$(ct_id shared)"
	ct_kill "$sleeper"
	rmdir "$shared"
	ct_check_same "$rt shared: after delete, BPF programs, hook state and cgroups are as before" \
		"$before"
}

policy_suite crun-nocg prestart
