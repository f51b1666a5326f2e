/* SPDX-License-Identifier: GPL-2.0-only */
/* The config parser's typed JSON getters: every error names its path. */
#ifndef SH_CONFIG_JSON_H
#define SH_CONFIG_JSON_H

#include <stdbool.h>
#include <json-c/json.h>

#include "config/config_types.h"
#include "lib/error.h"

#define SH_CONFIG_PATH_MAX 256 /* a JSON path in an error */

struct config_ctx {
	const char *file;
	struct sh_error *err;
};

/* Fills the error "invalid operator config FILE: PATH: ..."; -EINVAL. */
int config_json_error(struct config_ctx *ctx, const char *path, const char *fmt,
		      ...) __attribute__((format(printf, 3, 4)));
/* "path.key", or "key" at the top (path NULL). */
void config_json_join(char *buf, size_t len, const char *path, const char *key);
/* An object with no key but these (NULL-terminated). */
int config_json_check_object(struct config_ctx *ctx, struct json_object *obj,
			     const char *path, const char *const *keys);
/* *ret is NULL when the key is absent, else a value of that type. */
int config_json_get_typed(struct config_ctx *ctx, struct json_object *obj,
			  const char *path, const char *key, json_type type,
			  struct json_object **ret);
int config_json_get_bool(struct config_ctx *ctx, struct json_object *obj,
			 const char *path, const char *key, bool *ret);
int config_json_get_string(struct config_ctx *ctx, struct json_object *obj,
			   const char *path, const char *key, const char **ret);
int config_json_get_int(struct config_ctx *ctx, struct json_object *obj,
			const char *path, const char *key, long long min,
			long long max, long long *ret, bool *present);
/* One of the names (NULL-terminated), as its index; *ret unchanged when
 * the key is absent. */
int config_json_get_choice(struct config_ctx *ctx, struct json_object *obj,
			   const char *path, const char *key,
			   const char *const *names, int *ret);

/* A member of a flat config object, and where its value goes. */
struct config_json_member {
	const char *key;
	json_type type; /* boolean, string or array */
	void *out; /* bool *, const char ** or struct json_object ** */
};

#define CONFIG_JSON_MEMBERS_MAX 8

/* An object with no member but these (ended by a NULL key, at most
 * CONFIG_JSON_MEMBERS_MAX), each read in order; an absent one leaves its
 * out as it was (an array's: NULL). */
int config_json_read_members(struct config_ctx *ctx, struct json_object *obj,
			     const char *path,
			     const struct config_json_member *members);

#endif /* SH_CONFIG_JSON_H */
