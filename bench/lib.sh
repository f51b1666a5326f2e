# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers for bench/run.sh: the test lock, "containers" (a cgroup v2
# directory with one sleeping process, an OCI state and a bundle whose
# annotations name a policy), attaching through the hook, results, and
# cleanup of exactly what we made.
#
# Everything lives under one parent cgroup, $CG2/sockopt-bench-<pid>, one
# temp dir, and the hook's state dir inside it; cleanup releases every
# attachment (hook poststop, sockbench detach-empty), kills the pids we
# started, removes the cgroups and checks that no program of ours is left.

B_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The tests' lock, cgroup2 mount and program count.
# shellcheck source=tests/lib/host.sh
. "$B_TOP/tests/lib/host.sh"
BUILD=${BUILD:-build}
[[ $BUILD == /* ]] || BUILD=$B_TOP/$BUILD
HOOK=${HOOK:-$BUILD/oci-sockopt-hook}
SB=${SB:-$BUILD/bench/sockbench}
B_OUT=$BUILD/bench
B_CONFIG=$B_TOP/examples/config.json

B_TMP=
B_CG2=
B_CG=
B_PIDS=()
B_ATTACHED=()   # "name config" of every container the hook attached
B_EMPTY=()      # cgroups with the empty programs attached
B_RUNC_IDS=()
B_HOOK_PROGS=0  # sh_* programs loaded before we started
B_BROKEN=0

b_log()
{
	printf '%s\n' "$*" >&2
}

# b_fail MSG: something is broken (not slow): reported, and the run exits 1.
b_fail()
{
	b_log "bench: FAILED: $*"
	B_BROKEN=1
}

# b_init: checks what we need, takes the tests' lock, makes the temp dir
# and the parent cgroup, and sets the cleanup trap.
b_init()
{
	local cmd

	if [ "$(id -u)" != 0 ]; then
		b_log "bench: needs root (cgroups and BPF)"
		return 77
	fi
	for cmd in jq bpftool runc awk flock; do
		command -v "$cmd" >/dev/null || {
			b_log "bench: $cmd is missing (./scripts/deps.sh check)"
			return 1
		}
	done
	[ -x /bin/busybox ] || { b_log "bench: /bin/busybox missing"; return 1; }
	if [ ! -x "$HOOK" ] || [ ! -x "$SB" ]; then
		b_log "bench: build first: $HOOK $SB"
		return 1
	fi
	B_CG2=$(host_cgroup2_mount)
	[ -n "$B_CG2" ] || { b_log "bench: no cgroup2 mount"; return 1; }
	host_lock || { b_log "bench: cannot take $HOST_LOCK"; return 1; }
	# Other work on this machine preempts us less at the highest priority.
	renice -n -20 -p $$ >/dev/null 2>&1
	mkdir -p "$B_OUT/raw" || return 1
	rm -f "$B_OUT"/raw/* "$B_OUT"/rows.jsonl "$B_OUT"/perf.txt \
		"$B_OUT"/strace.txt "$B_OUT"/table.txt "$B_OUT"/results.json
	B_HOOK_PROGS=$(host_prog_count '^sh_')
	B_TMP=$(mktemp -d /tmp/sockopt-bench.XXXXXX) || return 1
	trap b_cleanup EXIT
	trap 'exit 130' INT TERM
	mkdir -p "$B_TMP/state" "$B_TMP/bundles" "$B_TMP/states" \
		"$B_TMP/configs" || return 1
	export OCI_SOCKOPT_HOOK_STATE_DIR=$B_TMP/state
	B_CG=$B_CG2/sockopt-bench-$$
	mkdir "$B_CG" "$B_CG/park" || return 1
}

# b_config NAME [JQ-FILTER]: an operator config made from
# examples/config.json; prints its path.
b_config()
{
	local out=$B_TMP/configs/$1.json

	jq "${2:-.}" "$B_CONFIG" >"$out" || return 1
	echo "$out"
}

# b_bundle POLICY: a bundle dir whose config.json asks for POLICY ("" for
# none); prints its path.
b_bundle()
{
	local dir=$B_TMP/bundles/policy-${1:-none}

	if [ ! -d "$dir" ]; then
		mkdir -p "$dir" || return 1
		jq -n --arg p "$1" 'if $p == "" then {annotations: {}} else
			{annotations: {"sockopt-hook.io/policy": $p}} end' \
			>"$dir/config.json" || return 1
	fi
	echo "$dir"
}

# b_container NAME POLICY: cgroup $B_CG/NAME (parents made as needed) with
# one sleeping process, and its OCI state in $B_TMP/states/NAME.json.
b_container()
{
	local name=$1 cg=$B_CG/$1 bundle pid

	bundle=$(b_bundle "$2") || return 1
	mkdir -p "$cg" || return 1
	sleep 1000000 &
	pid=$!
	B_PIDS+=("$pid")
	echo "$pid" >"$cg/cgroup.procs" || return 1
	echo "$pid" >"$B_TMP/states/${name//\//-}.pid"
	jq -cn --arg id "sb$$-${name//\//-}" --argjson pid "$pid" \
		--arg b "$bundle" '{ociVersion: "1.0.2", id: $id,
		status: "creating", pid: $pid, bundle: $b}' \
		>"$B_TMP/states/${name//\//-}.json"
}

b_state()
{
	echo "$B_TMP/states/${1//\//-}.json"
}

# The hook releases a container only once its init is gone from its
# cgroup, as after a real stop. b_park NAME / b_unpark NAME print the
# sockbench command that moves container NAME's stand-in init out to
# $B_CG/park and back, for b_exec; b_parked NAME CMD... runs CMD parked.
b_park()
{
	echo "$SB" cgmove "$B_CG/park" "$(cat "$B_TMP/states/${1//\//-}.pid")"
}

b_unpark()
{
	echo "$SB" cgmove "$B_CG/$1" "$(cat "$B_TMP/states/${1//\//-}.pid")"
}

b_parked()
{
	local name=$1 rc

	shift
	$(b_park "$name") && "$@"
	rc=$?
	$(b_unpark "$name")
	return $rc
}

# b_attach NAME [CONFIG]: hook prestart for container NAME.
b_attach()
{
	local cfg=${2:-$B_CONFIG}

	B_ATTACHED+=("$1 $cfg")
	"$HOOK" --config "$cfg" prestart <"$(b_state "$1")" 2>>"$B_TMP/hook.err" ||
		{ b_fail "hook prestart of $1: $(tail -n 1 "$B_TMP/hook.err")"; return 1; }
}

# b_detach NAME [CONFIG]: hook poststop for container NAME.
b_detach()
{
	local cfg=${2:-$B_CONFIG} i

	b_parked "$1" "$HOOK" --config "$cfg" poststop <"$(b_state "$1")" \
		2>>"$B_TMP/hook.err"
	for i in "${!B_ATTACHED[@]}"; do
		[ "${B_ATTACHED[$i]}" = "$1 $cfg" ] && unset 'B_ATTACHED[i]'
	done
	return 0
}

# b_attached_progs CGROUP: how many sh_* programs are attached there.
b_attached_progs()
{
	bpftool -j cgroup show "$1" 2>/dev/null |
		jq '[.[]? | select(.name | startswith("sh_"))] | length'
}

b_attach_empty()
{
	B_EMPTY+=("$1")
	"$SB" attach-empty "$1" || { b_fail "attach-empty $1"; return 1; }
}

b_detach_empty()
{
	local i

	"$SB" detach-empty "$1"
	for i in "${!B_EMPTY[@]}"; do
		[ "${B_EMPTY[$i]}" = "$1" ] && unset 'B_EMPTY[i]'
	done
	return 0
}

# b_kill_all: kills the sleepers we started, by pid.
b_kill_all()
{
	local pid

	for pid in "${B_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	for pid in "${B_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	B_PIDS=()
}

b_cleanup()
{
	local entry id left hook_left

	trap - EXIT
	for id in "${B_RUNC_IDS[@]}"; do
		runc delete -f "$id" >/dev/null 2>&1
	done
	for entry in "${B_ATTACHED[@]}"; do
		b_detach "${entry% *}" "${entry#* }"
	done
	for entry in "${B_EMPTY[@]}"; do
		b_detach_empty "$entry"
	done
	b_kill_all
	if [ -n "$B_CG" ] && [ -d "$B_CG" ]; then
		find "$B_CG" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$B_CG" ] && b_fail "cgroups left under $B_CG"
	fi
	[ -n "$B_TMP" ] && rm -rf "$B_TMP"
	# The kernel frees a removed cgroup's programs asynchronously. Only
	# we load sb_empty_*; sh_* may also be another user's (no lock there).
	for _ in $(seq 1 50); do
		left=$(host_prog_count '^sb_empty_')
		hook_left=$(($(host_prog_count '^sh_') - B_HOOK_PROGS))
		[ "$left" = 0 ] && [ "$hook_left" -le 0 ] && break
		sleep 0.1
	done
	[ "${left:-0}" = 0 ] || b_fail "$left empty programs still loaded"
	[ "${hook_left:-0}" -le 0 ] ||
		b_log "bench: warning: $hook_left more sh_* programs loaded than at the start"
	[ "$B_BROKEN" = 0 ] || exit 1
}

# ---- results -----------------------------------------------------------

# b_add KEY VALUE: one trial's value.
b_add()
{
	echo "$2" >>"$B_OUT/raw/$1"
}

# b_stat KEY P: the P-th percentile (50: median) of KEY's values, nearest
# rank; empty when there are none.
b_stat()
{
	local f=$B_OUT/raw/$1

	[ -s "$f" ] || return 0
	sort -g "$f" | awk -v p="$2" '{ v[NR] = $1 }
		END { if (p == 50 && NR % 2 == 0) { print (v[NR / 2] + v[NR / 2 + 1]) / 2; exit }
		      r = int((p * NR + 99) / 100); if (r < 1) r = 1; print v[r] }'
}

# b_pair_ms A B: the median over rounds of A - B, where line i of both
# was measured in round i (drift between rounds cancels), in ms.
b_pair_ms()
{
	local a=$B_OUT/raw/$1 b=$B_OUT/raw/$2

	[ -s "$a" ] && [ -s "$b" ] || return 0
	paste -d ' ' "$a" "$b" | awk '{ printf "%d\n", $1 - $2 }' | sort -n |
		awk '{ v[NR] = $1 }
		END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "%.3f\n", m / 1e6 }'
}

b_count()
{
	[ -f "$B_OUT/raw/$1" ] && wc -l <"$B_OUT/raw/$1" || echo 0
}

# b_row SECTION LABEL VALUE UNIT [TARGET]: one line of the table. TARGET is
# "<= X" (numbers), "== WORD" or "-"; smoke runs give no verdicts. With
# B_DETAIL=1 the line is kept in results.json but the table shows it only
# when BENCH_VERBOSE=1.
B_DETAIL=0
b_row()
{
	local verdict=- target=${5:--}

	if [ "$B_SMOKE" = 0 ] && [ "$target" != - ] && [ -n "$3" ]; then
		case $target in
		"== "*) [ "$3" = "${target#== }" ] && verdict=met || verdict=MISSED ;;
		*) verdict=$(awk -v v="$3" -v t="${target#<= }" \
			'BEGIN { print (v <= t) ? "met" : "MISSED" }') ;;
		esac
	fi
	jq -cn --arg s "$1" --arg l "$2" --arg v "$3" --arg u "$4" \
		--arg t "$target" --arg verdict "$verdict" \
		--argjson detail "$B_DETAIL" \
		'{section: $s, label: $l, value: (if $v == "" then null
		  else (try ($v | tonumber) catch $v) end), unit: $u,
		  target: $t, verdict: $verdict, detail: ($detail == 1)}' \
		>>"$B_OUT/rows.jsonl"
}

b_detail()
{
	B_DETAIL=1 b_row "$@"
}

# b_row_median SECTION LABEL KEY UNIT: the median of KEY's trials (a
# detail line: the ratio lines show the medians they compare).
b_row_median()
{
	b_detail "$1" "$2" "$(b_stat "$3" 50)" "$4"
}

# b_ratio NUM DEN: NUM/DEN to 3 decimals.
b_ratio()
{
	[ -n "$1" ] && [ -n "$2" ] || return 0
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f\n", a / b }'
}

# b_pair_ratio A B: the median over trials of A/B, where line i of both
# was measured in trial i (drift between trials cancels), 3 decimals.
b_pair_ratio()
{
	local a=$B_OUT/raw/$1 b=$B_OUT/raw/$2

	[ -s "$a" ] && [ -s "$b" ] || return 0
	paste -d ' ' "$a" "$b" | awk '$2 > 0 { printf "%.6f\n", $1 / $2 }' |
		sort -g | awk '{ v[NR] = $1 }
		END { if (!NR) exit
		      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "%.3f\n", m }'
}

# b_row_ratio SECTION LABEL NUM-KEY DEN-KEY [TARGET]: the median of the
# per-trial ratios; the label shows both variants' medians (in ns).
b_row_ratio()
{
	local num den

	num=$(b_stat "$3" 50)
	den=$(b_stat "$4" 50)
	b_row "$1" "$(printf '%-28s %6.0f / %-6.0f' "$2" "${num:-0}" "${den:-0}")" \
		"$(b_pair_ratio "$3" "$4")" ratio "${5:--}"
}
