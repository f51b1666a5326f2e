// SPDX-License-Identifier: GPL-2.0-only
/* The one JSON writer: see jsonw.h. */
#include "lib/jsonw.h"

void jsonw_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

void jsonw_str_or_null(struct json_object *o, const char *key, const char *v)
{
	jsonw_str(o, key, v && *v ? v : NULL);
}

void jsonw_str_set(struct json_object *o, const char *key, const char *v)
{
	if (v && v[0])
		json_object_object_add(o, key, json_object_new_string(v));
}

void jsonw_int(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

void jsonw_uint(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

void jsonw_bool(struct json_object *o, const char *key, bool v)
{
	json_object_object_add(o, key, json_object_new_boolean(v));
}

void jsonw_named(struct json_object *o, const char *key, const char *name,
		 int value)
{
	if (name)
		jsonw_str(o, key, name);
	else
		jsonw_int(o, key, value);
}
