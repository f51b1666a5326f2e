// SPDX-License-Identifier: GPL-2.0-only
/* Typed JSON getters for the config parser; every error names its path. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config_parse.h"
#include "log.h"
#include "names.h"

static char last_error_path[256];

const char *config_last_error_path(void)
{
	return last_error_path;
}

int cfg_error(struct cfg_ctx *ctx, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	snprintf(last_error_path, sizeof(last_error_path), "%s", path);

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_error("invalid operator config %s: %s: %s", ctx->file, path, msg);
	return -EINVAL;
}

/*
 * json-c keeps strings with NUL but hands out C strings, so "a\u0000/.."
 * would silently become "a". Refuse NUL outright: raw, or as an escape
 * (an odd run of backslashes before 'u0000').
 */
static int check_no_nul(const char *what, const char *text, size_t len)
{
	size_t slashes = 0;

	for (size_t i = 0; i < len; i++) {
		if (!text[i]) {
			log_error("%.128s contains a NUL byte", what);
			return -EINVAL;
		}
		if (text[i] == 'u' && slashes % 2 && len - i > 4 &&
		    !memcmp(text + i + 1, "0000", 4)) {
			log_error(
				"%.128s contains a NUL character (\\u0000) in a string",
				what);
			return -EINVAL;
		}
		slashes = text[i] == '\\' ? slashes + 1 : 0;
	}
	return 0;
}

int cfg_parse_json(const char *what, const char *text, size_t len,
		   struct json_object **out)
{
	struct json_tokener *tok = json_tokener_new_ex(64);
	enum json_tokener_error jerr;
	struct json_object *obj;

	if (!tok)
		return -ENOMEM;
	if (check_no_nul(what, text, len)) {
		json_tokener_free(tok);
		return -EINVAL;
	}
	/* Operators' files must be real JSON, as any schema validator reads it. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!obj || jerr != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < len) {
		if (jerr == json_tokener_success)
			jerr = obj ? json_tokener_error_parse_unexpected :
				     json_tokener_continue;
		log_error("invalid JSON in %s at byte %zu: %s", what,
			  json_tokener_get_parse_end(tok),
			  jerr == json_tokener_continue ?
				  "unexpected end of input" :
				  json_tokener_error_desc(jerr));
		json_object_put(obj);
		json_tokener_free(tok);
		return -EINVAL;
	}
	json_tokener_free(tok);
	*out = obj;
	return 0;
}

static void join_path(char *buf, size_t len, const char *path, const char *key)
{
	if (path)
		snprintf(buf, len, "%s.%s", path, key);
	else
		snprintf(buf, len, "%s", key);
}

int cfg_check_object(struct cfg_ctx *ctx, struct json_object *obj,
		     const char *path, const char *const *keys)
{
	char where[256];

	if (!json_object_is_type(obj, json_type_object))
		return cfg_error(ctx, path ? path : "$", "must be an object");
	json_object_object_foreach(obj, key, val) {
		size_t i;
		const char *hint;

		(void)val;
		for (i = 0; keys[i] && strcmp(keys[i], key); i++)
			;
		if (keys[i])
			continue;
		join_path(where, sizeof(where), path, key);
		hint = names_closest(key, keys);
		return cfg_error(ctx, where, "unknown key%s%s%s",
				 hint ? " (did you mean '" : "",
				 hint ? hint : "", hint ? "'?)" : "");
	}
	return 0;
}

int cfg_get_typed(struct cfg_ctx *ctx, struct json_object *obj,
		  const char *path, const char *key, json_type type,
		  struct json_object **out)
{
	struct json_object *val;
	char where[256];

	*out = NULL;
	if (!json_object_object_get_ex(obj, key, &val))
		return 0;
	if (!json_object_is_type(val, type)) {
		join_path(where, sizeof(where), path, key);
		return cfg_error(ctx, where, "must be %s",
				 type == json_type_array   ? "an array" :
				 type == json_type_object  ? "an object" :
				 type == json_type_string  ? "a string" :
				 type == json_type_boolean ? "true or false" :
							     "an integer");
	}
	*out = val;
	return 0;
}

int cfg_get_bool(struct cfg_ctx *ctx, struct json_object *obj, const char *path,
		 const char *key, bool *out)
{
	struct json_object *val;
	int r = cfg_get_typed(ctx, obj, path, key, json_type_boolean, &val);

	if (!r && val)
		*out = json_object_get_boolean(val);
	return r;
}

int cfg_get_string(struct cfg_ctx *ctx, struct json_object *obj,
		   const char *path, const char *key, const char **out)
{
	struct json_object *val;
	int r = cfg_get_typed(ctx, obj, path, key, json_type_string, &val);

	if (!r && val)
		*out = json_object_get_string(val);
	return r;
}

int cfg_get_int(struct cfg_ctx *ctx, struct json_object *obj, const char *path,
		const char *key, long long min, long long max, long long *out,
		bool *present)
{
	struct json_object *val;
	char where[256];
	long long v;
	int r = cfg_get_typed(ctx, obj, path, key, json_type_int, &val);

	*present = false;
	if (r || !val)
		return r;
	errno = 0;
	v = json_object_get_int64(val);
	join_path(where, sizeof(where), path, key);
	/* json-c saturates what does not fit an int64, without errno. */
	if (v == INT64_MAX && json_object_get_uint64(val) > (uint64_t)INT64_MAX)
		errno = ERANGE;
	if (errno || v < min || v > max)
		return cfg_error(ctx, where, "out of range (%lld..%lld)", min,
				 max);
	*out = v;
	*present = true;
	return 0;
}
