#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The integration suites again, with the hook built with ASan+UBSan and
# with the hook under valgrind memcheck: a memory error, undefined
# behaviour or a leak in any hook run fails the container, so the suite.
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

# Suites that run the hook through runc/crun or directly.
ASAN_SUITES="00-hook-cli 10-runc 11-crun 12-crun 13-hook-made 20-bypass 30-refusals 40-no-poststop 41-reaper 51-status 57-trust 58-sandbox-stages 60-bad-inputs 61-required-annotations 70-faults 71-parallel 72-escapes 73-limits 74-attacks 75-lengths 76-path 62-audit 63-metrics 64-status 67-audit-mode 68-record-mode 77-bpffs 78-record-holds"
VALGRIND_SUITES="00-hook-cli 10-runc 11-crun 12-crun 13-hook-made 20-bypass 30-refusals 40-no-poststop 41-reaper 51-status 57-trust 58-sandbox-stages 61-required-annotations 70-faults 72-escapes 73-limits 74-attacks 75-lengths 76-path 63-metrics"

# run_under NAME HOOK SUITES: one TAP line per suite.
run_under()
{
	local name=$1 hook=$2 suites=$3 out line

	out=$(HOOK=$hook TESTS="$suites" BUILD=$BUILD "$top/tests/run.sh" 2>&1)
	while IFS= read -r line; do
		case $line in
		PASS\ *) tap_ok 0 "$name: ${line#PASS }" ;;
		SKIP\ *) tap_ok 0 "$name: ${line#SKIP } # SKIP" ;;
		FAIL\ *)
			tap_ok 1 "$name: ${line#FAIL }"
			;;
		esac
	done <<<"$out"
	grep -q '^FAIL' <<<"$out" && tap_diag "$out"
}

# Leaks are errors; report them all, then fail.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=98
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_under asan+ubsan "$san" "$ASAN_SUITES"
run_under valgrind "$top/tests/san/valgrind-hook" "$VALGRIND_SUITES"
tap_done
