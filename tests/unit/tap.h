/* SPDX-License-Identifier: GPL-2.0-only */
/* The unit tests' assertions, on tests/lib/tap.h; a failure names its line. */
#ifndef SH_UNIT_TAP_H
#define SH_UNIT_TAP_H

#include <string.h>

#include "../lib/tap.h"

#define ok(cond, ...)                                                      \
	do {                                                               \
		if (!tap_ok(!!(cond), __VA_ARGS__))                        \
			tap_diag("  failed at %s:%d", __FILE__, __LINE__); \
	} while (0)

#define is_str(a, b, ...) ok((a) && (b) && !strcmp((a), (b)), __VA_ARGS__)

#endif /* SH_UNIT_TAP_H */
