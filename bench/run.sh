#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/run.sh [--smoke]: the benchmarks behind `make bench` (bench-run)
# and `make bench-smoke`. Every line of the table compares variants
# measured in this run, interleaved trial by trial (A B C, B C A, ...), as
# the median of the trials and the ratio of the medians. This script
# measures: the trials go to $BUILD/bench/raw/. bench/report.py computes
# the table (stdout and $BUILD/bench/table.txt) and
# $BUILD/bench/results.json from them.
#
# --smoke runs every benchmark for a few iterations and judges nothing:
# it exits non-zero only when something is broken (a program does not
# attach, a call returns what the policy says it must not, the hook fails,
# something is left behind).
#
# Environment: BUILD, HOOK, BENCH_TRIALS, BENCH_CALLS, BENCH_ROUNDS,
# BENCH_RUNTIME_ROUNDS, BENCH_SCALE ("1 100 1000"), BENCH_CPU, BENCH_ONLY (names of benchmarks
# to run: datapath rules host hook scale).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
# Benchmarks 1, 8 and 9: what a container start costs.
# shellcheck source=bench/start.sh
. "$(dirname "$0")/start.sh"

B_SMOKE=0
[ "${1:-}" = --smoke ] && B_SMOKE=1
if [ "$B_SMOKE" = 1 ]; then
	T=1 CALLS=2000 BATCHES=2 ROUNDS=3 RUNC_ROUNDS=2 SCALE="1 10" SCALE_ROUNDS=3
	export BENCH_SETTLE=${BENCH_SETTLE:-0.2}
else
	# runc and crun runs jitter by several ms: 800 rounds bring the 95%
	# CI of a paired p50 difference to about +-0.4 ms.
	T=11 CALLS=50000 BATCHES=5 ROUNDS=15 RUNC_ROUNDS=800 SCALE="1 100 1000" SCALE_ROUNDS=40
fi
T=${BENCH_TRIALS:-$T}
CALLS=${BENCH_CALLS:-$CALLS}
ROUNDS=${BENCH_ROUNDS:-$ROUNDS}
RUNC_ROUNDS=${BENCH_RUNTIME_ROUNDS:-$RUNC_ROUNDS}
SCALE=${BENCH_SCALE:-$SCALE}
HOOK_ROUNDS=$((ROUNDS * 10))
B_CPU=${BENCH_CPU:-$(($(nproc) - 1))}
ONLY=${BENCH_ONLY:-datapath rules host hook scale}

# b_run KEY [SOCKBENCH-ARGS...]: one trial; appends its value to KEY.
b_run()
{
	local key=$1 out

	shift
	out=$("$SB" -C "$B_CPU" -b "$BATCHES" "$@" 2>>"$B_TMP/sb.err") || {
		b_fail "sockbench $*: $(tail -n 1 "$B_TMP/sb.err")"
		return 1
	}
	b_add "$key" "$out"
}

# b_trials CALLS SPEC...: SPEC is "KEY|SOCKBENCH-ARGS"; T trials, the
# variants' order rotated each trial.
b_trials()
{
	local calls=$1 t k n spec args

	shift
	n=$#
	for ((t = 0; t < T; t++)); do
		for ((k = 0; k < n; k++)); do
			spec=${*:$(((t + k) % n + 1)):1}
			read -ra args <<<"${spec#*|}"
			b_run "${spec%%|*}" -n "$calls" "${args[@]}" || return 1
		done
	done
}

# b_exec PREFIX ROUNDS STDIN KEY... -- CMD... [:: CMD...]: sockbench exec;
# column i of its output goes to PREFIX.KEY_i.
b_exec()
{
	local prefix=$1 rounds=$2 in=$3 keys=() line vals i

	shift 3
	while [ "$1" != -- ]; do
		keys+=("$1")
		shift
	done
	"$SB" exec -r "$rounds" -i "$in" -e "$B_TMP/exec.err" "$@" \
		>"$B_TMP/exec.out" || {
		b_fail "timed exec ($prefix): $(tail -n 2 "$B_TMP/exec.err" | tr '\n' ' ')"
		return 1
	}
	while read -r line; do
		read -ra vals <<<"$line"
		for i in "${!keys[@]}"; do
			b_add "$prefix.${keys[$i]}" "${vals[$i]}"
		done
	done <"$B_TMP/exec.out"
}

# ---- 2, 3, 4, 7: datapath and the seccomp peer -------------------------

# Record mode: a container annotated sockopt-hook.io/record, no policy
# (its programs allow everything and note every call). Sets REC_CFG.
b_record_container()
{
	local bundle=$B_TMP/bundles/record

	REC_CFG=$(b_config record \
		".record = {\"allow\": true, \"dir\": \"$B_TMP/recorded\"}") ||
		return 1
	mkdir -p "$bundle" &&
		jq -n '{annotations: {"sockopt-hook.io/record": "bench"}}' \
			>"$bundle/config.json" || return 1
	b_container "$1" "" || return 1
	jq -c --arg b "$bundle" '.bundle = $b' "$(b_state "$1")" \
		>"$(b_state "$1").new" && mv "$(b_state "$1").new" "$(b_state "$1")"
}

# The same policy on the generic programs (no prestart verifies): a pin dir
# with nothing but them, and a state dir of its own (in the bench's, the
# index names dp-ours's copies, which prestart would share), so the
# container's prestart starts on them. GEN_HOOK runs the hook so.
b_generic_container()
{
	local n

	mkdir -m 0700 "$B_TMP/state/generic" && b_preload_generic &&
		b_container dp-gen restricted || return 1
	GEN_HOOK=(env "OCI_SOCKOPT_HOOK_STATE_DIR=$B_TMP/state/generic"
		"OCI_SOCKOPT_HOOK_PIN_DIR=$B_GEN_PINS" "$HOOK" --config "$B_CONFIG")
	"${GEN_HOOK[@]}" prestart <"$(b_state dp-gen)" 2>>"$B_TMP/hook.err" ||
		{ b_fail "hook prestart of dp-gen: $(tail -n 1 "$B_TMP/hook.err")"; return 1; }
	n=$(bpftool -j cgroup show "$B_CG/dp-gen" 2>/dev/null |
		jq '[.[]? | select(.name | startswith("sh_gen_"))] | length')
	[ "$n" = 3 ] || { b_fail "the generic programs: $n attached, not 3"; return 1; }
}

bench_datapath()
{
	local none=$B_CG/dp-none empty=$B_CG/dp-empty ours=$B_CG/dp-ours n
	local rec=$B_CG/dp-rec gen=$B_CG/dp-gen
	local audit=$B_CG/dp-audit acfg=$B_TMP/audit-mode.json

	b_log "bench: datapath (setsockopt, getsockopt, socket, seccomp)"
	mkdir -p "$none" "$empty" || return 1
	b_attach_empty "$empty" || return 1
	b_container dp-ours restricted && b_attach dp-ours || return 1
	n=$(b_attached_progs "$ours")
	[ "$n" = 3 ] || { b_fail "restricted attached $n programs, not 3"; return 1; }
	b_record_container dp-rec && b_attach dp-rec "$REC_CFG" || return 1
	# Audit mode: the same policy, counting instead of applying; named by
	# the container's annotation, so the operator's audit_by_annotation.
	jq '.policies.restricted.mode = "audit" |
	    .policies.restricted.audit_by_annotation = true' "$B_CONFIG" >"$acfg" &&
		b_container dp-audit restricted && b_attach dp-audit "$acfg" ||
		return 1
	n=$(b_attached_progs "$audit")
	[ "$n" = 3 ] || { b_fail "audit mode attached $n programs, not 3"; return 1; }
	b_generic_container || return 1
	b_trials "$CALLS" \
		"set.a|-c $none set SOL_SOCKET SO_KEEPALIVE 1" \
		"set.b|-c $empty set SOL_SOCKET SO_KEEPALIVE 1" \
		"set.c|-c $ours set SOL_SOCKET SO_KEEPALIVE 1" \
		"set.r|-c $rec set SOL_SOCKET SO_KEEPALIVE 1" \
		"set.a2|-c $none set SOL_SOCKET SO_RCVBUF 1048576" \
		"set.b2|-c $empty set SOL_SOCKET SO_RCVBUF 1048576" \
		"set.d|-c $ours set SOL_SOCKET SO_RCVBUF 1048576" \
		"set.e|-c $audit set SOL_SOCKET SO_KEEPALIVE 1" \
		"set.f|-c $audit set SOL_SOCKET SO_RCVBUF 1048576" \
		"set.g|-c $gen set SOL_SOCKET SO_KEEPALIVE 1" \
		"set.gd|-c $gen set SOL_SOCKET SO_RCVBUF 1048576" \
		"set.seccomp|-s -c $none set SOL_SOCKET SO_KEEPALIVE 1" || return 1
	b_trials "$CALLS" \
		"get.a|-c $none get SOL_SOCKET SO_KEEPALIVE" \
		"get.b|-c $empty get SOL_SOCKET SO_KEEPALIVE" \
		"get.c|-c $ours get SOL_SOCKET SO_KEEPALIVE" \
		"get.r|-c $rec get SOL_SOCKET SO_KEEPALIVE" \
		"get.e|-c $audit get SOL_SOCKET SO_KEEPALIVE" \
		"get.b2|-c $empty get SOL_SOCKET SO_MARK" \
		"get.d|-c $ours get SOL_SOCKET SO_MARK EPERM" \
		"get.g|-c $gen get SOL_SOCKET SO_KEEPALIVE" \
		"get.gd|-c $gen get SOL_SOCKET SO_MARK EPERM" \
		"zc.a|-c $none zerocopy" \
		"zc.b|-c $empty zerocopy" \
		"zc.c|-c $ours zerocopy" \
		"zc.g|-c $gen zerocopy" || return 1
	b_trials "$((CALLS / 10))" \
		"sock.a|-c $none socket tcp" \
		"sock.b|-c $empty socket tcp" \
		"sock.c|-c $ours socket tcp" \
		"sock.r|-c $rec socket tcp" \
		"sock.e|-c $audit socket tcp" \
		"usock.a|-c $none socket udp" \
		"usock.b|-c $empty socket udp" \
		"usock.c|-c $ours socket udp" \
		"sock.g|-c $gen socket tcp" \
		"usock.g|-c $gen socket udp" || return 1
	b_trials "$CALLS" \
		"deny.allowed|-c $none set SOL_SOCKET SO_MARK 5" \
		"deny.seccomp|-s -c $none set SOL_SOCKET SO_MARK 5 EPERM" \
		"deny.ours|-c $ours set SOL_SOCKET SO_MARK 5 EPERM" \
		"deny.audit|-c $audit set SOL_SOCKET SO_MARK 5" \
		"ppid.a|-c $none getppid" \
		"ppid.seccomp|-s -c $none getppid" \
		"ppid.ours|-c $ours getppid" || return 1
	b_detach dp-ours
	b_detach dp-rec "$REC_CFG"
	b_detach dp-audit "$acfg"
	b_parked dp-gen "${GEN_HOOK[@]}" poststop <"$(b_state dp-gen)" \
		2>>"$B_TMP/hook.err"
	b_detach_empty "$empty"
}

# ---- 5: rule count -----------------------------------------------------

bench_rules()
{
	local cfg k specs=()

	b_log "bench: rule count"
	# SO_RCVBUF clamped, plus k-1 deny rules on numeric SOL_SOCKET options.
	cfg=$(b_config rules '
		def rules(k): [{level: "SOL_SOCKET", option: "SO_RCVBUF",
				action: "clamp", max: 65536}] +
			[range(1; k) | {level: "SOL_SOCKET", option: (3000 + .),
					action: "deny"}];
		.annotations.allow_policies += ["rules1", "rules16", "rules256"] |
		.policies += {rules1: {setsockopt: rules(1)},
			      rules16: {setsockopt: rules(16)},
			      rules256: {setsockopt: rules(256)}}') || return 1
	for k in 1 16 256; do
		b_container "rules$k" "rules$k" && b_attach "rules$k" "$cfg" ||
			return 1
		specs+=("rules.$k.hit|-c $B_CG/rules$k set SOL_SOCKET SO_RCVBUF 4096"
			"rules.$k.miss|-c $B_CG/rules$k set SOL_SOCKET SO_KEEPALIVE 1")
	done
	# The last rule is in the map: its option is refused.
	b_run rules.check -n 10 -c "$B_CG/rules256" set SOL_SOCKET 3255 1 EPERM ||
		return 1
	b_trials "$CALLS" "${specs[@]}" || return 1
	for k in 1 16 256; do
		b_detach "rules$k" "$cfg"
	done
}

# ---- 6: host impact ----------------------------------------------------

# host_keys STATE: the static keys' states (sockbench keys), once per
# host state.
host_keys()
{
	local keys

	keys=$("$SB" keys "$B_CG/host-scratch" 2>>"$B_TMP/sb.err") || {
		b_fail "sockbench keys: $(tail -n 1 "$B_TMP/sb.err")"
		return 1
	}
	[ -f "$B_OUT/raw/host.keys.$1" ] || echo "$keys" >"$B_OUT/raw/host.keys.$1"
}

host_trial()
{
	local state=$1 by=$B_CG/host-bystander

	case $state in
	setonly) b_attach host-setonly || return 1 ;;
	restricted) b_attach host-restricted || return 1 ;;
	kept) b_preload_with "$B_KEEP_CONFIG" || return 1 ;;
	esac
	host_keys "$state" &&
		b_run "host.$state.set" -n "$CALLS" -c "$by" set SOL_SOCKET SO_KEEPALIVE 1 &&
		b_run "host.$state.get" -n "$CALLS" -c "$by" get SOL_SOCKET SO_KEEPALIVE &&
		b_run "host.$state.sock" -n "$((CALLS / 10))" -c "$by" socket tcp
	local r=$?
	case $state in
	setonly) b_detach host-setonly ;;
	restricted) b_detach host-restricted ;;
	kept) b_preload_with "$B_PRELOAD_CONFIG" ;;
	esac
	return "$r"
}

# Host states: nothing of ours anywhere; setonly or restricted attached to
# a container elsewhere; the keys kept on by `preload` with keep_keys
# (examples/config.json's policies use all three attach types).
bench_host()
{
	local states=(none setonly restricted kept) t k n=4

	b_log "bench: host impact"
	mkdir -p "$B_CG/host-bystander" "$B_CG/host-scratch" || return 1
	b_container host-setonly setonly && b_container host-restricted restricted ||
		return 1
	B_KEEP_CONFIG=$(b_config keep-keys '.keep_keys = true') || return 1
	for ((t = 0; t < T; t++)); do
		for ((k = 0; k < n; k++)); do
			host_trial "${states[$(((t + k) % n))]}" || return 1
		done
	done
}

# ---- the report ---------------------------------------------------------

# report: the table and results.json from the raw trials (bench/report.py,
# for Debian's python3 and its standard library).
report()
{
	local rev opts=()

	rev=$(git -C "$B_TOP" describe --always --dirty 2>/dev/null || echo unknown)
	[ "${BENCH_VERBOSE:-0}" = 1 ] && opts+=(--verbose)
	[ "$B_SMOKE" = 1 ] && opts+=(--smoke)
	# -B: no __pycache__ in the source tree (report.py imports its
	# siblings).
	"$B_PYTHON" -B "$B_TOP/bench/report.py" --out "$B_OUT" "${opts[@]}" \
		--trials "$T" --calls "$CALLS" --rounds "$ROUNDS" --cpu "$B_CPU" \
		--cpus "$(nproc)" --scale "$SCALE" --git "$rev" \
		--hook-version "$("$HOOK" --version 2>/dev/null)" ||
		b_fail "bench/report.py"
}

main()
{
	local name r t0 start=$SECONDS

	b_init
	r=$?
	if [ "$r" = 77 ] && [ "$B_SMOKE" = 1 ]; then
		echo "bench-smoke: SKIP (needs root)"
		exit 0
	fi
	[ "$r" = 0 ] || exit 1
	for name in datapath rules host hook scale; do
		case " $ONLY " in
		*" $name "*)
			t0=$SECONDS
			if "bench_$name"; then
				echo "$name" >>"$B_OUT/raw/benchmarks"
			else
				b_fail "benchmark $name"
			fi
			b_log "bench: $name took $((SECONDS - t0)) s"
			;;
		esac
	done
	report
	echo "bench: $((SECONDS - start)) s; results in $B_OUT/results.json$(
		[ "$B_SMOKE" = 1 ] && echo " (smoke run: no verdicts)")"
}

main "$@"
