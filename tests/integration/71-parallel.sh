#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 50 containers started at once with real runc (detached): 20 with policy
# "restricted", 20 with "setonly", 10 without annotations. Each must get
# exactly its policy (the program types on its cgroup, and SO_MARK from
# `runc exec sockcheck`), every state record must parse and match its
# container and cgroup, `status --json` must list the 40 policed ones live,
# and each index file of shared copies must name a program that one of
# them has attached. Then all 50 are deleted at once and BPF programs,
# records, index files and cgroups must be as before.
#
# Modules: `share.c`, `state.c`, `stats.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

N=50
ct_setup runc
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR

RESTRICTED="cgroup_getsockopt sh_getsockopt
cgroup_inet_sock_create sh_sock_create
cgroup_setsockopt sh_setsockopt"
SETONLY="cgroup_setsockopt sh_setsockopt"

# kind I: the policy of container I (0-based): 2 in 5 restricted, 2 in 5
# setonly, 1 in 5 none.
kind()
{
	case $(($1 % 5)) in
	0 | 1) echo restricted ;;
	2 | 3) echo setonly ;;
	*) echo plain ;;
	esac
}

NAMES=()
for i in $(seq 0 $((N - 1))); do
	k=$(kind "$i")
	name=p$i-$k
	NAMES+=("$name")
	if [ "$k" = plain ]; then
		ct_bundle "$name" -- sleep 600 >/dev/null
	else
		ct_bundle -a "sockopt-hook.io/policy=$k" "$name" -- sleep 600 >/dev/null
	fi || { echo "Bail out! cannot write bundle $name"; exit 1; }
	CT_IDS+=("runc $(ct_id "$name")")
done

# in_parallel CMD: runs "CMD NAME" for every container at once, each
# with a timeout; "CMD NAME" writes its exit status to $CT_TMP/NAME.rc.
# Sets SECS to the seconds it took.
in_parallel()
{
	local name pids=() start=$SECONDS

	for name in "${NAMES[@]}"; do
		"$1" "$name" &
		pids+=($!)
	done
	wait "${pids[@]}"
	SECS=$((SECONDS - start))
}

# shellcheck disable=SC2317 # called through in_parallel
run_one()
{
	timeout -k 5 60 runc run -d --bundle "$CT_TMP/bundles/$1" "$(ct_id "$1")" \
		</dev/null >"$CT_TMP/$1.out" 2>"$CT_TMP/$1.err"
	echo $? >"$CT_TMP/$1.rc"
}

# shellcheck disable=SC2317 # called through in_parallel
delete_one()
{
	timeout -k 5 60 runc delete -f "$(ct_id "$1")" >"$CT_TMP/$1.del" 2>&1
	echo $? >"$CT_TMP/$1.rc"
}

# shellcheck disable=SC2317 # called through in_parallel
exec_one()
{
	timeout -k 5 30 runc exec "$(ct_id "$1")" sockcheck set-mark 5 \
		>"$CT_TMP/$1.exec" 2>&1
	echo $? >"$CT_TMP/$1.rc"
}

# failures: names whose .rc is not 0, with their stderr.
failures()
{
	local name

	for name in "${NAMES[@]}"; do
		[ "$(cat "$CT_TMP/$name.rc" 2>/dev/null)" = 0 ] ||
			echo "$name: exit $(cat "$CT_TMP/$name.rc" 2>/dev/null): $(cat "$CT_TMP/$name.$1" 2>/dev/null)"
	done
}

# all_ok EXT WHAT: one test, that the last in_parallel succeeded for every
# container; the failures, with their $CT_TMP/NAME.EXT, otherwise.
all_ok()
{
	local bad

	bad=$(failures "$1")
	tap_ok "$(grep -c . <<<"$bad")" "all $N containers $2 in parallel (${SECS}s)" ||
		tap_diag "$bad"
}

in_parallel run_one
all_ok err start
echo "# report: $N runc containers started in parallel in ${SECS}s"

in_parallel exec_one
declare -A CG PID
bad_progs='' bad_mark=''
for name in "${NAMES[@]}"; do
	id=$(ct_id "$name")
	PID[$name]=$(runc state "$id" 2>/dev/null | jq -r '.pid // empty')
	CG[$name]=$([ -n "${PID[$name]}" ] && ct_cgroup_of "${PID[$name]}")
	case $name in
	*restricted) want=$RESTRICTED mark=EPERM ;;
	*setonly) want=$SETONLY mark=EPERM ;;
	*) want='' mark=ok ;;
	esac
	got=$([ -n "${CG[$name]}" ] && ct_our_progs "${CG[$name]}" effective)
	[ -n "${CG[$name]}" ] && [ "$got" = "$want" ] ||
		bad_progs+="$name (cgroup '${CG[$name]}'): $(tr '\n' ',' <<<"$got")"$'\n'
	got=$(cat "$CT_TMP/$name.exec" 2>&1)
	[ "$got" = "setsockopt=$mark" ] || bad_mark+="$name: $got"$'\n'
done
tap_is "$bad_progs" "" "every container's cgroup has exactly its policy's program types (bpftool cgroup show)"
tap_is "$bad_mark" "" "runc exec sockcheck set-mark 5, 50 at once: EPERM in all 40 policed containers, ok in the 10 plain ones (${SECS}s)"

# The records: one per policed container, each parsing and matching.
bad_rec=
nrec=0
for name in "${NAMES[@]}"; do
	id=$(ct_id "$name")
	f=$CT_STATE_DIR/$id.json
	case $name in
	*plain)
		[ ! -e "$f" ] || bad_rec+="$name: has a record"$'\n'
		continue
		;;
	esac
	nrec=$((nrec + 1))
	attached=$(timeout 20 bpftool -j cgroup show "${CG[$name]}" 2>/dev/null |
		jq -c '[.[]? | select(.name | startswith("sh_")) | .id] | sort')
	got=$(ct_record "$id" | jq -c '[.id, .pid, .cgroup_path, .policy, ([.programs[].id] | sort)]' 2>&1)
	want=$(jq -cn --arg id "$id" --argjson pid "${PID[$name]:-0}" \
		--arg cg "${CG[$name]}" --arg p "${name##*-}" --argjson a "${attached:-null}" \
		'[$id, $pid, $cg, $p, $a]')
	[ "$got" = "$want" ] || bad_rec+="$name: record $got, want $want"$'\n'
done
tap_is "$bad_rec" "" "$nrec state records parse as JSON and match their container, cgroup, policy and attached program ids"
tap_is "$(find "$CT_STATE_DIR" -name "$CT_PREFIX-*.json" | wc -l)" "$nrec" "exactly $nrec records, no stray ones"
tap_is "$(find "$CT_STATE_DIR" -name '.*' -type f | wc -l)" 0 "no temporary files left in the state directory"

status=$(timeout 30 "$HOOK" status --json 2>&1)
live=$(jq -r '[.[] | select(.live == true) | .id] | sort | join(" ")' <<<"$status" 2>&1)
want=$(for name in "${NAMES[@]}"; do
	[[ $name == *plain ]] || ct_id "$name"
done | sort | tr '\n' ' ')
tap_is "$live " "$want" "status --json lists the $nrec policed containers, all live"

# Each index entry names a program that some container has attached.
all_attached=$(for name in "${NAMES[@]}"; do
	timeout 20 bpftool -j cgroup show "${CG[$name]}" 2>/dev/null |
		jq -r '.[]? | select(.name | startswith("sh_")) | .id'
done | sort -u)
bad_idx=
for f in "$CT_STATE_DIR"/shared-*.id; do
	[ -e "$f" ] || continue
	grep -qx "$(cat "$f")" <<<"$all_attached" ||
		bad_idx+="$(basename "$f"): $(cat "$f") is attached nowhere"$'\n'
done
tap_is "$bad_idx" "" "every index file of shared copies names a program attached to a live container"
for t in sh_sock_create sh_setsockopt sh_getsockopt; do
	n=$(for name in "${NAMES[@]}"; do
		timeout 20 bpftool -j cgroup show "${CG[$name]}" 2>/dev/null |
			jq -r --arg t "$t" '.[]? | select(.name == $t) | .id'
	done | sort | uniq -c | awk '{ printf "%s%d", sep, $1; sep = "+" }')
	echo "# report: $t: copies shared by $n containers"
done

in_parallel delete_one
all_ok del "are deleted"
ct_check_same "after the parallel delete, BPF programs, records, index files and cgroups are as before" \
	"$BASE"
tap_done
