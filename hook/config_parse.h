/* SPDX-License-Identifier: GPL-2.0-only */
/* Internal to the config parser: typed getters that report a JSON path. */
#ifndef SH_CONFIG_PARSE_H
#define SH_CONFIG_PARSE_H

#include <stdbool.h>
#include <json-c/json.h>

#include "config.h"

struct cfg_ctx {
	const char *file;
};

int cfg_error(struct cfg_ctx *ctx, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int cfg_parse_json(const char *what, const char *text, size_t len,
		   struct json_object **out);
int cfg_check_object(struct cfg_ctx *ctx, struct json_object *obj,
		     const char *path, const char *const *keys);
int cfg_get_typed(struct cfg_ctx *ctx, struct json_object *obj,
		  const char *path, const char *key, json_type type,
		  struct json_object **out);
int cfg_get_bool(struct cfg_ctx *ctx, struct json_object *obj, const char *path,
		 const char *key, bool *out);
int cfg_get_string(struct cfg_ctx *ctx, struct json_object *obj,
		   const char *path, const char *key, const char **out);
int cfg_get_int(struct cfg_ctx *ctx, struct json_object *obj, const char *path,
		const char *key, long long min, long long max, long long *out,
		bool *present);
int parse_opt_lists(struct cfg_ctx *ctx, struct json_object *obj,
		    const char *policy, struct sh_policy *pol);
/* on_shared_cgroup and on_override_program (config_cgroup.c). */
int parse_cgroup_settings(struct cfg_ctx *ctx, struct json_object *root,
			  struct sh_config *cfg);
int parse_policies(struct cfg_ctx *ctx, struct json_object *obj,
		   struct sh_config *cfg);

#endif /* SH_CONFIG_PARSE_H */
