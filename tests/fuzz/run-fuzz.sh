#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs the libFuzzer targets built by tests/fuzz/fuzz.mk.
#
#   run-fuzz.sh [-j N] [-r] SECONDS TARGET...
#
# -r first replays every file in tests/fuzz/regressions/<target>/ (each a
# past crash or a hand-picked hard input). Then each target fuzzes for
# SECONDS, N targets at a time, seeded from tests/fuzz/corpus/<target>/
# (and examples/ for the config target); new inputs go to
# $BUILD/fuzz/corpus/<target>/, crash artifacts to
# $BUILD/fuzz/artifacts/<target>/, the log to $BUILD/fuzz/logs/<target>.log.
# Prints one line per target with its executions and crashes; exits 1 if
# any target crashed (or a regression input does), 0 otherwise.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
BUILD=${BUILD:-build}
FUZZ=$BUILD/fuzz
jobs=1 replay=0

while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift 2 ;;
	-r) replay=1; shift ;;
	*) break ;;
	esac
done
if [ $# -lt 2 ]; then
	echo "usage: $0 [-j N] [-r] SECONDS TARGET..." >&2
	exit 2
fi
secs=$1
shift

# At most 10 s per input and 2 GiB RSS; fuzzing makes inputs up to 16 KiB
# (replays take whole files).
common=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1)

replay_target()
{
	local t=$1 bin=$FUZZ/fuzz_$1 dir=tests/fuzz/regressions/$1 f files log
	local bad=0

	[ -d "$dir" ] || return 0
	mapfile -t files < <(find "$dir" -type f ! -name '*.md' | sort)
	[ ${#files[@]} -gt 0 ] || return 0
	log=$FUZZ/logs/$t.regressions.log
	: >"$log"
	# One run per file: libFuzzer stops at the first input that crashes.
	for f in "${files[@]}"; do
		"$bin" "${common[@]}" "$f" >>"$log" 2>&1 && continue
		bad=$((bad + 1))
		echo "fuzz_$t: regression $f crashes (log $log):"
		grep -E '^(==[0-9]+==ERROR|SUMMARY)|invariant failed|runtime error' "$log" |
			tail -n 2 | sed 's/^/    /'
	done
	echo "fuzz_$t: ${#files[@]} regression inputs replayed, $bad crashes"
	[ "$bad" = 0 ]
}

# fuzz_target NAME: one timed run; writes $FUZZ/logs/NAME.result.
fuzz_target()
{
	local t=$1 bin=$FUZZ/fuzz_$1 seeds dict=() log execs crashes
	local corpus=$FUZZ/corpus/$1 art=$FUZZ/artifacts/$1/ rc

	mkdir -p "$corpus" "$art"
	seeds=(tests/fuzz/corpus/"$t")
	[ "$t" = config ] && seeds+=(examples)
	[ -f tests/fuzz/dict/"$t".dict ] && dict=(-dict=tests/fuzz/dict/"$t".dict)
	log=$FUZZ/logs/$t.log
	# libFuzzer stops at the first crash, leak, timeout or OOM and leaves
	# its input as an artifact.
	"$bin" "${common[@]}" "${dict[@]}" -max_len=16384 -max_total_time="$secs" \
		-artifact_prefix="$art" "$corpus" "${seeds[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	crashes=$(find "$art" -type f \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) -newer "$log.start" | wc -l)
	[ "$rc" != 0 ] && [ "$crashes" = 0 ] && crashes=1
	printf 'fuzz_%s: %s execs in %ss, corpus %s, %s crashes%s\n' "$t" \
		"${execs:-?}" "$secs" "$(find "$corpus" -type f | wc -l)" \
		"$crashes" "$([ "$crashes" = 0 ] || echo " (log $log, artifacts $art)")" \
		>"$FUZZ/logs/$t.result"
}

mkdir -p "$FUZZ/logs"
failed=0
for t in "$@"; do
	if [ ! -x "$FUZZ/fuzz_$t" ]; then
		echo "fuzz_$t: not built ($FUZZ/fuzz_$t)" >&2
		exit 2
	fi
	if [ "$replay" = 1 ]; then
		replay_target "$t" || failed=1
	fi
done

running=0
for t in "$@"; do
	rm -f "$FUZZ/logs/$t.result"
	touch "$FUZZ/logs/$t.log.start"
	fuzz_target "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

total_execs=0 total_crashes=0
for t in "$@"; do
	line=$(cat "$FUZZ/logs/$t.result" 2>/dev/null || echo "fuzz_$t: no result")
	echo "$line"
	n=$(sed -n 's/^fuzz_[a-z_]*: \([0-9]*\) execs.*/\1/p' <<<"$line")
	c=$(sed -n 's/.*, \([0-9]*\) crashes.*/\1/p' <<<"$line")
	total_execs=$((total_execs + ${n:-0}))
	total_crashes=$((total_crashes + ${c:-1}))
done
echo "fuzz total: $total_execs execs, $total_crashes crashes"
[ "$total_crashes" = 0 ] && [ "$failed" = 0 ]
