// SPDX-License-Identifier: GPL-2.0-only
/*
 * number.c: a whole number in range or an error, as every numeric
 * annotation value, config value and command-line argument is read.
 *
 * Modules: `number.c`
 */
#include <errno.h>
#include <limits.h>

#include "lib/number.h"
#include "tap.h"

static void parses(const char *s, long long min, long long max, long long want)
{
	long long v = 12345;
	int r = number_parse(s, min, max, &v);

	ok(r == 0 && v == want, "'%s' in [%lld, %lld] is %lld (r=%d, got %lld)",
	   s, min, max, want, r, v);
}

static void refuses(const char *s, long long min, long long max, int want)
{
	long long v = 12345;
	int r = number_parse(s, min, max, &v);

	ok(r == want && v == 12345, "'%s' in [%lld, %lld] is %s, out untouched",
	   s ? s : "(null)", min, max, want == -EINVAL ? "-EINVAL" : "-ERANGE");
}

int main(void)
{
	parses("0", 0, 10, 0);
	parses("10", 0, 10, 10);
	parses("-5", -10, 10, -5);
	parses("0x10", 0, 100, 16);
	parses("010", 0, 100, 8); /* strtoll base 0: octal, as documented */
	parses("9223372036854775807", 0, LLONG_MAX, LLONG_MAX);
	parses("-9223372036854775808", LLONG_MIN, 0, LLONG_MIN);

	refuses(NULL, 0, 10, -EINVAL);
	refuses("", 0, 10, -EINVAL);
	refuses("12abc", 0, 100, -EINVAL);
	refuses("1 ", 0, 100, -EINVAL);
	refuses("1.5", 0, 100, -EINVAL);
	refuses("abc", 0, 100, -EINVAL);
	refuses("9223372036854775808", 0, LLONG_MAX, -EINVAL);
	refuses("11", 0, 10, -ERANGE);
	refuses("-1", 0, 10, -ERANGE);
	refuses("0x7fffffff", 0, 65535, -ERANGE);
	return tap_done();
}
