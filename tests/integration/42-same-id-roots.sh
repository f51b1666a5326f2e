#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Container ids are unique per runtime root, not per node. Under real
# runc with two roots (runc --root A, runc --root B) and one id:
#  - two running containers are two records: status, apply and metrics
#    see both; the second's record is keyed by the id and its cgroup id;
#    deleting one (its poststop) leaves the other's programs and record;
#  - the first's init exits while another process stays in its cgroup
#    (moved there from the host, outside its pid namespace), and a second
#    container of the id starts under the other root: its prestart and its
#    poststop leave the first's programs (the same ids) and record on that
#    populated cgroup, where a process that joins is still policed;
#    status, apply and metrics see both; once that cgroup is empty, the
#    first's own delete releases it.
#
# Modules: `state.c`, `prestart.c`, `teardown.c`, `metrics.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
cfg=$CT_EXAMPLE_CONFIG
A=$CT_TMP/root-a B=$CT_TMP/root-b
mkdir -p "$A" "$B"
BEFORE=$(ct_snapshot)

# ids CGROUP: our programs' ids on a cgroup, sorted.
ids()
{
	timeout 20 bpftool -j cgroup show "$1" 2>/dev/null |
		jq '.[]? | select(.name | startswith("sh_")) | .id' | sort -n | xargs
}
# records ID: the records status lists for ID, as "policy cgroup" lines.
records()
{
	"$HOOK" --config "$cfg" status --json 2>/dev/null |
		jq -r --arg id "$1" '.[] | select(.id == $id) | "\(.policy) \(.cgroup)"' | sort
}

# ---- 1. Two running containers, one id ----------------------------------------
id=$(ct_id same)
ba=$(ct_bundle -a sockopt-hook.io/policy=restricted same-a -- /bin/sh -c 'sleep 120')
bb=$(ct_bundle -a sockopt-hook.io/policy=setonly same-b -- /bin/sh -c 'sleep 120')
ct_start_ok "root A: container $id (restricted) starts" "runc@$A" "$id" "$ba"
cga=$CT_CG
ct_start_ok "root B: container $id (setonly) starts too" "runc@$B" "$id" "$bb"
cgb=$CT_CG
idsa=$(ids "$cga") idsb=$(ids "$cgb")
tap_ok "$([ -n "$idsa" ] && [ -n "$idsb" ] && [ "$cga" != "$cgb" ]; echo $?)" \
	"each has its own cgroup and programs ($idsa; $idsb)"
tap_is "$(records "$id" | awk '{print $1}' | xargs)" "restricted setonly" \
	"status lists two records for the one id" || tap_diag "$("$HOOK" status 2>&1)"
tap_is "$(find "$CT_STATE_DIR" -maxdepth 1 -name "$id*.json" -printf '%f\n' | sed "s/^$id//" | sed 's/@[0-9a-f]\{16\}/@CGID/' | sort | xargs)" \
	".json @CGID.json" "the second is keyed by the id and its cgroup id"
out=$("$HOOK" --config "$cfg" apply --dry-run --all 2>&1)
tap_is "$(grep -c "$id" <<<"$out")" 2 "apply sees both" || tap_diag "$out"
out=$("$HOOK" metrics 2>&1)
tap_is "$(grep '^oci_sockopt_hook_container_info' <<<"$out" | grep -c "$id")" 2 \
	"metrics have a series for each" || tap_diag "$(grep "$id" <<<"$out")"
tap_is "$(grep '^oci_sockopt_hook_container_info' <<<"$out" | grep "$id" | sed 's/.*container_id="\([^"]*\)".*/\1/' | sort -u | wc -l)" 2 \
	"under two container_id values"
ct_delete "runc@$B" "$id"
tap_is "$(ids "$cga")" "$idsa" "root B's container deleted (its poststop ran): root A's programs stay"
tap_is "$(records "$id" | awk '{print $1}' | xargs)" "restricted" "and its record"
ct_delete "runc@$A" "$id"
tap_is "$(records "$id")" "" "root A's deleted too: no record left"

# ---- 2. The first's init has exited, its cgroup still populated -------------
id=$(ct_id stay)
ba=$(ct_bundle -a sockopt-hook.io/policy=restricted stay-a -- /bin/sh -c 'sleep 300')
bb=$(ct_bundle -a sockopt-hook.io/policy=setonly stay-b -- /bin/sh -c 'sleep 120')
ct_start_ok "root A: container $id (restricted) starts" "runc@$A" "$id" "$ba"
cga=$CT_CG inita=$CT_PID
# A host process moved into A's cgroup: outside its pid namespace, it
# outlives A's init.
sleep 300 &
stray=$!
CT_PIDS+=("$stray")
echo "$stray" >"$cga/cgroup.procs"
kill -KILL "$inita"
for _ in $(seq 1 50); do
	[ "$(runc --root "$A" state "$id" 2>/dev/null | jq -r .status)" = stopped ] && break
	sleep 0.1
done
tap_is "$(runc --root "$A" state "$id" 2>/dev/null | jq -r .status) $(grep '^populated' "$cga/cgroup.events")" \
	"stopped populated 1" "root A: its init is gone, its cgroup still holds a process"
idsa=$(ids "$cga")
ct_start_ok "root B: container $id (setonly) starts too" "runc@$B" "$id" "$bb"
cgb=$CT_CG
idsb=$(ids "$cgb")
tap_ok "$([ -n "$idsa" ] && [ -n "$idsb" ] && [ "$cga" != "$cgb" ]; echo $?)" \
	"each has its own cgroup and programs ($idsa; $idsb)"
tap_is "$(records "$id" | awk '{print $1}' | xargs)" "restricted setonly" \
	"status lists both records" || tap_diag "$("$HOOK" status 2>&1)"
out=$("$HOOK" --config "$cfg" apply --dry-run --all 2>&1)
tap_is "$(grep -c "$id" <<<"$out")" 2 "apply sees both" || tap_diag "$out"
out=$("$HOOK" metrics 2>&1)
tap_is "$(grep '^oci_sockopt_hook_container_info' <<<"$out" | grep -c "$id")" 2 \
	"metrics have a series for each" || tap_diag "$(grep "$id" <<<"$out")"
ct_delete "runc@$B" "$id"
tap_is "$(ids "$cgb")" "" "root B's container deleted: its programs are gone"
tap_is "$(ids "$cga")" "$idsa" \
	"root B's poststop leaves root A's programs on A's populated cgroup (the same ids)"
tap_is "$(records "$id" | awk '{print $1}' | xargs)" "restricted" "and its record"
out=$(sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" set-mark 5' sh "$cga" "$CT_BUILD/tests/sockcheck" 2>&1)
tap_is "$(sed -n 's/^setsockopt=//p' <<<"$out")" EPERM \
	"a process joining A's cgroup still gets EPERM for SO_MARK" || tap_diag "$out"
ct_kill "$stray"
ct_wait_for "$cga/cgroup.events" '^populated 0' 50
ct_delete "runc@$A" "$id"
tap_is "$(records "$id")" "" "A's cgroup empty and A deleted: no record left"

ct_check_same "BPF programs, hook state and cgroups are as before" "$BEFORE"
tap_done
