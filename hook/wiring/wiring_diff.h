/* SPDX-License-Identifier: GPL-2.0-only */
/* A unified line diff, for `runtime configure --dry-run`. */
#ifndef SH_WIRING_DIFF_H
#define SH_WIRING_DIFF_H

#include <stdio.h>

/* "--- path" / "+++ path" and the changed lines with 3 lines of context
 * ("@@" hunks); old or new_text NULL: the file is made or removed. */
int wiring_diff_print(FILE *out, const char *old, const char *new_text,
		      const char *path);

#endif /* SH_WIRING_DIFF_H */
