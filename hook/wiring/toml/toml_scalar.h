/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The TOML reader's cursor and its scalars: strings in their four forms,
 * integers and floats (toml.c builds tables, arrays and keys on them).
 */
#ifndef SH_TOML_SCALAR_H
#define SH_TOML_SCALAR_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;

/* An error message of the TOML reader: "line N: what". */
#define SH_TOML_ERR_MAX 160

struct toml_cursor {
	const char *p, *end;
	int line;
	char *err; /* SH_TOML_ERR_MAX bytes: the first error, "line N: ..." */
};

/* Fills c->err unless it holds an error already; returns -EINVAL. */
int toml_scalar_fail(struct toml_cursor *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The byte ahead bytes on, or '\0' past the end. */
char toml_scalar_peek(const struct toml_cursor *c, size_t ahead);
void toml_scalar_skip_blank(struct toml_cursor *c);
/* Consumes a newline (LF or CRLF); false if there is none here. */
bool toml_scalar_newline(struct toml_cursor *c);
/* A byte of a bare key: A-Z a-z 0-9 _ - */
bool toml_scalar_bare_char(char ch);
/* A string at the cursor ('"' or '\'') into *out (malloc'd). */
int toml_scalar_string(struct toml_cursor *c, char **out);
/* An integer or a float at the cursor; dates and times are refused. */
int toml_scalar_number(struct toml_cursor *c, struct json_object **out);

#endif /* SH_TOML_SCALAR_H */
