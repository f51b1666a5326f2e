// SPDX-License-Identifier: GPL-2.0-only
/* Checked conversions: the whole string, in range, or an error. */
#include <errno.h>
#include <stdlib.h>

#include "lib/number.h"

int number_parse(const char *s, long long min, long long max, long long *ret)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}
