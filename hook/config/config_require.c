// SPDX-License-Identifier: GPL-2.0-only
/*
 * require_annotations: the runtime handlers (Kubernetes RuntimeClasses)
 * whose only job is to carry sockopt-hook.io/ annotations to the hook, so
 * that a container under one of them with none of our keys shows a node
 * that drops them (containerd without pod_annotations) or a pod that
 * forgot them. require.c applies it; this file only parses it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_require.h"

#define PATH_HANDLERS "require_annotations.runtime_handlers"

/* RFC 1123 label, as the RuntimeClass API validates handler. */
static bool handler_name(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > SH_HANDLER_NAME_MAX || s[0] == '-' ||
	    s[len - 1] == '-')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == len;
}

static int check_handler(struct config_ctx *ctx, const struct sh_require *req,
			 struct json_object *item, size_t i)
{
	char where[SH_CONFIG_PATH_MAX];
	const char *name = json_object_get_string(item);

	snprintf(where, sizeof(where), "%s[%zu]", PATH_HANDLERS, i);
	if (!json_object_is_type(item, json_type_string))
		return config_json_error(ctx, where, "must be a string");
	if (!handler_name(name))
		return config_json_error(
			ctx, where,
			"'%.64s' is not a runtime handler name (a RuntimeClass handler: lowercase letters, digits and '-', not first or last, at most %d)",
			name, SH_HANDLER_NAME_MAX);
	for (size_t j = 0; j < req->nr_handlers; j++)
		if (!strcmp(req->handlers[j], name))
			return config_json_error(
				ctx, where, "'%.64s' is listed twice", name);
	return 0;
}

static int parse_handlers(struct config_ctx *ctx, struct json_object *arr,
			  struct sh_require *req)
{
	size_t n = arr ? json_object_array_length(arr) : 0;

	if (n == 0)
		return config_json_error(
			ctx, PATH_HANDLERS,
			"needs at least one runtime handler (or require_annotations.nri: true; remove require_annotations to turn it off)");
	req->handlers = calloc(n, sizeof(char *));
	if (!req->handlers)
		return error_set(ctx->err, -ENOMEM, "out of memory reading %s",
				 ctx->file);
	for (size_t i = 0; i < n; i++) {
		struct json_object *item = json_object_array_get_idx(arr, i);
		int r = check_handler(ctx, req, item, i);

		if (r)
			return r;
		req->handlers[req->nr_handlers++] =
			json_object_get_string(item);
	}
	return 0;
}

int config_require_parse(struct config_ctx *ctx, struct json_object *obj,
			 struct sh_config *cfg)
{
	static const char *const keys[] = { "runtime_handlers", "nri",
					    "on_missing", NULL };
	static const char *const actions[] = { "refuse", "warn", NULL };
	struct sh_require *req = &cfg->require;
	struct json_object *arr = NULL;
	int action = ON_MISSING_REFUSE;
	int r;

	r = config_json_check_object(ctx, obj, "require_annotations", keys);
	if (r)
		goto out;
	r = config_json_get_bool(ctx, obj, "require_annotations", "nri",
				 &req->nri);
	if (r)
		goto out;
	r = config_json_get_typed(ctx, obj, "require_annotations",
				  "runtime_handlers", json_type_array, &arr);
	if (r)
		goto out;
	/* nri alone is a complete setting; otherwise a handler is needed */
	if (arr || !req->nri) {
		r = parse_handlers(ctx, arr, req);
		if (r)
			goto out;
	}
	r = config_json_get_choice(ctx, obj, "require_annotations",
				   "on_missing", actions, &action);
out:
	/* The default stands where the value was not read. */
	req->on_missing = action;
	return r;
}

bool config_require_handler(const struct sh_config *cfg, const char *handler)
{
	for (size_t i = 0; i < cfg->require.nr_handlers; i++)
		if (!strcmp(cfg->require.handlers[i], handler))
			return true;
	return false;
}
