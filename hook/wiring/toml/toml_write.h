/* SPDX-License-Identifier: GPL-2.0-only */
/* TOML out of json-c objects shaped as toml.h reads them. */
#ifndef SH_TOML_WRITE_H
#define SH_TOML_WRITE_H

#include <stdio.h>

struct json_object;

/*
 * Writes table as a TOML document: its plain keys, then each sub-table
 * under a [header] (an empty one too, so that it exists), each array of
 * tables as [[header]]s. Keys keep their order; floats their text.
 * -EINVAL for what TOML cannot hold (null, a non-object table).
 */
int toml_write_doc(FILE *out, struct json_object *table);
/* header (comment lines) and the document, as malloc'd text, or NULL. */
char *toml_write_text(const char *header, struct json_object *table);

#endif /* SH_TOML_WRITE_H */
