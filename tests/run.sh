#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs every test suite: the unit test binaries build/tests/unit-* and the
# scripts tests/integration/*.sh. Exit 77 from a suite means skipped.
# TESTS="pattern..." runs only the suites whose file name contains one of
# the patterns (shell globs, e.g. TESTS=crun or TESTS='unit 2?-'); BUILD
# names the build directory.
# Each suite's output goes to $BUILD/tests/logs/<suite>.log and is shown
# when the suite fails (VERBOSE=1 shows it always).
# The run holds the machine-wide tests' lock from start to end (see
# tests/lib/host.sh): its suites inherit it, and other runs wait.
# The run ends with every skip and its reason: the suites that skipped
# (exit 77, the reason from their "1..0 # SKIP" plan) and the checks
# that did ("ok N - ... # SKIP reason"), per suite and reason, then
# "N passed, N failed, N skipped (K checks skipped)". A skip says what
# this machine lacks; a step that was tried and failed is a failure.
# The QEMU suites (TESTS_BACKGROUND, patterns, default "90-vm 95-node";
# empty: none) touch no host BPF program, cgroup or hook state: they run
# one after the other in the background from the start, beside the host
# suites, and are reported after them. TESTS_PREPARE, a shell command
# (make check's builds that only the host suites need), runs after they
# start and before the host suites are listed; its failure fails the run.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
# shellcheck source=lib/host.sh
. tests/lib/host.sh
BUILD=${BUILD:-build}
logs=$BUILD/tests/logs
mkdir -p "$logs" || exit 1

# selected NAME: NAME matches $TESTS, or TESTS is empty.
selected()
{
	local pat

	[ -z "${TESTS:-}" ] && return 0
	for pat in $TESTS; do
		# shellcheck disable=SC2053
		[[ $1 == *$pat* ]] && return 0
	done
	return 1
}

# background NAME: NAME is one of the QEMU suites run beside the others.
background()
{
	local pat

	for pat in ${TESTS_BACKGROUND-90-vm 95-node}; do
		# shellcheck disable=SC2053
		[[ $1 == *$pat* ]] && return 0
	done
	return 1
}

# host_suites: the unit test binaries and the suites that run here, in
# suites; behind_suites: the QEMU suites, in behind.
host_suites()
{
	local f

	suites=()
	for f in "$BUILD"/tests/unit-* tests/integration/*.sh; do
		if [ ! -f "$f" ] || [ ! -x "$f" ]; then
			continue
		fi
		case $f in *.log | *.o | *.d) continue ;; esac
		selected "$(basename "$f")" || continue
		background "$(basename "$f")" || suites+=("$f")
	done
}

behind_suites()
{
	local f

	behind=()
	for f in tests/integration/*.sh; do
		if [ -f "$f" ] && [ -x "$f" ] && selected "$(basename "$f")" &&
			background "$(basename "$f")"; then
			behind+=("$f")
		fi
	done
}
behind_suites

# run SUITE: runs it into its log; its exit status and seconds go to
# LOG.rc.
run()
{
	local log start=$SECONDS rc

	log=$logs/$(basename "$1").log
	"./$1" >"$log" 2>&1 </dev/null
	rc=$?
	echo "$rc $((SECONDS - start))" >"$log.rc"
}

host_lock || exit 1
bgpid=
if [ ${#behind[@]} -gt 0 ]; then
	# a process group of their own, so that an interrupted run ends them
	set -m
	(for f in "${behind[@]}"; do run "$f"; done) &
	bgpid=$!
	set +m
	trap '[ -z "$bgpid" ] || kill -- "-$bgpid" 2>/dev/null' EXIT
fi
# What the host suites need and the QEMU suites do not (make check's
# TESTS_PREPARE: the sanitized, dynamic, fuzz and bench builds, shellcheck,
# modules-check), built while the QEMU suites start; a failure ends the
# run.
if [ -n "${TESTS_PREPARE:-}" ]; then
	start=$SECONDS
	bash -c "$TESTS_PREPARE"
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "FAIL prepare: $TESTS_PREPARE (exit $rc, $((SECONDS - start))s)"
		exit 1
	fi
	echo "prepared: $TESTS_PREPARE ($((SECONDS - start))s)"
fi
# not again in a run the suites start (80-sanitized-hook.sh's)
unset TESTS_PREPARE
host_suites
passed=0 failed=0 skipped=0 checks_skipped=0 skips=()
# report SUITE: its line, from its log and LOG.rc.
report()
{
	local name log rc secs todo why n

	name=$(basename "$1")
	log=$logs/$name.log
	read -r rc secs <"$log.rc" || { rc=1 secs=0; }
	case $rc in
	0)
		passed=$((passed + 1))
		todo=$(grep -c '^not ok .*# TODO' "$log")
		printf 'PASS %s (%ss%s)\n' "$name" "$secs" \
			"$([ "$todo" = 0 ] || echo ", $todo known failures marked TODO")"
		;;
	77)
		skipped=$((skipped + 1))
		why=$(sed -n 's/^1\.\.0 # SKIP //p' "$log" | head -n 1)
		printf 'SKIP %s: %s\n' "$name" "${why:-(no reason given)}"
		skips+=("$name: ${why:-(no reason given)}")
		;;
	*)
		failed=$((failed + 1))
		printf 'FAIL %s (exit %s, %ss; log %s)\n' "$name" "$rc" "$secs" "$log"
		;;
	esac
	# Its skipped checks, per reason.
	while read -r n why; do
		[ -n "$n" ] || continue
		checks_skipped=$((checks_skipped + n))
		skips+=("$name ($n check$([ "$n" = 1 ] || echo s)): ${why:-(no reason given)}")
	done < <(sed -n 's/^ok [0-9]* .*# SKIP *\(.*\)$/\1/p' "$log" | sort | uniq -c)
	# Measured figures a suite wants seen, pass or fail.
	sed -n 's/^# report: /    /p' "$log"
	if [ "${VERBOSE:-0}" = 1 ] || { [ "$rc" != 0 ] && [ "$rc" != 77 ]; }; then
		sed 's/^/    /' "$log"
	fi
}

for f in "${suites[@]}"; do
	run "$f"
	report "$f"
done
if [ -n "$bgpid" ]; then
	wait "$bgpid"
	bgpid=
	for f in "${behind[@]}"; do report "$f"; done
fi
if [ ${#skips[@]} -gt 0 ]; then
	echo "skips: $skipped suite(s), $checks_skipped check(s):"
	printf '  %s\n' "${skips[@]}"
else
	echo "skips: none"
fi
echo "$passed passed, $failed failed, $skipped skipped ($checks_skipped checks skipped)"
[ "$failed" = 0 ]
