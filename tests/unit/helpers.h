/* SPDX-License-Identifier: GPL-2.0-only */
/* Capturing the hook's one-line errors so tests can assert on them. */
#ifndef SH_UNIT_HELPERS_H
#define SH_UNIT_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "tap.h"

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

/* Parses an operator config as the hook does; a failure is reported. */
static inline int parse_config(const char *text, struct sh_config *cfg)
{
	struct sh_error err = { 0 };

	return reported(config_parse("t.json", text, strlen(text), cfg, &err),
			&err);
}

/* The same, with what it says on stderr kept in *said. */
static inline int parse_config_said(const char *text, struct sh_config *cfg,
				    const char **said)
{
	int r;

	capture_start();
	r = parse_config(text, cfg);
	*said = capture_end();
	return r;
}

/* Expects the config refused, with one error line that holds want. */
static inline void config_refused(const char *text, const char *want,
				  const char *what)
{
	struct sh_config cfg;
	const char *err;
	int r = parse_config_said(text, &cfg, &err);

	ok(r < 0 && strstr(err, want) && count_lines(err) == 1, "refuses %s",
	   what);
	if (r == 0)
		config_free(&cfg);
	else if (!strstr(err, want))
		printf("#   got: %s", err);
}

#endif /* SH_UNIT_HELPERS_H */
