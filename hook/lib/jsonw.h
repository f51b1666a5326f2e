/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one JSON writer: members added to a json-c object by type, so that
 * every output (status, explain, record, the attachment, nri.status)
 * spells a string, a number, a name-or-number or a null the same way.
 * After bpftool's json_writer.c, but over json-c's object model.
 */
#ifndef SH_JSONW_H
#define SH_JSONW_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

/* key: v, or key: null when v is NULL. */
void jsonw_str(struct json_object *o, const char *key, const char *v);
/* key: v, or key: null when v is NULL or "". */
void jsonw_str_or_null(struct json_object *o, const char *key, const char *v);
/* key: v, left out when v is NULL or "". */
void jsonw_str_set(struct json_object *o, const char *key, const char *v);
void jsonw_int(struct json_object *o, const char *key, int64_t v);
void jsonw_uint(struct json_object *o, const char *key, uint64_t v);
void jsonw_bool(struct json_object *o, const char *key, bool v);
/* key: "NAME" when the hook knows a name for the value, else the number. */
void jsonw_named(struct json_object *o, const char *key, const char *name,
		 int value);

#endif /* SH_JSONW_H */
