// SPDX-License-Identifier: GPL-2.0-only
/* Typed JSON getters for the config parser; every error names its path. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config/config_json.h"
#include "config/names.h"

int config_json_error(struct config_ctx *ctx, const char *path, const char *fmt,
		      ...)
{
	char msg[SH_ERROR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_at(ctx->err, path, "invalid operator config %s: %s: %s",
			ctx->file, path, msg);
}

void config_json_join(char *buf, size_t len, const char *path, const char *key)
{
	if (path)
		snprintf(buf, len, "%s.%s", path, key);
	else
		snprintf(buf, len, "%s", key);
}

int config_json_check_object(struct config_ctx *ctx, struct json_object *obj,
			     const char *path, const char *const *keys)
{
	char where[SH_CONFIG_PATH_MAX];

	if (!json_object_is_type(obj, json_type_object))
		return config_json_error(ctx, path ? path : "$",
					 "must be an object");
	json_object_object_foreach(obj, key, val) {
		size_t i;
		const char *hint;

		(void)val;
		for (i = 0; keys[i] && strcmp(keys[i], key); i++)
			;
		if (keys[i])
			continue;
		config_json_join(where, sizeof(where), path, key);
		hint = names_closest(key, keys);
		return config_json_error(ctx, where, "unknown key%s%s%s",
					 hint ? " (did you mean '" : "",
					 hint ? hint : "", hint ? "'?)" : "");
	}
	return 0;
}

static const char *type_text(json_type type)
{
	switch (type) {
	case json_type_array:
		return "an array";
	case json_type_object:
		return "an object";
	case json_type_string:
		return "a string";
	case json_type_boolean:
		return "true or false";
	default:
		return "an integer";
	}
}

int config_json_get_typed(struct config_ctx *ctx, struct json_object *obj,
			  const char *path, const char *key, json_type type,
			  struct json_object **ret)
{
	struct json_object *val;
	char where[SH_CONFIG_PATH_MAX];

	*ret = NULL;
	if (!json_object_object_get_ex(obj, key, &val))
		return 0;
	if (!json_object_is_type(val, type)) {
		config_json_join(where, sizeof(where), path, key);
		return config_json_error(ctx, where, "must be %s",
					 type_text(type));
	}
	*ret = val;
	return 0;
}

int config_json_get_bool(struct config_ctx *ctx, struct json_object *obj,
			 const char *path, const char *key, bool *ret)
{
	struct json_object *val;
	int r = config_json_get_typed(ctx, obj, path, key, json_type_boolean,
				      &val);

	if (!r && val)
		*ret = json_object_get_boolean(val);
	return r;
}

int config_json_get_string(struct config_ctx *ctx, struct json_object *obj,
			   const char *path, const char *key, const char **ret)
{
	struct json_object *val;
	int r = config_json_get_typed(ctx, obj, path, key, json_type_string,
				      &val);

	if (!r && val)
		*ret = json_object_get_string(val);
	return r;
}

int config_json_get_int(struct config_ctx *ctx, struct json_object *obj,
			const char *path, const char *key, long long min,
			long long max, long long *ret, bool *present)
{
	struct json_object *val;
	char where[SH_CONFIG_PATH_MAX];
	long long v;
	int r = config_json_get_typed(ctx, obj, path, key, json_type_int, &val);

	*present = false;
	if (r || !val)
		return r;
	errno = 0;
	v = json_object_get_int64(val);
	config_json_join(where, sizeof(where), path, key);
	/* json-c saturates what does not fit an int64, without errno. */
	if (v == INT64_MAX && json_object_get_uint64(val) > (uint64_t)INT64_MAX)
		errno = ERANGE;
	if (errno || v < min || v > max)
		return config_json_error(ctx, where,
					 "out of range (%lld..%lld)", min, max);
	*ret = v;
	*present = true;
	return 0;
}

/* "'a', 'b' or 'c'" */
static void list_names(char *buf, size_t len, const char *const *names)
{
	size_t used = 0, n = 0;

	while (names[n])
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++)
		used += snprintf(buf + used, len - used, "%s'%s'",
				 i == 0	    ? "" :
				 i + 1 == n ? " or " :
					      ", ",
				 names[i]);
}

int config_json_get_choice(struct config_ctx *ctx, struct json_object *obj,
			   const char *path, const char *key,
			   const char *const *names, int *ret)
{
	char where[SH_CONFIG_PATH_MAX], expected[SH_CONFIG_PATH_MAX];
	const char *v = NULL;
	int r = config_json_get_string(ctx, obj, path, key, &v);

	if (r || !v)
		return r;
	for (int i = 0; names[i]; i++) {
		if (!strcmp(v, names[i])) {
			*ret = i;
			return 0;
		}
	}
	config_json_join(where, sizeof(where), path, key);
	list_names(expected, sizeof(expected), names);
	return config_json_error(
		ctx, where, "unknown value '%.64s' (expected %s)", v, expected);
}

static int read_member(struct config_ctx *ctx, struct json_object *obj,
		       const char *path, const struct config_json_member *m)
{
	if (m->type == json_type_boolean)
		return config_json_get_bool(ctx, obj, path, m->key, m->out);
	if (m->type == json_type_string)
		return config_json_get_string(ctx, obj, path, m->key, m->out);
	return config_json_get_typed(ctx, obj, path, m->key, m->type, m->out);
}

int config_json_read_members(struct config_ctx *ctx, struct json_object *obj,
			     const char *path,
			     const struct config_json_member *members)
{
	const char *keys[CONFIG_JSON_MEMBERS_MAX + 1] = { 0 };
	size_t n = 0;
	int r;

	while (n < CONFIG_JSON_MEMBERS_MAX && members[n].key) {
		keys[n] = members[n].key;
		n++;
	}
	r = config_json_check_object(ctx, obj, path, keys);
	if (r)
		return r;
	for (size_t i = 0; i < n; i++) {
		r = read_member(ctx, obj, path, &members[i]);
		if (r)
			return r;
	}
	return 0;
}
