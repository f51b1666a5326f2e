#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Nothing may remain after a container is gone, even when poststop never
# runs. A restricted container without a poststop hook is deleted; then
# the BPF programs and cgroups must be as before. Where the hook made the
# cgroup itself (crun --cgroup-manager=disabled), its reaper releases it;
# and for every runtime all, hook state included, must be as before once a
# later container has come and gone a minute after the last gc (poststop
# collects at most once a minute; 45-preload checks that it waits).
#
# Modules: `teardown.c`, `state.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc crun crun-nocg

for rt in runc crun crun-nocg; do
	before=$(ct_snapshot)
	kernel=$(ct_snapshot progs cgroups)
	b=$(ct_bundle -r "$rt" -P -a sockopt-hook.io/policy=restricted "$rt" -- \
		/bin/sh -c 'sockcheck set-mark 5; sockcheck listen 4000 120')
	ct_start "$rt" "$(ct_id "$rt")" "$b" '^listen='
	tap_ok $? "$rt: restricted container without poststop starts" ||
		tap_diag "stderr:" "$(cat "$CT_ERR")"
	tap_is "$(sed -n 's/^setsockopt=//p' "$CT_OUT")" EPERM "$rt: the policy applies"
	ct_delete "$rt" "$(ct_id "$rt")"
	# A hook-made cgroup (crun-nocg) is released by the hook's reaper
	# once it empties: give it a moment, without a timed assertion.
	for _ in $(seq 50); do
		ct_same_as "$kernel" progs cgroups >/dev/null && break
		sleep 0.1
	done
	ct_check_same "$rt: right after delete, BPF programs and cgroups are as before" \
		"$kernel" progs cgroups

	b=$(ct_bundle -r "$rt" "$rt-next" -- sockcheck all)
	[ -e "$CT_STATE_DIR/last-gc" ] && touch -d '-2 minutes' "$CT_STATE_DIR/last-gc"
	ct_run "$rt" "$(ct_id "$rt-next")" "$b"
	ct_check_same "$rt: once a later container has come and gone, BPF programs, hook state and cgroups are as before" \
		"$before"
done

tap_done
