#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Nothing may remain after a container is gone, even when poststop never
# runs: a restricted container without a poststop hook, once deleted, leaves
# the BPF programs and the cgroups as before; the hook's state from it is
# gone at the latest after the hook's next run (a later container).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/tap.sh"
. "$here/../lib/container.sh"

ct_setup runc crun crun-nocg

for rt in runc crun crun-nocg; do
	kernel=$(ct_snapshot progs cgroups)
	state=$(ct_snapshot state)
	b=$(ct_bundle -r "$rt" -P -a sockopt-hook.io/policy=restricted "$rt" -- \
		/bin/sh -c 'sockcheck set-mark 5; sockcheck listen 4000 120')
	ct_start "$rt" "$(ct_id "$rt")" "$b" '^listen='
	tap_ok $? "$rt: restricted container without poststop starts" ||
		tap_diag "stderr:" "$(cat "$CT_ERR")"
	tap_is "$(sed -n 's/^setsockopt=//p' "$CT_OUT")" EPERM "$rt: the policy applies"
	ct_delete "$rt" "$(ct_id "$rt")"
	diff=$(ct_same_as "$kernel" progs cgroups)
	tap_ok $? "$rt: after delete without poststop, BPF programs and cgroups are as before" ||
		tap_diag "$diff"
	# The hook runs again for a later container, with poststop this time.
	b=$(ct_bundle -r "$rt" "$rt-next" -- sockcheck all)
	ct_run "$rt" "$(ct_id "$rt-next")" "$b"
	diff=$(ct_same_as "$state" state)
	tap_ok $? "$rt: the hook's state is as before once a later container has run" ||
		tap_diag "$diff"
done

tap_done
