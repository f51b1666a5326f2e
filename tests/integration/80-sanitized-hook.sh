#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The integration suites again, with the hook built with ASan+UBSan and
# with the hook under valgrind memcheck: a memory error, undefined
# behaviour or a leak in any hook run fails the container, so the suite.
#
# Modules: all that those suites run
# Root: yes
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/host.sh
. "$here/../lib/host.sh"
tap_require_root
top=$TESTS_TOP BUILD=$TESTS_BUILD
san=$BUILD/san/oci-sockopt-hook
[ -x "$san" ] || tap_skip_all "no $san (make hook-san)"

# Not every hook-driving suite: those that together run every line of the
# hook that any of them runs (tests/san/suite-coverage.sh with a
# --coverage hook, then tests/san/pick-suites.py: most new lines per
# second first; tests/README.md, "make check"). Rerun both when suites or
# modules change.
# ASan+UBSan: the full cover (5917 lines, against 5372 for the 26 suites
# it ran before), 71-parallel besides (50 hooks at once, which no line
# count sees), and 81-nri-plugin, the only suite that runs the NRI plugin.
ASAN_SUITES="00-hook-cli 01-cli 12-crun 13-hook-made 20-bypass 45-preload 51-status 52-explain 57-trust 58-sandbox-stages 60-bad-inputs 61-required-annotations 62-audit 63-metrics 64-status 65-cluster 66-upgrade 67-audit-mode 68-record-mode 70-faults 71-parallel 72-escapes 75-lengths 76-path 81-nri 46-sandbox 47-socket 48-pin 77-bpffs 78-record"
# valgrind (uninitialised reads, which ASan does not see): the cover of
# the suites it ran before, less those adding under 1 line per second
# (72-escapes: 1 line in 14 s; 30-refusals: 5 in 4 s); 70-faults stays
# for its unwinding paths; plus record and audit mode and preload, which
# it never ran. Not 65-cluster (the features command): under valgrind it
# took 280 s of the 556 s of all the others together (2026-12-01, a loaded
# 2-core machine); ASan+UBSan runs it.
VALGRIND_SUITES="00-hook-cli 12-crun 13-hook-made 20-bypass 45-preload 51-status 57-trust 58-sandbox-stages 61-required-annotations 63-metrics 67-audit-mode 68-record-mode 70-faults 75-lengths 76-path"

# Each name must still be a suite: a renamed one would drop out unseen.
for pat in $ASAN_SUITES $VALGRIND_SUITES; do
	compgen -G "$top/tests/integration/$pat*.sh" >/dev/null ||
		tap_ok 1 "$pat names no suite in tests/integration"
done

# run_under NAME HOOK SUITES: one TAP line per suite, and one for
# tests/run.sh's own exit status: a run that failed without a FAIL line
# (the lock not taken, a suite left out) fails too.
run_under()
{
	local name=$1 hook=$2 suites=$3 out line rc

	out=$(HOOK=$hook TESTS="$suites" BUILD=$BUILD "$top/tests/run.sh" 2>&1)
	rc=$?
	while IFS= read -r line; do
		case $line in
		PASS\ *) tap_ok 0 "$name: ${line#PASS }" ;;
		SKIP\ *)
			line=${line#SKIP }
			tap_skip "$name: ${line%%:*}" "${line#*: }"
			;;
		FAIL\ *)
			tap_ok 1 "$name: ${line#FAIL }"
			;;
		esac
	done <<<"$out"
	tap_is "$rc" 0 "$name: tests/run.sh exits 0" || tap_diag "$out"
}

# Leaks are errors; report them all, then fail.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=98
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_under asan+ubsan "$san" "$ASAN_SUITES"
run_under valgrind "$top/tests/san/valgrind-hook" "$VALGRIND_SUITES"
tap_done
