/* SPDX-License-Identifier: GPL-2.0-only */
/* Capturing the hook's one-line errors so tests can assert on them. */
#ifndef SH_UNIT_HELPERS_H
#define SH_UNIT_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

static char captured[4096];
static int saved_stderr = -1;
static FILE *capture_file;

static inline void capture_start(void)
{
	fflush(stderr);
	capture_file = tmpfile();
	saved_stderr = dup(STDERR_FILENO);
	dup2(fileno(capture_file), STDERR_FILENO);
}

/* Returns what was written to stderr since capture_start(). */
static inline const char *capture_end(void)
{
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	rewind(capture_file);
	n = fread(captured, 1, sizeof(captured) - 1, capture_file);
	captured[n] = '\0';
	fclose(capture_file);
	return captured;
}

/* A failed call reported as the hook's commands report it: one line. */
static inline int reported(int r, const struct sh_error *err)
{
	if (r)
		error_report(err, r);
	return r;
}

static inline int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#endif /* SH_UNIT_HELPERS_H */
