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
#include <string.h>

static int tap_count, tap_failed, tap_planned = -1;

/* A description stays on its test's line, whatever it quotes. */
__attribute__((format(printf, 2, 3), unused)) static bool
tap_ok(bool ok, const char *fmt, ...)
{
	char desc[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	for (char *p = desc; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	printf("%sok %d - %s\n", ok ? "" : "not ", ++tap_count, desc);
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

/* One passing line marked SKIP: a check this run cannot make (why). */
__attribute__((unused)) static void tap_skip(const char *what, const char *why)
{
	printf("ok %d - %s # SKIP %s\n", ++tap_count, what, why);
	fflush(stdout);
}

/* A check that fails today for a known reason (why): "# TODO", which a
 * TAP harness counts as a known failure, not a failure. */
__attribute__((format(printf, 3, 4), unused)) static void
tap_todo(bool ok, const char *why, const char *fmt, ...)
{
	char desc[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	printf("%sok %d - %s # TODO %s\n", ok ? "" : "not ", ++tap_count, desc,
	       why);
	fflush(stdout);
}

/* Nothing can be checked here (why): the plan says so; the exit status
 * for main, 77, is tests/run.sh's "skipped". */
__attribute__((unused)) static int tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	return 77;
}

/* A fixed plan, printed first: tap_done fails a run that made another
 * number of checks (one dropped on some path, or one too many). */
__attribute__((unused)) static void tap_plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

/* Prints the plan (unless tap_plan did); the exit status for main. A run
 * that asserted nothing failed: it did not get as far as its first
 * check. */
__attribute__((unused)) static int tap_done(void)
{
	if (tap_planned < 0)
		printf("1..%d\n", tap_count);
	else if (tap_planned != tap_count) {
		tap_diag("planned %d checks but ran %d", tap_planned,
			 tap_count);
		return 1;
	}
	return tap_failed || !tap_count ? 1 : 0;
}

/* The unit tests' assertions: a failure names its line. */
#define ok(cond, ...)                                                      \
	do {                                                               \
		if (!tap_ok(!!(cond), __VA_ARGS__))                        \
			tap_diag("  failed at %s:%d", __FILE__, __LINE__); \
	} while (0)

/* Two strings equal; on failure both are shown. */
#define is_str(a, b, ...)                                                \
	do {                                                             \
		const char *is_a_ = (a), *is_b_ = (b);                   \
		ok(is_a_ &&is_b_ && !strcmp(is_a_, is_b_), __VA_ARGS__); \
		if (!(is_a_ && is_b_ && !strcmp(is_a_, is_b_)))          \
			tap_diag("  got '%s', want '%s'",                \
				 is_a_ ? is_a_ : "(null)",               \
				 is_b_ ? is_b_ : "(null)");              \
	} while (0)

/* Two integers equal; on failure both are shown. */
#define is_int(a, b, ...)                                                \
	do {                                                             \
		long long is_a_ = (a), is_b_ = (b);                      \
		ok(is_a_ == is_b_, __VA_ARGS__);                         \
		if (is_a_ != is_b_)                                      \
			tap_diag("  got %lld, want %lld", is_a_, is_b_); \
	} while (0)

#endif /* SH_TEST_TAP_H */
