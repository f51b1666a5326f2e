/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TOML, as the runtimes' own config files use it (containerd's
 * config.toml, its drop-ins and `containerd config dump`; CRI-O's
 * crio.conf and crio.conf.d), read into json-c objects and written back:
 * tables are objects (insertion order kept), arrays of tables arrays of
 * objects, strings strings, integers int64, floats doubles that keep their
 * text, booleans booleans. Dates and times, which no runtime config
 * uses, are refused rather than guessed. Debian 12 packages no TOML
 * library for C.
 */
#ifndef SH_TOML_H
#define SH_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct json_object;

/*
 * The TOML reader's cursor and its scalars: strings in their four forms,
 * integers and floats (toml.c builds tables, arrays and keys on them).
 */

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
/* A string at the cursor ('"' or '\'') into *ret (malloc'd). */
int toml_scalar_string(struct toml_cursor *c, char **ret);
/* An integer or a float at the cursor; dates and times are refused. */
int toml_scalar_number(struct toml_cursor *c, struct json_object **ret);

/* Parses text (len bytes, NUL bytes refused) into *ret, a new object.
 * On error returns -EINVAL and says where in err: "line N: what". */
int toml_parse(const char *text, size_t len, struct json_object **ret,
	       char err[SH_TOML_ERR_MAX]);

/* The object at a path of keys (NULL-terminated), or NULL. */
struct json_object *toml_get(struct json_object *table,
			     const char *const *keys);

/* A table's key: true only when it is set and true (json-c's boolean
 * reading of other types). */
bool toml_flag(struct json_object *table, const char *key);
/* A table's key as text into buf, def when it is absent or empty. */
void toml_text(struct json_object *table, const char *key, const char *def,
	       char *buf, size_t len);

/* TOML out of json-c objects shaped as toml_parse() reads them. */

/*
 * Writes table as a TOML document: its plain keys, then each sub-table
 * under a [header] (an empty one too, so that it exists), each array of
 * tables as [[header]]s. Keys keep their order; floats their text.
 * -EINVAL for what TOML cannot hold (null, a non-object table).
 */
int toml_write_doc(FILE *out, struct json_object *table);
/* header (comment lines) and the document, as malloc'd text, or NULL. */
char *toml_write_text(const char *header, struct json_object *table);

#endif /* SH_TOML_H */
