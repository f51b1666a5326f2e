// SPDX-License-Identifier: GPL-2.0-only
/* Named policies: socket rules; the rule lists are in config_policy.c. */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_json.h"
#include "config/config_policy.h"
#include "config/names.h"
#include "config/render.h"
#include "lib/cleanup.h"

static int parse_sock_field(struct config_ctx *ctx, struct json_object *rule,
			    const char *path, const char *key,
			    int (*lookup)(const char *, int *), __s32 *ret)
{
	const char *name = NULL, *hint;
	char where[SH_CONFIG_PATH_MAX];
	int value, r;

	*ret = SH_ANY;
	r = config_json_get_string(ctx, rule, path, key, &name);
	if (r || !name)
		return r;
	if (lookup(name, &value) == 0) {
		*ret = value;
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
			   const char *path, struct sh_sock_rule *ret)
{
	static const char *const keys[] = { "family", "type", "protocol",
					    NULL };
	int r = config_json_check_object(ctx, rule, path, keys);

	if (r)
		return r;
	r = parse_sock_field(ctx, rule, path, "family", names_family,
			     &ret->family);
	if (r)
		return r;
	r = parse_sock_field(ctx, rule, path, "type", names_type, &ret->type);
	if (r)
		return r;
	r = parse_sock_field(ctx, rule, path, "protocol", names_protocol,
			     &ret->protocol);
	if (r)
		return r;
	if (ret->family == SH_ANY && ret->type == SH_ANY &&
	    ret->protocol == SH_ANY)
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
	return config_policy_rules_parse(ctx, obj, name, pol);
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

/* setsockopt/getsockopt rule lists: names, actions and value checks. */

struct rule_ctx {
	struct config_ctx *cfg;
	const char *path;
	bool is_get;
	const struct sh_option_name *opt;
};

/* An error at the rule's key: its path is only put together for an
 * error (a config of a few policies has dozens of rules to check). */
__attribute__((format(printf, 3, 4))) static int
key_error(struct rule_ctx *rc, const char *key, const char *fmt, ...)
{
	char where[SH_CONFIG_PATH_MAX], msg[SH_ERROR_MSG_MAX / 2];
	va_list ap;

	snprintf(where, sizeof(where), "%s.%s", rc->path, key);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return config_json_error(rc->cfg, where, "%s", msg);
}

/* A copy cut to len - 1 bytes, without printf's cost. */
static void copy_text(char *buf, size_t len, const char *text)
{
	size_t n = strnlen(text, len - 1);

	memcpy(buf, text, n);
	buf[n] = '\0';
}

static int hinted(struct rule_ctx *rc, const char *key, const char *what,
		  const char *name)
{
	const char *hint = names_suggest(name);

	return key_error(rc, key, "unknown %s '%.64s'%s%s%s", what, name,
			 hint ? " (did you mean '" : "", hint ? hint : "",
			 hint ? "'?)" : "");
}

/* A level or option is a symbolic name or a non-negative integer. */
static int get_name_or_number(struct rule_ctx *rc, struct json_object *rule,
			      const char *key, char *buf, size_t len)
{
	struct json_object *val;

	if (!json_object_object_get_ex(rule, key, &val))
		return key_error(rc, key, "is required");
	if (json_object_is_type(val, json_type_string)) {
		if ((size_t)json_object_get_string_len(val) >= len)
			return key_error(rc, key, "is too long");
		copy_text(buf, len, json_object_get_string(val));
		return 0;
	}
	if (json_object_is_type(val, json_type_int) &&
	    json_object_get_int64(val) >= 0 &&
	    json_object_get_int64(val) <= INT_MAX) {
		snprintf(buf, len, "%lld",
			 (long long)json_object_get_int64(val));
		return 0;
	}
	return key_error(rc, key,
			 "must be a symbolic name or a non-negative integer");
}

static int parse_target(struct rule_ctx *rc, struct json_object *rule,
			struct sh_rule_entry *ret)
{
	char level_name[80], opt_name[80];
	int level, r;

	if (get_name_or_number(rc, rule, "level", level_name,
			       sizeof(level_name)) ||
	    get_name_or_number(rc, rule, "option", opt_name, sizeof(opt_name)))
		return -EINVAL;
	if (names_level(level_name, &level))
		return hinted(rc, "level", "level", level_name);
	/* One handler for both: a rule at either level covers both. */
	if (level == SOL_UDPLITE_LEVEL)
		level = IPPROTO_UDP;
	r = names_option_find(level, opt_name, &rc->opt);
	if (r == -ENOENT)
		return hinted(rc, "option", "option", opt_name);
	if (r == -EXDEV)
		return key_error(rc, "option",
				 "'%.64s' is not an option of level %.64s",
				 opt_name, level_name);
	ret->option_name = rc->opt->name;
	ret->key.level = level;
	ret->key.optname = rc->opt->optname;
	return 0;
}

/* An action operators write, from render.c's action table. */
static int parse_action(struct rule_ctx *rc, struct json_object *rule,
			const struct render_action **ret)
{
	const char *name = NULL;
	int r = config_json_get_string(rc->cfg, rule, rc->path, "action",
				       &name);

	if (r)
		return r;
	if (!name)
		return key_error(rc, "action", "is required");
	*ret = render_action_named(name);
	if (*ret && (!rc->is_get || (*ret)->on_get))
		return 0;
	return key_error(
		rc, "action", "unknown action '%.64s' (expected %s)", name,
		rc->is_get ? "deny or force" : "allow, deny, clamp or force");
}

static bool is_int_option(const struct sh_option_name *opt)
{
	return opt->kind == OPT_INT || opt->kind == OPT_UNKNOWN;
}

static const char *domain_reason(enum sh_domain domain)
{
	switch (domain) {
	case SH_DOM_U32:
		return ": the kernel keeps it unsigned";
	case SH_DOM_BOOL:
		return ": it is a boolean";
	case SH_DOM_U8:
		return ": the kernel keeps one byte";
	case SH_DOM_PACING:
		return ": bytes per second";
	default:
		return "";
	}
}

/* A bound or forced value must be one the kernel can hold. */
static int get_in_domain(struct rule_ctx *rc, struct json_object *rule,
			 const char *key, long long *ret, bool *present)
{
	long long min, max;

	names_option_domain_range(rc->opt->domain, &min, &max);
	if (config_json_get_int(rc->cfg, rule, rc->path, key, INT64_MIN,
				INT64_MAX, ret, present))
		return -EINVAL;
	if (!*present || (*ret >= min && *ret <= max))
		return 0;
	return key_error(rc, key, "%lld is out of range for %s (%lld..%lld%s)",
			 *ret, rc->opt->name ? rc->opt->name : "this option",
			 min, max, domain_reason(rc->opt->domain));
}

static int check_settable(struct rule_ctx *rc, const char *action)
{
	if (rc->is_get || !rc->opt->read_only)
		return 0;
	return config_json_error(
		rc->cfg, rc->path,
		"%s cannot be set (the kernel has no setter), so a setsockopt %s does nothing; use deny",
		rc->opt->name, action);
}

static int parse_clamp(struct rule_ctx *rc, struct json_object *rule,
		       struct sh_opt_rule *ret)
{
	bool has_min, has_max;
	long long min, max;

	if (!is_int_option(rc->opt))
		return config_json_error(
			rc->cfg, rc->path,
			"clamp needs an int option, and %s is not one",
			rc->opt->name);
	if (check_settable(rc, "clamp"))
		return -EINVAL;
	names_option_domain_range(rc->opt->domain, &ret->min, &ret->max);
	if (get_in_domain(rc, rule, "min", &min, &has_min) ||
	    get_in_domain(rc, rule, "max", &max, &has_max))
		return -EINVAL;
	if (!has_min && !has_max)
		return config_json_error(rc->cfg, rc->path,
					 "clamp needs 'min', 'max' or both");
	ret->min = has_min ? min : ret->min;
	ret->max = has_max ? max : ret->max;
	if (ret->min > ret->max)
		return config_json_error(
			rc->cfg, rc->path,
			"min (%lld) is greater than max (%lld)",
			(long long)ret->min, (long long)ret->max);
	return 0;
}

static int force_string(struct rule_ctx *rc, struct json_object *val,
			struct sh_opt_rule *ret)
{
	const char *s = json_object_get_string(val);
	size_t len = strlen(s);

	if (rc->opt->kind != OPT_STRING && rc->opt->kind != OPT_UNKNOWN)
		return key_error(rc, "value",
				 "a string value on %s, which takes an int",
				 rc->opt->name);
	if (len == 0 || len >= SH_OPT_VALUE_MAX)
		return key_error(rc, "value", "string must be 1 to %d bytes",
				 SH_OPT_VALUE_MAX - 1);
	ret->action = SH_ACTION_FORCE_BYTES;
	ret->value_len = len;
	memcpy(ret->value, s, len);
	return 0;
}

static int parse_force(struct rule_ctx *rc, struct json_object *rule,
		       struct sh_opt_rule *ret)
{
	struct json_object *val;
	long long v;
	bool present;

	if (!json_object_object_get_ex(rule, "value", &val))
		return key_error(rc, "value", "is required for force");
	if (check_settable(rc, "force"))
		return -EINVAL;
	if (json_object_is_type(val, json_type_string))
		return force_string(rc, val, ret);
	if (!json_object_is_type(val, json_type_int))
		return key_error(rc, "value", "must be an integer or a string");
	if (!is_int_option(rc->opt))
		return key_error(rc, "value",
				 "an int value on %s, which takes %s",
				 rc->opt->name,
				 rc->opt->kind == OPT_STRING ? "a string" :
							       "a structure");
	if (get_in_domain(rc, rule, "value", &v, &present))
		return -EINVAL;
	ret->value_len = sizeof(__s64);
	memcpy(ret->value, &(__s64){ v }, sizeof(__s64));
	return 0;
}

/* How the programs must read and write this option: see names.c. */
static void fill_semantics(const struct sh_option_name *opt,
			   struct sh_opt_rule *rule)
{
	rule->domain = opt->domain;
	rule->special = opt->special;
	rule->short_read = names_option_short_read(opt);
	rule->get_form = names_option_get_form(opt);
}

/*
 * The kernel runs TCP_ZEROCOPY_RECEIVE through its own fast path, and the
 * program passes it through untouched to keep that path fast: a rule
 * there would be silently ignored.
 */
static int check_enforceable(struct rule_ctx *rc)
{
	if (!rc->is_get || rc->opt->level != IPPROTO_TCP ||
	    rc->opt->optname != 35)
		return 0;
	return config_json_error(
		rc->cfg, rc->path,
		"getsockopt rules cannot cover TCP_ZEROCOPY_RECEIVE: the program passes it through untouched for the kernel's zerocopy fast path");
}

static int parse_rule(struct rule_ctx *rc, struct json_object *rule,
		      struct sh_rule_entry *ret)
{
	static const char *const keys[] = { "level", "option", "action", "min",
					    "max",   "value",  NULL };
	const struct render_action *action = NULL;
	int r;

	r = config_json_check_object(rc->cfg, rule, rc->path, keys);
	if (r)
		return r;
	r = parse_target(rc, rule, ret);
	if (r)
		return r;
	r = check_enforceable(rc);
	if (r)
		return r;
	r = parse_action(rc, rule, &action);
	if (r)
		return r;
	r = config_json_check_object(rc->cfg, rule, rc->path, action->keys);
	if (r)
		return r;
	ret->rule.action = action->action;
	ret->alias_of = -1;
	fill_semantics(rc->opt, &ret->rule);
	if (ret->rule.action == SH_ACTION_CLAMP)
		return parse_clamp(rc, rule, &ret->rule);
	if (ret->rule.action == SH_ACTION_FORCE_INT)
		return parse_force(rc, rule, &ret->rule);
	return 0;
}

static int check_duplicate(struct rule_ctx *rc,
			   const struct sh_rule_entry *rules, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (rules[i].key.level != rules[n].key.level ||
		    rules[i].key.optname != rules[n].key.optname)
			continue;
		return config_json_error(
			rc->cfg, rc->path,
			"duplicate rule for this option (first at index %zu)",
			i);
	}
	return 0;
}

static bool has_key(const struct sh_rule_entry *rules, size_t n,
		    const struct sh_opt_key *key)
{
	for (size_t i = 0; i < n; i++)
		if (rules[i].key.level == key->level &&
		    rules[i].key.optname == key->optname)
			return true;
	return false;
}

static long long clip(long long v, long long min, long long max)
{
	return v < min ? min : v > max ? max : v;
}

/* A carried-over rule keeps to what its own option's kernel field holds
 * (SO_RCVBUF is unsigned, SO_RCVBUFFORCE a signed int). */
static void fit_domain(enum sh_domain domain, struct sh_opt_rule *rule)
{
	long long min, max;
	__s64 v;

	names_option_domain_range(domain, &min, &max);
	rule->min = clip(rule->min, min, max);
	rule->max = clip(rule->max, min, max);
	if (rule->action != SH_ACTION_FORCE_INT)
		return;
	memcpy(&v, rule->value, sizeof(v));
	v = clip(v, min, max);
	memcpy(rule->value, &v, sizeof(v));
}

/*
 * Every rule also covers the (level, option) pairs the kernel routes to
 * the same state, unless the operator wrote a rule for that pair too.
 */
static size_t add_aliases(struct sh_rule_entry *rules, size_t n)
{
	size_t total = n;

	for (size_t i = 0; i < n; i++) {
		struct sh_option_alias alias[SH_MAX_ALIASES];
		size_t nr = names_option_aliases(&rules[i].key, alias);

		for (size_t a = 0; a < nr; a++) {
			const struct sh_option_name *to;
			struct sh_rule_entry *e = &rules[total];

			if ((alias[a].deny_only &&
			     rules[i].rule.action != SH_ACTION_DENY) ||
			    has_key(rules, total, &alias[a].key))
				continue;
			*e = rules[i];
			e->key = alias[a].key;
			e->alias_of = (int)i;
			to = names_option_by_value(e->key.level,
						   e->key.optname);
			if (to) {
				e->option_name = to->name;
				fill_semantics(to, &e->rule);
				fit_domain(to->domain, &e->rule);
			}
			total++;
		}
	}
	return total;
}

static int parse_list(struct config_ctx *ctx, struct json_object *arr,
		      const char *path, bool is_get, struct sh_rule_entry **ret,
		      size_t *nr)
{
	size_t n = json_object_array_length(arr);
	char where[SH_CONFIG_PATH_MAX];
	struct rule_ctx rc = { .cfg = ctx, .path = where, .is_get = is_get };

	if (n > SH_MAX_OPT_RULES)
		return config_json_error(ctx, path,
					 "too many rules (%zu, at most %d)", n,
					 SH_MAX_OPT_RULES);
	*ret = calloc(n ? n * (1 + SH_MAX_ALIASES) : 1, sizeof(**ret));
	if (!*ret)
		return error_set(ctx->err, -ENOMEM, "out of memory reading %s",
				 ctx->file);
	for (size_t i = 0; i < n; i++) {
		int r;

		snprintf(where, sizeof(where), "%s[%zu]", path, i);
		r = parse_rule(&rc, json_object_array_get_idx(arr, i),
			       &(*ret)[i]);
		if (r)
			return r;
		r = check_duplicate(&rc, *ret, i);
		if (r)
			return r;
		*nr = i + 1;
	}
	*nr = add_aliases(*ret, n);
	return 0;
}

static int parse_named_list(struct config_ctx *ctx, struct json_object *obj,
			    const char *policy, const char *key, bool is_get,
			    struct sh_rule_entry **ret, size_t *nr)
{
	struct json_object *arr;
	char path[SH_CONFIG_PATH_MAX];
	int r;

	snprintf(path, sizeof(path), "policies.%.64s", policy);
	r = config_json_get_typed(ctx, obj, path, key, json_type_array, &arr);
	if (r || !arr)
		return r;
	snprintf(path, sizeof(path), "policies.%.64s.%s", policy, key);
	return parse_list(ctx, arr, path, is_get, ret, nr);
}

int config_policy_rules_parse(struct config_ctx *ctx, struct json_object *obj,
			      const char *policy, struct sh_policy *pol)
{
	int r = parse_named_list(ctx, obj, policy, "setsockopt",
				 /* is_get= */ false, &pol->set_rules,
				 &pol->nr_set);

	if (r)
		return r;
	return parse_named_list(ctx, obj, policy, "getsockopt",
				/* is_get= */ true, &pol->get_rules,
				&pol->nr_get);
}
