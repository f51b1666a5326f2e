// SPDX-License-Identifier: GPL-2.0-only
/* setsockopt/getsockopt rule lists: names, actions and value checks. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_parse.h"
#include "names.h"

#define PATH_LEN 256

struct rule_ctx {
	struct cfg_ctx *cfg;
	const char *path;
	bool is_get;
	const struct sh_option_name *opt;
};

static int hinted(struct rule_ctx *rc, const char *key, const char *what,
		  const char *name)
{
	const char *hint = names_suggest(name);
	char where[PATH_LEN];

	snprintf(where, sizeof(where), "%s.%s", rc->path, key);
	return cfg_error(rc->cfg, where, "unknown %s '%.64s'%s%s%s", what, name,
			 hint ? " (did you mean '" : "", hint ? hint : "",
			 hint ? "'?)" : "");
}

/* A level or option is a symbolic name or a non-negative integer. */
static int get_name_or_number(struct rule_ctx *rc, struct json_object *rule,
			      const char *key, char *buf, size_t len)
{
	struct json_object *val;
	char where[PATH_LEN];

	snprintf(where, sizeof(where), "%s.%s", rc->path, key);
	if (!json_object_object_get_ex(rule, key, &val))
		return cfg_error(rc->cfg, where, "is required");
	if (json_object_is_type(val, json_type_string)) {
		if ((size_t)json_object_get_string_len(val) >= len)
			return cfg_error(rc->cfg, where, "is too long");
		snprintf(buf, len, "%s", json_object_get_string(val));
		return 0;
	}
	if (json_object_is_type(val, json_type_int) &&
	    json_object_get_int64(val) >= 0 &&
	    json_object_get_int64(val) <= INT_MAX) {
		snprintf(buf, len, "%lld",
			 (long long)json_object_get_int64(val));
		return 0;
	}
	return cfg_error(rc->cfg, where,
			 "must be a symbolic name or a non-negative integer");
}

static int parse_target(struct rule_ctx *rc, struct json_object *rule,
			struct sh_rule_entry *out)
{
	char level_name[80], opt_name[80], where[PATH_LEN];
	int level, r;

	if (get_name_or_number(rc, rule, "level", level_name,
			       sizeof(level_name)) ||
	    get_name_or_number(rc, rule, "option", opt_name, sizeof(opt_name)))
		return -EINVAL;
	if (names_level(level_name, &level))
		return hinted(rc, "level", "level", level_name);
	r = names_option(level, opt_name, &rc->opt);
	if (r == -ENOENT)
		return hinted(rc, "option", "option", opt_name);
	snprintf(where, sizeof(where), "%s.option", rc->path);
	if (r == -EXDEV)
		return cfg_error(rc->cfg, where,
				 "'%.64s' is not an option of level %.64s",
				 opt_name, level_name);
	out->option_name = rc->opt->name;
	out->key.level = level;
	out->key.optname = rc->opt->optname;
	return 0;
}

static int parse_action(struct rule_ctx *rc, struct json_object *rule,
			__u32 *action)
{
	static const char *const names[] = { "allow", "deny", "clamp",
					     "force" };
	const char *name = NULL;
	char where[PATH_LEN];

	snprintf(where, sizeof(where), "%s.action", rc->path);
	if (cfg_get_string(rc->cfg, rule, rc->path, "action", &name))
		return -EINVAL;
	if (!name)
		return cfg_error(rc->cfg, where, "is required");
	for (__u32 i = 0; i < 4; i++) {
		if (strcmp(name, names[i]))
			continue;
		if (rc->is_get && (i == 0 || i == 2))
			break;
		*action = i == 3 ? SH_ACTION_FORCE_INT : i;
		return 0;
	}
	return cfg_error(
		rc->cfg, where, "unknown action '%.64s' (expected %s)", name,
		rc->is_get ? "deny or force" : "allow, deny, clamp or force");
}

static bool is_int_option(const struct sh_option_name *opt)
{
	return opt->kind == OPT_INT || opt->kind == OPT_UNKNOWN;
}

static int parse_clamp(struct rule_ctx *rc, struct json_object *rule,
		       struct sh_opt_rule *out)
{
	bool has_min, has_max;
	long long min = INT_MIN, max = INT_MAX;

	if (!is_int_option(rc->opt))
		return cfg_error(rc->cfg, rc->path,
				 "clamp needs an int option, and %s is not one",
				 rc->opt->name);
	if (cfg_get_int(rc->cfg, rule, rc->path, "min", INT_MIN, INT_MAX, &min,
			&has_min) ||
	    cfg_get_int(rc->cfg, rule, rc->path, "max", INT_MIN, INT_MAX, &max,
			&has_max))
		return -EINVAL;
	if (!has_min && !has_max)
		return cfg_error(rc->cfg, rc->path,
				 "clamp needs 'min', 'max' or both");
	if (min > max)
		return cfg_error(rc->cfg, rc->path,
				 "min (%lld) is greater than max (%lld)", min,
				 max);
	out->min = (__s32)min;
	out->max = (__s32)max;
	return 0;
}

static int force_string(struct rule_ctx *rc, struct json_object *val,
			struct sh_opt_rule *out)
{
	const char *s = json_object_get_string(val);
	size_t len = strlen(s);
	char where[PATH_LEN];

	snprintf(where, sizeof(where), "%s.value", rc->path);
	if (rc->opt->kind != OPT_STRING && rc->opt->kind != OPT_UNKNOWN)
		return cfg_error(rc->cfg, where,
				 "a string value on %s, which takes an int",
				 rc->opt->name);
	if (len == 0 || len >= SH_OPT_VALUE_MAX)
		return cfg_error(rc->cfg, where, "string must be 1 to %d bytes",
				 SH_OPT_VALUE_MAX - 1);
	out->action = SH_ACTION_FORCE_BYTES;
	out->value_len = len;
	memcpy(out->value, s, len);
	return 0;
}

static int parse_force(struct rule_ctx *rc, struct json_object *rule,
		       struct sh_opt_rule *out)
{
	struct json_object *val;
	char where[PATH_LEN];
	__s32 v32;
	long long v;
	bool present;

	snprintf(where, sizeof(where), "%s.value", rc->path);
	if (!json_object_object_get_ex(rule, "value", &val))
		return cfg_error(rc->cfg, where, "is required for force");
	if (json_object_is_type(val, json_type_string))
		return force_string(rc, val, out);
	if (!json_object_is_type(val, json_type_int))
		return cfg_error(rc->cfg, where,
				 "must be an integer or a string");
	if (!is_int_option(rc->opt))
		return cfg_error(rc->cfg, where,
				 "an int value on %s, which takes %s",
				 rc->opt->name,
				 rc->opt->kind == OPT_STRING ? "a string" :
							       "a structure");
	if (cfg_get_int(rc->cfg, rule, rc->path, "value", INT_MIN, INT_MAX, &v,
			&present))
		return -EINVAL;
	v32 = (__s32)v;
	out->value_len = sizeof(v32);
	memcpy(out->value, &v32, sizeof(v32));
	return 0;
}

static int parse_rule(struct rule_ctx *rc, struct json_object *rule,
		      struct sh_rule_entry *out)
{
	static const char *const keys[] = { "level", "option", "action", "min",
					    "max",   "value",  NULL };
	static const char *const plain[] = { "level", "option", "action",
					     NULL };
	static const char *const clamp[] = { "level", "option", "action",
					     "min",   "max",	NULL };
	static const char *const force[] = { "level", "option", "action",
					     "value", NULL };
	const char *const *allowed[] = { plain, plain, clamp, force };
	int r;

	r = cfg_check_object(rc->cfg, rule, rc->path, keys);
	if (!r)
		r = parse_target(rc, rule, out);
	if (!r)
		r = parse_action(rc, rule, &out->rule.action);
	if (!r)
		r = cfg_check_object(rc->cfg, rule, rc->path,
				     allowed[out->rule.action]);
	if (r)
		return r;
	if (out->rule.action == SH_ACTION_CLAMP)
		return parse_clamp(rc, rule, &out->rule);
	if (out->rule.action == SH_ACTION_FORCE_INT)
		return parse_force(rc, rule, &out->rule);
	return 0;
}

static int check_duplicate(struct rule_ctx *rc,
			   const struct sh_rule_entry *rules, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (rules[i].key.level != rules[n].key.level ||
		    rules[i].key.optname != rules[n].key.optname)
			continue;
		return cfg_error(
			rc->cfg, rc->path,
			"duplicate rule for this option (first at index %zu)",
			i);
	}
	return 0;
}

static int parse_list(struct cfg_ctx *ctx, struct json_object *arr,
		      const char *path, bool is_get, struct sh_rule_entry **out,
		      size_t *nr)
{
	size_t n = json_object_array_length(arr);
	char where[PATH_LEN];
	struct rule_ctx rc = { .cfg = ctx, .path = where, .is_get = is_get };

	if (n > SH_MAX_OPT_RULES)
		return cfg_error(ctx, path, "too many rules (%zu, at most %d)",
				 n, SH_MAX_OPT_RULES);
	*out = calloc(n ? n : 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		snprintf(where, sizeof(where), "%s[%zu]", path, i);
		if (parse_rule(&rc, json_object_array_get_idx(arr, i),
			       &(*out)[i]) ||
		    check_duplicate(&rc, *out, i))
			return -EINVAL;
		*nr = i + 1;
	}
	return 0;
}

static int parse_named_list(struct cfg_ctx *ctx, struct json_object *obj,
			    const char *policy, const char *key, bool is_get,
			    struct sh_rule_entry **out, size_t *nr)
{
	struct json_object *arr;
	char path[PATH_LEN];
	int r;

	snprintf(path, sizeof(path), "policies.%.64s", policy);
	r = cfg_get_typed(ctx, obj, path, key, json_type_array, &arr);
	if (r || !arr)
		return r;
	snprintf(path, sizeof(path), "policies.%.64s.%s", policy, key);
	return parse_list(ctx, arr, path, is_get, out, nr);
}

int parse_opt_lists(struct cfg_ctx *ctx, struct json_object *obj,
		    const char *policy, struct sh_policy *pol)
{
	int r = parse_named_list(ctx, obj, policy, "setsockopt", false,
				 &pol->set_rules, &pol->nr_set);

	if (!r)
		r = parse_named_list(ctx, obj, policy, "getsockopt", true,
				     &pol->get_rules, &pol->nr_get);
	return r;
}
