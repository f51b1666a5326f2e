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

#include "wiring/toml/toml_scalar.h"

struct json_object;

/* Parses text (len bytes, NUL bytes refused) into *out, a new object.
 * On error returns -EINVAL and says where in err: "line N: what". */
int toml_parse(const char *text, size_t len, struct json_object **out,
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

#endif /* SH_TOML_H */
