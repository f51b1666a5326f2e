// SPDX-License-Identifier: GPL-2.0-only
/* Named policies: socket rules; the rule lists are in config_rules.c. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_json.h"
#include "config/config_policy.h"
#include "config/config_rules.h"
#include "config/names.h"

static int parse_sock_field(struct config_ctx *ctx, struct json_object *rule,
			    const char *path, const char *key,
			    int (*lookup)(const char *, int *), __s32 *out)
{
	const char *name = NULL, *hint;
	char where[SH_CONFIG_PATH_MAX];
	int value, r;

	*out = SH_ANY;
	r = config_json_get_string(ctx, rule, path, key, &name);
	if (r || !name)
		return r;
	if (lookup(name, &value) == 0) {
		*out = value;
		return 0;
	}
	snprintf(where, sizeof(where), "%s.%s", path, key);
	/* A real family other than AF_INET/AF_INET6 needs no spelling hint. */
	hint = strncmp(name, "AF_", 3) ? names_suggest(name) : NULL;
	if (lookup == names_family)
		return config_json_error(
			ctx, where,
			"unsupported family '%.64s': sock_create only sees AF_INET and AF_INET6%s%s%s",
			name, hint ? " (did you mean '" : "", hint ? hint : "",
			hint ? "'?)" : "");
	return config_json_error(ctx, where, "unknown name '%.64s'%s%s%s", name,
				 hint ? " (did you mean '" : "",
				 hint ? hint : "", hint ? "'?)" : "");
}

static int parse_deny_rule(struct config_ctx *ctx, struct json_object *rule,
			   const char *path, struct sh_sock_rule *out)
{
	static const char *const keys[] = { "family", "type", "protocol",
					    NULL };
	int r = config_json_check_object(ctx, rule, path, keys);

	if (r)
		return r;
	r = parse_sock_field(ctx, rule, path, "family", names_family,
			     &out->family);
	if (r)
		return r;
	r = parse_sock_field(ctx, rule, path, "type", names_type, &out->type);
	if (r)
		return r;
	r = parse_sock_field(ctx, rule, path, "protocol", names_protocol,
			     &out->protocol);
	if (r)
		return r;
	if (out->family == SH_ANY && out->type == SH_ANY &&
	    out->protocol == SH_ANY)
		return config_json_error(
			ctx, path,
			"needs at least one of family, type, protocol");
	return 0;
}

static int parse_deny_list(struct config_ctx *ctx, struct json_object *arr,
			   const char *path, struct sh_policy *pol)
{
	size_t n = json_object_array_length(arr);
	char where[SH_CONFIG_PATH_MAX];

	if (n > SH_MAX_SOCKET_RULES)
		return config_json_error(ctx, path,
					 "too many rules (%zu, at most %d)", n,
					 SH_MAX_SOCKET_RULES);
	for (size_t i = 0; i < n; i++) {
		snprintf(where, sizeof(where), "%s[%zu]", path, i);
		int r = parse_deny_rule(ctx, json_object_array_get_idx(arr, i),
					where, &pol->deny[i]);

		if (r)
			return r;
	}
	pol->nr_deny = n;
	return 0;
}

static int parse_socket(struct config_ctx *ctx, struct json_object *obj,
			const char *path, struct sh_policy *pol)
{
	static const char *const keys[] = { "deny", "mark", "priority", NULL };
	struct json_object *deny;
	char where[SH_CONFIG_PATH_MAX];
	long long v;
	int r;

	r = config_json_check_object(ctx, obj, path, keys);
	if (r)
		return r;
	r = config_json_get_int(ctx, obj, path, "mark", 0, UINT_MAX, &v,
				&pol->has_mark);
	if (r)
		return r;
	if (pol->has_mark)
		pol->mark = (__u32)v;
	r = config_json_get_int(ctx, obj, path, "priority", 0, UINT_MAX, &v,
				&pol->has_priority);
	if (r)
		return r;
	if (pol->has_priority)
		pol->priority = (__u32)v;
	r = config_json_get_typed(ctx, obj, path, "deny", json_type_array,
				  &deny);
	if (r || !deny)
		return r;
	snprintf(where, sizeof(where), "%s.deny", path);
	return parse_deny_list(ctx, deny, where, pol);
}

static int parse_default(struct config_ctx *ctx, struct json_object *obj,
			 const char *path, struct sh_policy *pol)
{
	static const char *const modes[] = { "allow", "deny", NULL };
	int mode = 0;
	int r = config_json_get_choice(ctx, obj, path, "default", modes, &mode);

	pol->default_deny = mode == 1;
	return r;
}

/*
 * "mode": "audit" runs the programs but applies nothing (audit mode).
 * Audit mode lifts the policy, so only the operator's word gives it to a
 * workload: "audit_by_annotation": true lets a workload that may name
 * this policy (annotations.allow_policies) run under it; it means nothing
 * without "mode": "audit", and a typo there must not pass.
 */
static int parse_mode(struct config_ctx *ctx, struct json_object *obj,
		      const char *path, struct sh_policy *pol)
{
	static const char *const modes[] = { "enforce", "audit", NULL };
	char where[SH_CONFIG_PATH_MAX];
	int mode = 0;
	int r = config_json_get_choice(ctx, obj, path, "mode", modes, &mode);

	pol->audit = mode == 1;
	if (r)
		return r;
	r = config_json_get_bool(ctx, obj, path, "audit_by_annotation",
				 &pol->audit_by_annotation);
	if (r)
		return r;
	if (pol->audit_by_annotation && !pol->audit) {
		snprintf(where, sizeof(where), "%s.audit_by_annotation", path);
		return config_json_error(
			ctx, where,
			"is true but the policy's mode is not 'audit'");
	}
	return 0;
}

static int parse_policy(struct config_ctx *ctx, const char *name,
			struct json_object *obj, struct sh_policy *pol)
{
	static const char *const keys[] = {
		"bypass_prot_mem",     "socket",  "setsockopt",
		"getsockopt",	       "default", "mode",
		"audit_by_annotation", NULL
	};
	struct json_object *sub;
	char path[SH_CONFIG_PATH_MAX];
	int r;

	snprintf(path, sizeof(path), "policies.%.64s", name);
	pol->name = name;
	r = config_json_check_object(ctx, obj, path, keys);
	if (r)
		return r;
	if (json_object_object_get_ex(obj, "bypass_prot_mem", &sub)) {
		pol->has_bypass = true;
		r = config_json_get_bool(ctx, obj, path, "bypass_prot_mem",
					 &pol->bypass);
		if (r)
			return r;
	}
	r = parse_default(ctx, obj, path, pol);
	if (r)
		return r;
	r = parse_mode(ctx, obj, path, pol);
	if (r)
		return r;
	if (json_object_object_get_ex(obj, "socket", &sub)) {
		snprintf(path, sizeof(path), "policies.%.64s.socket", name);
		r = parse_socket(ctx, sub, path, pol);
		if (r)
			return r;
	}
	return config_rules_parse(ctx, obj, name, pol);
}

static int check_policy_name(struct config_ctx *ctx, const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > SH_POLICY_NAME_MAX)
		return config_json_error(
			ctx, "policies",
			"policy names must be 1 to 64 characters");
	for (const char *p = name; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		    *p == '.')
			continue;
		return config_json_error(
			ctx, "policies",
			"policy name '%.64s' may only use letters, digits, '-', '_' and '.'",
			name);
	}
	return 0;
}

int config_policy_parse(struct config_ctx *ctx, struct json_object *obj,
			struct sh_config *cfg)
{
	size_t n, i = 0;

	if (!json_object_is_type(obj, json_type_object))
		return config_json_error(ctx, "policies", "must be an object");
	n = json_object_object_length(obj);
	cfg->policies = calloc(n ? n : 1, sizeof(*cfg->policies));
	if (!cfg->policies)
		return error_set(ctx->err, -ENOMEM, "out of memory reading %s",
				 ctx->file);
	json_object_object_foreach(obj, name, val) {
		int r = check_policy_name(ctx, name);

		cfg->nr_policies = i + 1;
		if (r)
			return r;
		r = parse_policy(ctx, name, val, &cfg->policies[i++]);
		if (r)
			return r;
	}
	return 0;
}
