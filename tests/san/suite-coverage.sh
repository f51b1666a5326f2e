#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# suite-coverage.sh SUITE...: which lines of the hook each integration
# suite runs, to choose the suites the sanitizer builds rerun
# (80-sanitized-hook.sh): each suite alone, with the hook built with
# --coverage (make hook-cov), then gcov. Writes
# $BUILD/cov/suites/SUITE.lines (one "file:line" per line run) and prints
# tests/san/pick-suites.py's choice. Root; the tests' lock is taken once
# for the whole run.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
# shellcheck source=../lib/host.sh
. tests/lib/host.sh
BUILD=${BUILD:-build}
cov=$BUILD/cov
hook=$cov/oci-sockopt-hook
[ -x "$hook" ] || { echo "suite-coverage.sh: no $hook (make hook-cov)" >&2; exit 1; }
mkdir -p "$cov/suites"
: >"$cov/suites/times"
# The lock once, for every suite: tests/run.sh inherits it.
host_lock || exit 1
for suite in "$@"; do
	find "$cov/obj" -name '*.gcda' -delete
	out=$(HOOK=$top/$hook TESTS="$suite" BUILD=$BUILD ./tests/run.sh 2>&1)
	line=$(grep -E '^(PASS|FAIL|SKIP) ' <<<"$out" | head -n 1)
	echo "$line"
	name=$(awk '{print $2}' <<<"$line")
	secs=$(sed -n 's/^PASS [^ ]* (\([0-9]*\)s.*/\1/p' <<<"$line")
	[ -n "$name" ] || continue
	echo "$name ${secs:-0}" >>"$cov/suites/times"
	(cd "$top" && for src in hook/*.c hook/*/*.c hook/*/*/*.c; do
		[ -f "$src" ] || continue
		sub=$(dirname "${src#hook/}")
		gcov -t -j -o "$cov/obj/${sub#.}" "$src" 2>/dev/null
	done) | python3 -c '
import json, sys
seen = set()
for doc in sys.stdin:
    if not doc.startswith("{"):
        continue
    for f in json.loads(doc).get("files", []):
        if not f["file"].startswith("hook/"):
            continue
        for ln in f["lines"]:
            if ln["count"] > 0:
                seen.add("%s:%d" % (f["file"], ln["line_number"]))
print("\n".join(sorted(seen)))' >"$cov/suites/$name.lines"
done
./tests/san/pick-suites.py "$cov/suites"
