#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/runc_gap.sh: where a `runc run` with our prestart+poststop hooks
# spends the time it takes beyond the same run with /bin/true hooks
# (`make bench-gap`).
#
# Every round runs `runc run` of a container that exits at once, once per
# variant, in an order shuffled each round:
#   none    no hooks
#   true    /bin/true as prestart and poststop
#   ours    our hook, policy "restricted" of examples/config.json, a state
#           dir where no other container uses the policy (a fresh load)
#   shared  our hook, a state dir where another container (a sleeping
#           process in a cgroup of ours) has the policy attached
#   noop    our hook, no annotation: nothing to attach
#   pre     our hook, the policy preloaded (its pins in our bpffs), no
#           other container of it
#   gen     our hook, only the generic programs pinned: a policy added
#           to the config after the last preload
#   wtrue   /bin/true through a wrapper (sh) that appends stderr to a file
#   wours   our hook through the same wrapper, OCI_SOCKOPT_HOOK_TIMING=1:
#           its step timings (runc throws the hook's stderr away)
#   solo    no runc: the wrapped hook's prestart and poststop run from
#           this shell for a sleeping process in a cgroup of ours, as
#           `make bench` times "the hook alone" (same state dir as ours)
# A tracefs instance of our own records, with the kernel's clock, what
# each run does: markers around each run, fork/exec/exit of every process,
# runc reaping its hooks, the cgroups made, populated and removed, rmdir
# calls and their errors, socket()/setsockopt() calls, the kernel work
# items that free a removed cgroup's BPF programs, maps and cgroups, and
# every switch of a hook process off and onto a CPU. bench/runc_gap.py
# (with runc_gap_trace.py) cuts each run's wall time at those events into
# consecutive segments, which add up to the run, pairs ours and true round
# by round and prints the accounting table (also in
# $BUILD/bench/gap/table.txt).
#
# Static keys: empty programs stay attached to a scratch cgroup of ours
# during the rounds, as in `make bench`, so that no run flips the kernel's
# cgroup-BPF static keys (bench/run.sh's "cold" hook line times the flip
# in prestart; the flip back happens in the kernel's worker that releases
# the removed cgroup's programs, which the "cg2 freed" column times).
#
# Then a few runs of true and ours under `strace -f -tt -T` and under
# `perf trace -S` (their times are inflated; they show what is called),
# kept in $BUILD/bench/gap/raw with the trace.
#
# Environment: BUILD, HOOK, GAP_ROUNDS (40), GAP_TRACE_ROUNDS (3),
# GAP_ORDER (shuffle, or rotate as bench/run.sh does), GAP_SEED (1),
# GAP_PAUSE (seconds between runs, 0), GAP_VARIANTS (a subset, in order).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# Our own output directory: b_init empties $B_OUT/raw.
B_OUT=$BUILD/bench/gap
ROUNDS=${GAP_ROUNDS:-40}
TRACE_ROUNDS=${GAP_TRACE_ROUNDS:-3}
read -ra VARIANTS <<<"${GAP_VARIANTS:-none true ours shared noop pre gen wtrue wours solo}"
ORDER=${GAP_ORDER:-shuffle}
SEED=${GAP_SEED:-1}
PAUSE=${GAP_PAUSE:-0}
G_TRACE=
G_IDS=()
G_TRACEFS=/sys/kernel/tracing
G_SOLO_ON=0

g_id()
{
	echo "sb$$-gap-$1"
}

# ---- bundles -------------------------------------------------------------

# g_hook_json STATE-DIR [WRAP-ARGS...]: hooks calling our hook, with
# the pin dir G_PINS (default: one in our bpffs with nothing pinned).
g_hook_json()
{
	local state=$1 env

	shift
	env=$(jq -cn --arg s "$state" --arg t "${G_TIMING:-0}" \
		--arg p "${G_PINS:-$OCI_SOCKOPT_HOOK_PIN_DIR}" \
		'["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "OCI_SOCKOPT_HOOK_STATE_DIR=" + $s,
		  "OCI_SOCKOPT_HOOK_PIN_DIR=" + $p, "OCI_SOCKOPT_HOOK_TIMING=" + $t]')
	jq -cn --arg h "$HOOK" --arg c "$B_CONFIG" --argjson env "$env" \
		--args '$ARGS.positional as $w |
		def hook($stage): {path: ($w[0] // $h),
			args: ($w + [$h, "--config", $c, $stage]), env: $env};
		{prestart: [hook("prestart")], poststop: [hook("poststop")]}' "$@"
}

# g_true_json [WRAP-ARGS...]: hooks calling /bin/true.
g_true_json()
{
	jq -cn --args '$ARGS.positional as $w |
		def hook: {path: ($w[0] // "/bin/true"), args: ($w + ["/bin/true"])};
		{prestart: [hook], poststop: [hook]}' "$@"
}

# g_bundle VARIANT: the bundle of one variant, as bench/run.sh makes them:
# busybox's true in a read-only rootfs, no terminal.
g_bundle()
{
	local v=$1 dir=$B_TMP/runc-$1 hooks=null ann='{}'
	local wrap=("$B_TMP/wrap.sh" "$B_OUT/raw/stderr.$v")
	local pol='{"sockopt-hook.io/policy": "restricted"}'

	mkdir -p "$dir" && (cd "$dir" && runc spec) || return 1
	case $v in
	true) hooks=$(g_true_json) ;;
	wtrue) hooks=$(g_true_json "${wrap[@]}") ;;
	ours) hooks=$(g_hook_json "$B_TMP/state-fresh") ann=$pol ;;
	shared) hooks=$(g_hook_json "$B_TMP/state") ann=$pol ;;
	noop) hooks=$(G_PINS=$B_PINS g_hook_json "$B_TMP/state") ;;
	pre) hooks=$(G_PINS=$B_PINS g_hook_json "$B_TMP/state/pre") ann=$pol ;;
	gen) hooks=$(G_PINS=$B_GEN_PINS g_hook_json "$B_TMP/state/gen") ann=$pol ;;
	wours) hooks=$(G_TIMING=1 g_hook_json "$B_TMP/state-fresh" "${wrap[@]}") ann=$pol ;;
	esac
	b_runtime_spec "$dir" "$hooks" "$ann"
}

g_setup()
{
	local v

	mkdir -p "$B_TMP/rootfs/bin" "$B_TMP/rootfs/proc" "$B_TMP/rootfs/dev" \
		"$B_TMP/state-fresh" &&
		cp /bin/busybox "$B_TMP/rootfs/bin/" &&
		ln -s busybox "$B_TMP/rootfs/bin/true" || return 1
	# The wrapper: the same sh around /bin/true and around our hook.
	# shellcheck disable=SC2016 # the wrapper's own variables
	printf '#!/bin/sh\nf=$1\nshift\nexec "$@" 2>>"$f"\n' >"$B_TMP/wrap.sh" &&
		chmod 755 "$B_TMP/wrap.sh" || return 1
	# The pins of pre and noop, and gen's pin dir with only the generic
	# programs; pre and gen have state dirs of their own (on the tmpfs).
	b_preload && mkdir -m 0700 "$B_TMP/state/pre" "$B_TMP/state/gen" &&
		b_preload_generic || return 1
	for v in "${VARIANTS[@]}"; do
		[ "$v" = solo ] && continue
		g_bundle "$v" || return 1
		B_RUNC_IDS+=("$(g_id "$v")")
		G_IDS+=("$(g_id "$v")")
	done
	# The container that shares the policy in the "shared" state dir.
	b_container gap-other restricted && b_attach gap-other || return 1
	b_container gap-solo restricted || return 1
	mkdir -p "$B_CG/gap-keys" && b_attach_empty "$B_CG/gap-keys"
}

# ---- tracing -------------------------------------------------------------

# g_trace_on: a tracefs instance of our own (removed in g_cleanup).
g_trace_on()
{
	local e t fns=() f addr filter=
	local c=oci-sockopt-hoo w=wrap.sh # comm: 15 characters

	[ -d "$G_TRACEFS/instances" ] || { b_log "gap: no tracefs at $G_TRACEFS"; return 1; }
	t=$G_TRACEFS/instances/sockopt-gap-$$
	mkdir "$t" || return 1
	G_TRACE=$t
	echo 8192 >"$t/buffer_size_kb" || return 1
	# Go's rmdir is unlinkat(AT_REMOVEDIR); only failed ones end the story.
	echo 'flag == 0x200' >"$t/events/syscalls/sys_enter_unlinkat/filter" &&
		echo 'ret < 0' >"$t/events/syscalls/sys_exit_unlinkat/filter" &&
		echo 'ret > 0' >"$t/events/syscalls/sys_exit_wait4/filter" || return 1
	# When a hook process is off a CPU, and why. One line: the kernel
	# keeps only the last line of a filter.
	for f in "$c" true "$w"; do
		filter+="${filter:+ || }prev_comm == \"$f\" || next_comm == \"$f\""
	done
	echo "$filter" >"$t/events/sched/sched_switch/filter" || return 1
	filter=
	for e in sched/sched_process_fork sched/sched_process_exec \
		sched/sched_process_exit sched/sched_switch cgroup/cgroup_mkdir \
		cgroup/cgroup_rmdir cgroup/cgroup_release cgroup/cgroup_attach_task \
		cgroup/cgroup_notify_populated syscalls/sys_enter_unlinkat \
		syscalls/sys_exit_unlinkat syscalls/sys_exit_wait4 \
		syscalls/sys_enter_socket syscalls/sys_enter_setsockopt; do
		echo 1 >"$t/events/$e/enable" || { b_log "gap: cannot trace $e"; return 1; }
	done
	# The kernel's deferred work that frees what a removed cgroup held.
	fns=(cgroup_bpf_release bpf_prog_free_deferred bpf_map_free_deferred
		css_free_rwork_fn css_release_work_fn)
	for f in "${fns[@]}"; do
		addr=$(awk -v f="$f" '$3 == f { print $1; exit }' /proc/kallsyms)
		[ -n "$addr" ] && [ "$addr" != 0000000000000000 ] &&
			filter+="${filter:+ || }function == 0x$addr"
	done
	if [ -n "$filter" ]; then
		for e in workqueue_execute_start workqueue_execute_end; do
			echo "$filter" >"$t/events/workqueue/$e/filter" &&
				echo 1 >"$t/events/workqueue/$e/enable" || return 1
		done
	fi
	echo 1 >"$t/tracing_on"
}

# g_trace_flush: appends what the instance holds to raw/trace and empties
# it; a lost event would cut a run wrongly: fail.
g_trace_flush()
{
	local lost

	cat "$G_TRACE/trace" >>"$B_OUT/raw/trace" || return 1
	lost=$(cat "$G_TRACE"/per_cpu/cpu*/stats | awk '/^(overrun|dropped events):/ { n += $NF } END { print n + 0 }')
	[ "$lost" = 0 ] || { b_fail "tracefs lost $lost events (buffer too small)"; return 1; }
	: >"$G_TRACE/trace"
}

g_mark()
{
	echo "gap $*" >"$G_TRACE/trace_marker"
}

# ---- runs ----------------------------------------------------------------

# g_solo_hook STAGE: the wrapped hook for container gap-solo, as runc
# would run it (timings on, the fresh state dir).
g_solo_hook()
{
	(
		export OCI_SOCKOPT_HOOK_TIMING=1 OCI_SOCKOPT_HOOK_STATE_DIR=$B_TMP/state-fresh
		exec "$B_TMP/wrap.sh" "$B_OUT/raw/stderr.solo" "$HOOK" \
			--config "$B_CONFIG" "$1" <"$(b_state gap-solo)"
	)
}

# g_solo ROUND: prestart, then poststop with the init parked outside its
# cgroup as after a real stop (both between one pair of markers).
g_solo()
{
	local r=$1

	g_mark begin solo "$r"
	G_SOLO_ON=1
	g_solo_hook prestart || { b_fail "solo prestart: $(tail -n 1 "$B_OUT/raw/stderr.solo")"; return 1; }
	b_parked gap-solo g_solo_hook poststop
	G_SOLO_ON=0
	g_mark end solo "$r"
}

# g_run VARIANT ROUND: one marked `runc run`.
g_run()
{
	local v=$1 r=$2 rc

	[ "$v" = solo ] && { g_solo "$r"; return; }
	g_mark begin "$v" "$r"
	runc run --bundle "$B_TMP/runc-$v" "$(g_id "$v")" </dev/null \
		>/dev/null 2>>"$B_OUT/raw/runc.$v.err"
	rc=$?
	g_mark end "$v" "$r"
	[ "$rc" = 0 ] || { b_fail "runc run ($v, round $r) exited $rc: $(tail -n 1 "$B_OUT/raw/runc.$v.err")"; return 1; }
}

# g_order ROUND: the variants in the order of this round. Rotation keeps
# each variant's predecessor (A B C, B C A: B follows A but once a round),
# and a run's first cgroup attach depends on how long ago the previous
# run's was (see g_rounds); shuffling gives every variant every predecessor.
g_order()
{
	local order=("${VARIANTS[@]}") n=${#VARIANTS[@]} i j tmp

	if [ "$ORDER" = rotate ]; then
		for ((i = 0; i < n; i++)); do
			echo "${VARIANTS[$((($1 + i) % n))]}"
		done
		return
	fi
	for ((i = n - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		tmp=${order[i]} order[i]=${order[j]} order[j]=$tmp
	done
	printf '%s\n' "${order[@]}"
}

# Each round ends with the trace flush, a pause of a few ms that no run
# pays in its own round's sequence: it is counted as "round start".
g_rounds()
{
	local r v

	RANDOM=$SEED
	for ((r = 0; r < ROUNDS; r++)); do
		for v in $(g_order "$r"); do
			g_run "$v" "$r" || return 1
			[ "$PAUSE" = 0 ] || sleep "$PAUSE"
		done
		g_trace_flush || return 1
	done
}

# g_syscall_traces: strace and perf trace of a few runs of true and ours.
g_syscall_traces()
{
	local v i

	for ((i = 0; i < TRACE_ROUNDS; i++)); do
		for v in true ours; do
			[ -d "$B_TMP/runc-$v" ] || continue
			if command -v strace >/dev/null; then
				strace -f -tt -T -o "$B_OUT/raw/strace.$v.$i" \
					runc run --bundle "$B_TMP/runc-$v" "$(g_id "$v")" \
					</dev/null >/dev/null 2>>"$B_OUT/raw/runc.$v.err" ||
					{ b_fail "runc run under strace ($v)"; return 1; }
			fi
			if command -v perf >/dev/null; then
				perf trace -S -o "$B_OUT/raw/perftrace.$v.$i" -- \
					runc run --bundle "$B_TMP/runc-$v" "$(g_id "$v")" \
					</dev/null >/dev/null 2>>"$B_OUT/raw/runc.$v.err" ||
					b_log "gap: perf trace failed ($v): no perf trace output"
			fi
		done
	done
}

# ---- cleanup -------------------------------------------------------------

# g_cleanup: the tracefs instance, the cgroups runc may have left under
# our containers' names in any hierarchy, then the library's cleanup
# (containers, the other container, the empty programs, cgroups, temp dir).
g_cleanup()
{
	local id d

	[ "$G_SOLO_ON" = 1 ] && b_parked gap-solo g_solo_hook poststop
	if [ -n "$G_TRACE" ] && [ -d "$G_TRACE" ]; then
		echo 0 >"$G_TRACE/tracing_on"
		rmdir "$G_TRACE" || b_fail "cannot remove tracefs instance $G_TRACE"
	fi
	for id in "${G_IDS[@]}"; do
		runc delete -f "$id" >/dev/null 2>&1
		while read -r d; do
			rmdir "$d" || b_fail "cgroup $d left"
		done < <(find /sys/fs/cgroup -maxdepth 4 -type d -name "$id" 2>/dev/null)
	done
	b_cleanup
}

main()
{
	command -v busybox >/dev/null || [ -x /bin/busybox ] || { b_log "gap: no busybox"; exit 1; }
	b_init || exit $?
	trap g_cleanup EXIT
	b_log "gap: $ROUNDS rounds of runc run: ${VARIANTS[*]}"
	g_setup || exit 1
	g_trace_on || exit 1
	g_rounds || exit 1
	g_syscall_traces || exit 1
	bpftool -j cgroup tree >"$B_OUT/raw/cgroup-tree.json" 2>/dev/null
	"$B_PYTHON" "$B_TOP/bench/runc_gap.py" --raw "$B_OUT/raw" \
		--variants "${VARIANTS[*]}" --hook "$HOOK" --prefix "sb$$-gap-" \
		--order "$ORDER" | tee "$B_OUT/table.txt" ||
		b_fail "runc_gap.py"
}

main "$@"
