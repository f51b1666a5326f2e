/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The TAP producer of the C test programs (unit tests and attacks), the
 * counterpart of tests/lib/tap.sh. Lines are flushed as they are printed so
 * a relaying shell sees them even if the program dies next.
 */
#ifndef SH_TEST_TAP_H
#define SH_TEST_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tap_count, tap_failed;

__attribute__((format(printf, 2, 3), unused)) static bool
tap_ok(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	tap_failed += !ok;
	return ok;
}

__attribute__((format(printf, 1, 2), unused)) static void
tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Prints the plan; the exit status for main. A run that asserted nothing
 * failed: it did not get as far as its first check. */
__attribute__((unused)) static int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed || !tap_count ? 1 : 0;
}

#endif /* SH_TEST_TAP_H */
