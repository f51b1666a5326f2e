/* SPDX-License-Identifier: GPL-2.0-only */
/* Minimal TAP producer for the C unit tests. */
#ifndef SH_UNIT_TAP_H
#define SH_UNIT_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

#define ok(cond, ...)                                                        \
	do {                                                                 \
		int _ok = !!(cond);                                          \
		tap_count++;                                                 \
		if (!_ok)                                                    \
			tap_failed++;                                        \
		printf("%sok %d - ", _ok ? "" : "not ", tap_count);          \
		printf(__VA_ARGS__);                                         \
		printf("\n");                                                \
		if (!_ok)                                                    \
			printf("#   failed at %s:%d\n", __FILE__, __LINE__); \
	} while (0)

#define is_str(a, b, ...) ok((a) && (b) && !strcmp((a), (b)), __VA_ARGS__)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif /* SH_UNIT_TAP_H */
