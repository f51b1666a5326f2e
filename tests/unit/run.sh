#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# run.sh BINARY...: runs unit test binaries (make unit, make unit-san), one
# line each; a failing one's TAP is shown. They need no root and no lock.
# Exit 1 when any fails.
failed=0 skipped=0
for bin in "$@"; do
	out=$("$bin" 2>&1 </dev/null)
	rc=$?
	plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.//p' | tail -n 1)
	todo=$(printf '%s\n' "$out" | grep -c '^not ok .*# TODO')
	if [ "$rc" = 0 ]; then
		printf 'PASS %s (%s tests%s)\n' "${bin##*/}" "$plan" \
			"$([ "$todo" = 0 ] || echo ", $todo known failures marked TODO")"
	elif [ "$rc" = 77 ]; then
		skipped=$((skipped + 1))
		printf 'SKIP %s: %s\n' "${bin##*/}" \
			"$(printf '%s\n' "$out" | sed -n 's/^1\.\.0 # SKIP //p')"
	else
		failed=$((failed + 1))
		printf 'FAIL %s (exit %s)\n' "${bin##*/}" "$rc"
		printf '%s\n' "$out" | sed 's/^/    /'
	fi
done
echo "unit: $# binaries, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
