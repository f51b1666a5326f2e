# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# What a container start costs, for bench/run.sh (which sources this file
# after lib.sh and its own helpers b_exec and b_fail):
#   1   the hook alone, fed a saved state, in every host state that
#       matters (cold, fallback, shared, preloaded, nothing to attach);
#   1a  runc run and crun run of a container that exits at once;
#   1b  where the hook's time goes (its own step timings, strace, perf);
#   8   scale: N policed containers;
#   9   kernel memory per container at the largest N.
# The preloaded variants use the hook's `preload` into our own bpffs
# ($B_PINS, lib.sh); every other hook run has an empty pin dir.

# ---- 1: the hook alone -------------------------------------------------

# The commands of one sockbench exec, built step by step: A_KEYS names
# what each command's time is stored as, A_CMDS holds the commands.
A_KEYS=()
A_CMDS=()

# a_step KEY WORD...: the next command of the current group.
a_step()
{
	A_KEYS+=("$1")
	shift
	A_CMDS+=("$@" ::)
}

# a_group: the next step starts a new group (sockbench exec runs the
# groups in a new random order each round; within a group the order
# stays).
a_group()
{
	A_CMDS[-1]=:::
}

# a_exec PREFIX ROUNDS STDIN: runs what a_step collected (b_exec).
a_exec()
{
	unset 'A_CMDS[-1]'
	b_exec "$1" "$2" "$3" "${A_KEYS[@]}" -- "${A_CMDS[@]}"
	local r=$?
	A_KEYS=()
	A_CMDS=()
	return $r
}

# alone_group VARIANT PROBE OTHER HOOK-WORDS...: the steps of one variant:
# the static keys on (empty programs on a scratch cgroup, as any policed
# container would keep them) unless VARIANT is cold*; container OTHER
# attached with the same policy unless OTHER is "-"; /bin/true; then
# prestart and poststop of container PROBE, its init parked out of its
# cgroup for poststop as after a real stop. HOOK-WORDS run the hook
# (NAME=VALUE words first). Only /bin/true, prestart and poststop are
# reported.
alone_group()
{
	local v=$1 probe=$2 other=$3 scratch=$B_CG/hook-keys pk up opk oup

	shift 3
	read -ra pk <<<"$(b_park "$probe")"
	read -ra up <<<"$(b_unpark "$probe")"
	case $v in cold*) ;; *) a_step "$v.keys_on" "$SB" attach-empty "$scratch" ;; esac
	if [ "$other" != - ]; then
		read -ra opk <<<"$(b_park "$other")"
		read -ra oup <<<"$(b_unpark "$other")"
		a_step "$v.other_on" "<$(b_state "$other")" "$@" prestart
	fi
	a_step "$v.true" /bin/true
	a_step "$v.pre" "<$(b_state "$probe")" "$@" prestart
	a_step "$v.pk" "${pk[@]}"
	a_step "$v.post" "<$(b_state "$probe")" "$@" poststop
	a_step "$v.up" "${up[@]}"
	if [ "$other" != - ]; then
		a_step "$v.opk" "${opk[@]}"
		a_step "$v.other_off" "<$(b_state "$other")" "$@" poststop
		a_step "$v.oup" "${oup[@]}"
	fi
	case $v in cold*) ;; *) a_step "$v.keys_off" "$SB" detach-empty "$scratch" ;; esac
	a_group
}

# ---- 1a: through the runtimes ------------------------------------------

# runtime_bundle VARIANT: a bundle whose container runs /bin/true and
# exits: none (no hooks), true (/bin/true prestart and poststop), read
# (bench/readstate.c, which reads the state and exits: crun 1.8 fails a
# hook that exits before crun has written the state, EPIPE, as /bin/true
# may), ours
# (our prestart and poststop, the preloaded programs), noop (ours, and
# pins, but no annotation: nothing to attach), fresh (ours with no pins)
# or generic (ours with the generic programs pinned, not the policy's: a
# policy not preloaded). The hooks get their environment from the hook
# entries' env.
runtime_bundle()
{
	local v=$1 dir=$B_TMP/runtime-$1 hooks=null ann='{}' pins env

	mkdir -p "$dir" && (cd "$dir" && runc spec) || return 1
	case $v in
	true | read)
		hooks=$(jq -cn --arg p "$([ "$v" = true ] && echo /bin/true || echo "$READSTATE")" \
			'{prestart: [{path: $p}], poststop: [{path: $p}]}')
		;;
	ours | noop | fresh | generic)
		pins=$B_PINS
		[ "$v" = fresh ] && pins=$OCI_SOCKOPT_HOOK_PIN_DIR
		[ "$v" = generic ] && pins=$B_GEN_PINS
		env=$(jq -cn --arg s "$OCI_SOCKOPT_HOOK_STATE_DIR" --arg p "$pins" \
			'["PATH=/usr/sbin:/usr/bin:/sbin:/bin",
			  "OCI_SOCKOPT_HOOK_STATE_DIR=" + $s,
			  "OCI_SOCKOPT_HOOK_PIN_DIR=" + $p]')
		[ "$v" = noop ] || ann='{"sockopt-hook.io/policy": "restricted"}'
		hooks=$(jq -n --arg h "$HOOK" --arg c "$B_CONFIG" --argjson env "$env" '
			{prestart: [{path: $h, args: [$h, "--config", $c, "prestart"], env: $env}],
			 poststop: [{path: $h, args: [$h, "--config", $c, "poststop"], env: $env}]}')
		;;
	esac
	b_runtime_spec "$dir" "$hooks" "$ann" && echo "$dir"
}

# quiet_keys: the static keys' states with nothing of ours attached
# anywhere (raw/rt.keys.quiet): what the quiet-host rounds start from.
quiet_keys()
{
	local env=("OCI_SOCKOPT_HOOK_PIN_DIR=$B_BPFFS/default"
		"OCI_SOCKOPT_HOOK_KEYS_CGROUP=$OCI_SOCKOPT_HOOK_KEYS_CGROUP-default")

	# keep_keys when the config does not say: a preload of the example
	# config (pins and keys cgroup of its own), then --unpin.
	if ! env "${env[@]}" "$HOOK" --config "$B_CONFIG" preload --json \
		2>>"$B_TMP/hook.err" | jq -r '
		if (.static_keys.kept | length) > 0 then "on" else "off" end' \
		>"$B_OUT/raw/keys.default" ||
		! env "${env[@]}" "$HOOK" preload --unpin >/dev/null \
			2>>"$B_TMP/hook.err"; then
		b_fail "preload of $B_CONFIG: $(tail -n 1 "$B_TMP/hook.err")"
		return 1
	fi
	mkdir -p "$B_CG/quiet-scratch" || return 1
	"$SB" keys "$B_CG/quiet-scratch" >"$B_OUT/raw/rt.keys.quiet" \
		2>>"$B_TMP/sb.err" ||
		{ b_fail "sockbench keys: $(tail -n 1 "$B_TMP/sb.err")"; return 1; }
	# Every key off: their text now is what a quiet round waits for.
	B_QUIET=0
	if [ "$(cat "$B_OUT/raw/rt.keys.quiet")" = \
		"sock_create=off setsockopt=off getsockopt=off" ]; then
		"$SB" keys-save "$B_TMP/keys.off" 2>>"$B_TMP/sb.err" ||
			{ b_fail "sockbench keys-save"; return 1; }
		B_QUIET=1
	else
		b_log "bench: a key is on with nothing of ours attached: no quiet-host rounds"
	fi
}

# rt_warm NAME: two untimed moves of a sleeper between cgroups, right
# before a timed runtime run. runc's first cgroup attach of a run waits
# for an RCU grace period unless a task moved between cgroups within
# about one before (percpu_down_write of cgroup_threadgroup_rwsem,
# rcu_sync_enter): 0.1 ms or 4-30 ms depending on what the round did
# just before, not on the hooks. With the moves every run finds it
# passed alike.
rt_warm()
{
	local pid

	pid=$(cat "$B_TMP/states/rt-warm.pid") || return 1
	a_step "$1_w1" "$SB" cgmove "$B_CG/rt-warm-a" "$pid"
	a_step "$1_w2" "$SB" cgmove "$B_CG/rt-warm-b" "$pid"
}

# hook_runtimes: runc run (no hooks, /bin/true hooks, readstate hooks,
# ours preloaded, ours with nothing to attach, ours fresh, ours on the
# generic programs, ours fresh while container hook-other shares the
# policy) and crun run (the same but /bin/true, fresh and the last), one
# group each; and runc run of /bin/true, preloaded, nothing to attach and
# generic without the cgroup moves before it.
hook_runtimes()
{
	local v dir fresh rt id h=("$HOOK" --config "$B_CONFIG") opk oup other

	mkdir -p "$B_TMP/rootfs/bin" "$B_TMP/rootfs/proc" "$B_TMP/rootfs/dev" &&
		cp /bin/busybox "$B_TMP/rootfs/bin/" &&
		ln -s busybox "$B_TMP/rootfs/bin/true" || return 1
	b_container rt-warm "" && mkdir -p "$B_CG/rt-warm-a" "$B_CG/rt-warm-b" ||
		return 1
	for v in none true read ours noop fresh generic; do
		dir=$(runtime_bundle "$v") || return 1
		[ "$v" = fresh ] && fresh=$dir
		for rt in runc crun; do
			[ "$rt" = crun ] && [ "$B_CRUN" = 0 ] && continue
			[ "$rt" = crun ] && case $v in true | fresh) continue ;; esac
			id=sb$$-$rt-$v
			if [ "$rt" = runc ]; then B_RUNC_IDS+=("$id"); else B_CRUN_IDS+=("$id"); fi
			rt_warm "${rt}_$v" || return 1
			a_step "${rt}_$v" "$rt" run --bundle "$dir" "$id"
			a_group
		done
		# As a runtime runs it: no cgroup moves first, so runc's first
		# cgroup attach may wait for an RCU grace period (the same for
		# every variant: what differs is what the hooks leave behind).
		case $v in
		true | ours | noop | generic)
			B_RUNC_IDS+=("sb$$-runc-$v-nw")
			a_step "runc_${v}_nw" runc run --bundle "$dir" "sb$$-runc-$v-nw"
			a_group
			;;
		esac
	done
	# The quiet host: no attachment of our types anywhere, the static
	# keys off (as on a node with no policed container, without
	# keep_keys): the container's prestart turns them on, and the kernel
	# turns them off again when it frees the container's cgroup, in a
	# worker some 50 ms after runc's rmdir. The empty programs that keep
	# them on for every other group go for this one, and the round waits
	# until the keys' text is off (an earlier round's container may not
	# be freed yet).
	if [ "$B_QUIET" = 1 ]; then
		B_RUNC_IDS+=("sb$$-runc-quiet")
		a_step keys_off "$SB" detach-empty "$B_CG/hook-keys"
		a_step keys_wait "$SB" keys-wait-off "$B_TMP/keys.off"
		rt_warm runc_quiet || return 1
		a_step runc_quiet runc run --bundle "$B_TMP/runtime-ours" \
			"sb$$-runc-quiet"
		a_step keys_on "$SB" attach-empty "$B_CG/hook-keys"
		a_group
	fi
	other=$(b_state hook-other)
	read -ra opk <<<"$(b_park hook-other)"
	read -ra oup <<<"$(b_unpark hook-other)"
	B_RUNC_IDS+=("sb$$-runc-shared")
	a_step other_on "<$other" "${h[@]}" prestart
	rt_warm runc_shared || return 1
	a_step runc_shared runc run --bundle "$fresh" "sb$$-runc-shared"
	a_step opk "${opk[@]}"
	a_step other_off "<$other" "${h[@]}" poststop
	a_step oup "${oup[@]}"
	a_group
	a_exec rt "$RUNC_ROUNDS" /dev/null
}

# ---- 1b: where the time goes -------------------------------------------

# hook_steps: the hook's own step timings (OCI_SOCKOPT_HOOK_TIMING=1, one
# line on stderr per run) of prestart and poststop in each variant, into
# raw/steps.VARIANT for report.py.
hook_steps()
{
	local v pins st probe pk up t=OCI_SOCKOPT_HOOK_TIMING=1

	for v in fallback preloaded noop generic; do
		pins=$OCI_SOCKOPT_HOOK_PIN_DIR probe=hook
		[ "$v" = fallback ] || pins=$B_PINS
		[ "$v" = generic ] && pins=$B_GEN_PINS
		[ "$v" = noop ] && probe=hook-noop
		st=$(b_state "$probe")
		read -ra pk <<<"$(b_park "$probe")"
		read -ra up <<<"$(b_unpark "$probe")"
		"$SB" exec -r "$ROUNDS" -i "$st" -e "$B_OUT/raw/steps.$v" -- \
			"$t" "OCI_SOCKOPT_HOOK_PIN_DIR=$pins" "$HOOK" \
			--config "$B_CONFIG" prestart :: "${pk[@]}" :: \
			"$t" "OCI_SOCKOPT_HOOK_PIN_DIR=$pins" "$HOOK" \
			--config "$B_CONFIG" poststop :: "${up[@]}" >/dev/null ||
			{ b_fail "hook with OCI_SOCKOPT_HOOK_TIMING=1 ($v)"; return 1; }
	done
}

# hook_strace VARIANT PIN-DIR: the system calls of three prestarts
# (strace makes every call far slower, so its times are not shown), for
# report.py to count.
hook_strace()
{
	local v=$1 st i

	command -v strace >/dev/null || { b_log "bench: no strace: no syscall breakdown"; return 0; }
	st=$(b_state hook)
	for ((i = 0; i < 3; i++)); do
		# shellcheck disable=SC2015 # b_fail when either fails
		OCI_SOCKOPT_HOOK_PIN_DIR=$2 strace -f -o "$B_OUT/raw/strace.$v.$i" \
			"$HOOK" --config "$B_CONFIG" prestart <"$st" 2>>"$B_TMP/hook.err" &&
			b_parked hook "$HOOK" --config "$B_CONFIG" poststop <"$st" \
				2>>"$B_TMP/hook.err" ||
			{ b_fail "hook under strace"; return 1; }
	done
}

# hook_perf: where a fallback prestart+poststop's CPU time goes, if perf
# works here: perf's reports by DSO and by symbol, for report.py.
hook_perf()
{
	local st

	command -v perf >/dev/null && [ "$B_SMOKE" = 0 ] || return 0
	st=$(b_state hook)
	# shellcheck disable=SC2016 # expanded by the inner bash
	perf record -q -F 10000 -g -o "$B_TMP/perf.data" -- bash -c '
		for i in $(seq 1 "$3"); do
			"$0" --config "$1" prestart <"$2" && $4 &&
				"$0" --config "$1" poststop <"$2" && $5
		done' "$HOOK" "$B_CONFIG" "$st" "$ROUNDS" "$(b_park hook)" \
		"$(b_unpark hook)" >/dev/null 2>&1 || return 0
	# perf 6.1's --comm filter drops DSOs: report.py picks the hook's lines.
	perf report -i "$B_TMP/perf.data" --no-children --sort comm,dso \
		--stdio -g none >"$B_OUT/raw/perf.dso" 2>/dev/null
	perf report -i "$B_TMP/perf.data" --children --sort comm,sym --stdio \
		-g none >"$B_OUT/raw/perf.sym" 2>/dev/null
	# The start path as it runs now, preloaded, beside /bin/true run as
	# often: every sample's stack (comm, symbol, DSO), for report_start.py
	# to put each in one step (start-up, exec, page faults, each system
	# call, our code) and give the CPU per run of each.
	perf_stacks preloaded "OCI_SOCKOPT_HOOK_PIN_DIR=$B_PINS" "$HOOK" \
		--config "$B_CONFIG" &&
		perf_stacks true /bin/true
	return 0
}

# Samples a second of CPU: each sample stands for 0.1 ms.
PERF_HZ=10000

# perf_stacks NAME [VAR=VALUE...] CMD...: perf record -g of HOOK_ROUNDS rounds
# of CMD prestart and CMD poststop (the probe parked between them, as after
# a stop), into raw/perf.NAME.stacks; /bin/true ignores the words.
perf_stacks()
{
	local name=$1 st

	shift
	st=$(b_state hook)
	# shellcheck disable=SC2016 # expanded by the inner bash
	perf record -q -F "$PERF_HZ" -g -o "$B_TMP/perf.$name.data" -- bash -c '
		n=$1 st=$2 pk=$3 up=$4
		shift 4
		for i in $(seq 1 "$n"); do
			env "$@" prestart <"$st" && $pk &&
				env "$@" poststop <"$st" && $up || exit 1
		done' - "$HOOK_ROUNDS" "$st" "$(b_park hook)" "$(b_unpark hook)" "$@" \
		>/dev/null 2>&1 || return 0
	perf script -i "$B_TMP/perf.$name.data" -F comm,ip,sym,dso 2>/dev/null \
		>"$B_OUT/raw/perf.$name.stacks"
	echo "$PERF_HZ $((HOOK_ROUNDS * 2))" >"$B_OUT/raw/perf.$name.runs"
}

# hook_parts: the same state timed through --version, validate, a
# prestart whose policy is empty (everything but BPF), a fallback and a
# preloaded prestart; the static keys on.
hook_parts()
{
	local h=("$HOOK" --config "$B_CONFIG") cfg_empty pk up

	cfg_empty=$(b_config empty '.policies.restricted = {}') || return 1
	read -ra pk <<<"$(b_park hook)"
	read -ra up <<<"$(b_unpark hook)"
	a_step true /bin/true
	a_group
	a_step version "$HOOK" --version
	a_group
	a_step validate "${h[@]}" validate "$B_CONFIG"
	a_group
	a_step noop "$HOOK" --config "$cfg_empty" prestart
	a_group
	a_step pre "${h[@]}" prestart
	a_step pk "${pk[@]}"
	a_step post "${h[@]}" poststop
	a_step up "${up[@]}"
	a_group
	a_step plpre "OCI_SOCKOPT_HOOK_PIN_DIR=$B_PINS" "${h[@]}" prestart
	a_step plpk "${pk[@]}"
	a_step plpost "OCI_SOCKOPT_HOOK_PIN_DIR=$B_PINS" "${h[@]}" poststop
	a_step plup "${up[@]}"
	a_group
	a_exec parts "$HOOK_ROUNDS" "$(b_state hook)"
}

# bench_hook: the hook alone in every host state, interleaved round by
# round (the states in a new random order each round); then runc and
# crun; then the breakdown.
#   cold:      nothing else attached anywhere: prestart turns the three
#              static keys on and poststop turns them off (text patching);
#   coldpl:    the same with the preloaded programs: what turning the
#              keys on and off costs the hook, and nothing else;
#   fallback:  the keys on (empty programs elsewhere, as on any host with
#              a policed container), no pins and nothing shares our
#              policy's programs: the hook loads and verifies them;
#   shared:    no pins, another container with the same policy attached:
#              the hook reuses its programs;
#   preloaded: `preload` pinned the programs, no container uses them;
#   plshared:  pins, and another container attached from them;
#   generic:   no pin for the policy, the generic programs pinned (a
#              config changed and not preloaded yet): no verifier;
#   noop:      a container with no annotation (the config has no default
#              policy): nothing to attach;
#   noopdisk:  the same with the state dir on a disk's file system.
bench_hook()
{
	local h=("$HOOK" --config "$B_CONFIG") hp

	b_log "bench: hook latency"
	hp=("OCI_SOCKOPT_HOOK_PIN_DIR=$B_PINS" "${h[@]}")
	# nothing to attach, the state dir on a disk (the build dir's file
	# system, as /run is on some hosts): made, as on a node where a
	# container was policed once, so that every run is counted there.
	B_DISK_STATE=$B_OUT/state-disk
	rm -rf "$B_DISK_STATE" && mkdir -m 0700 "$B_DISK_STATE" &&
		stat -f -c %T "$B_DISK_STATE" >"$B_OUT/raw/disk.fstype" || return 1
	mkdir -p "$B_CG/hook-keys" || return 1
	B_EMPTY+=("$B_CG/hook-keys")
	b_container hook restricted && b_container hook-other restricted &&
		b_container hook-noop "" || return 1
	# shellcheck disable=SC2034 # lib.sh's, read by b_cleanup
	B_ATTACHED["hook $B_CONFIG"]=1
	B_ATTACHED["hook-other $B_CONFIG"]=1
	b_preload && b_preload_generic && b_hugetlb_setup || return 1
	alone_group cold hook - "${h[@]}"
	alone_group coldpl hook - "${hp[@]}"
	alone_group fallback hook - "${h[@]}"
	alone_group shared hook hook-other "${h[@]}"
	alone_group preloaded hook - "${hp[@]}"
	alone_group plshared hook hook-other "${hp[@]}"
	alone_group generic hook - "OCI_SOCKOPT_HOOK_PIN_DIR=$B_GEN_PINS" "${h[@]}"
	alone_group noop hook-noop - "${hp[@]}"
	alone_group noopdisk hook-noop - "OCI_SOCKOPT_HOOK_STATE_DIR=$B_DISK_STATE" \
		"${hp[@]}"
	a_exec alone "$HOOK_ROUNDS" /dev/null || return 1
	quiet_keys || return 1
	b_attach_empty "$B_CG/hook-keys" || return 1
	hook_runtimes || return 1
	hook_parts || return 1
	hook_steps || return 1
	hook_strace fallback "$OCI_SOCKOPT_HOOK_PIN_DIR" &&
		hook_strace preloaded "$B_PINS" || return 1
	hook_perf
	b_detach_empty "$B_CG/hook-keys"
}

# ---- 8, 9: scale and kernel memory -------------------------------------

# scale_mem LABEL: the loaded programs and maps and those attached to the
# probe (bpftool -j), for report.py to sum what the programs a container
# uses and their maps hold.
scale_mem()
{
	local probe=$B_CG/scale-probe

	# shellcheck disable=SC2015 # b_fail when any fails
	bpftool -j prog show >"$B_OUT/raw/mem.$1.progs" &&
		bpftool -j map show >"$B_OUT/raw/mem.$1.maps" &&
		{ [ ! -d "$probe" ] || bpftool -j cgroup show "$probe"; } \
			>"$B_OUT/raw/mem.$1.attached" ||
		{ b_fail "bpftool prog/map/cgroup show"; return 1; }
}

# scale_kmem LABEL: what the kernel holds (benchmark 9): /proc/meminfo
# and /proc/slabinfo, after the deferred frees.
scale_kmem()
{
	b_meminfo "$1" && cp /proc/slabinfo "$B_OUT/raw/slabinfo.$1" &&
		cp /sys/devices/system/cpu/possible "$B_OUT/raw/cpus.possible"
}

# scale_storages LABEL: the per-CPU cgroup storages (one per attachment)
# in each counters map of the programs attached to the probe, as "MAP-ID
# ENTRIES" lines: /proc/meminfo's Percpu only grows when the allocator
# populates new pages, so report.py also counts them.
scale_storages()
{
	local ids id n progs

	progs=$(jq -c '[.[].id]' "$B_OUT/raw/mem.$1.attached") &&
		ids=$(jq -r --slurpfile maps "$B_OUT/raw/mem.$1.maps" \
			--argjson progs "$progs" '
		[.[] | select(.id as $p | $progs | index($p)) | .map_ids[]?] |
		unique | .[] as $id | $maps[0][] |
		select(.id == $id and .type == "percpu_cgroup_storage") | .id' \
			"$B_OUT/raw/mem.$1.progs") || return 1
	for id in $ids; do
		n=$(bpftool -j map dump id "$id" | jq length) || return 1
		echo "$id $n"
	done >"$B_OUT/raw/kmem.storages"
}

# scale_time SIZE: the probe's /bin/true, prestart (preloaded) and
# poststop, interleaved, with SIZE-1 others attached.
scale_time()
{
	local pk up hp=("OCI_SOCKOPT_HOOK_PIN_DIR=$B_PINS" "$HOOK" --config "$B_CONFIG")

	read -ra pk <<<"$(b_park scale-probe)"
	read -ra up <<<"$(b_unpark scale-probe)"
	a_step true /bin/true
	a_group
	a_step pre "${hp[@]}" prestart
	a_step pk "${pk[@]}"
	a_step post "${hp[@]}" poststop
	a_step up "${up[@]}"
	a_exec "scale.$1" "$SCALE_ROUNDS" "$(b_state scale-probe)"
}

# runtime_reads: what runc reads of every container's init before our
# prestart's memory is counted: its /proc/PID/stat.
runtime_reads()
{
	local f pid

	for f in "$B_TMP"/states/*.pid; do
		read -r pid <"$f" && read -r _ <"/proc/$pid/stat" || return 1
	done
}

# Benchmark 8: N counts the probe, whose prestart (of the preloaded
# policy: at N=1 the first container of it, above that shared) and
# poststop are timed while N-1 others stay attached. Empty programs on a
# scratch cgroup keep the static keys on throughout, so that N=1 does not
# pay for turning them on.
# Benchmark 9: every cgroup and sleeping process of the largest N is made
# first, each stand-in's /proc/PID/stat read as runc reads its init's
# (libcontainer's currentState() takes the start time from it for
# state.json), then "bare" is taken; "policed" with all N attached;
# "released" once all are released again, the cgroups and sleepers still
# there. What the hook reads beyond that (/proc/PID/cgroup) is its own.
bench_scale()
{
	local size n=0 i max

	b_log "bench: scale ($SCALE)"
	b_preload || return 1
	mkdir -p "$B_CG/scale-keys" || return 1
	b_attach_empty "$B_CG/scale-keys" || return 1
	scale_mem base || return 1
	for size in $SCALE; do max=$size; done
	b_container scale-probe restricted || return 1
	# shellcheck disable=SC2034 # lib.sh's, read by b_cleanup
	B_ATTACHED["scale-probe $B_CONFIG"]=1
	for ((i = 1; i < max; i++)); do
		b_container "scale/c$i" restricted || return 1
	done
	runtime_reads || return 1
	# Twice, nothing changed in between: what the host's other work moves
	# the same counters by (the noise floor of the difference below).
	scale_kmem bare && scale_kmem bare2 || return 1
	for size in $SCALE; do
		while [ $((n + 1)) -lt "$size" ]; do
			n=$((n + 1))
			b_attach "scale/c$n" "$B_CONFIG" "$B_PINS" || return 1
		done
		b_log "bench: scale: $size container(s)"
		scale_time "$size" || return 1
		b_attach scale-probe "$B_CONFIG" "$B_PINS" || return 1
		scale_mem "$size" || return 1
		if [ "$size" = "$max" ]; then
			echo "$size $(b_attached_progs "$B_CG/scale-probe")" \
				>"$B_OUT/raw/kmem.n" && scale_kmem policed &&
				scale_storages "$size" || return 1
		fi
		b_detach scale-probe
	done
	b_log "bench: scale: releasing $n container(s)"
	for ((i = n; i >= 1; i--)); do
		b_detach "scale/c$i"
	done
	scale_kmem released || return 1
	b_detach_empty "$B_CG/scale-keys"
}
