// SPDX-License-Identifier: GPL-2.0-only
/*
 * Record mode, the policy's side: a footprint becomes a policy in the
 * operator config's own schema, ready for `validate`. Allow-list mode
 * ("default": "deny"); per observed setsockopt option, a clamp to the
 * observed range for an int quantity the kernel keeps as a number, else
 * an allow; socket types and families the container never created
 * (SOCK_RAW, AF_INET6) denied. getsockopt needs no rule: the allow-list
 * applies to setsockopt only, and getsockopt calls are shown, not
 * proposed.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "footprint_policy.h"
#include "jsonw.h"
#include "names.h"
#include "options.h"
#include "render.h"

#define FP_AF_INET6 10
#define FP_SOCK_RAW 3

/* What the kernel keeps of what it read, as a clamp compares it. */
static long long kept(const struct sh_option_name *opt, long long v)
{
	long long min, max;

	switch (opt->domain) {
	case SH_DOM_U32:
		v = (uint32_t)v;
		break;
	case SH_DOM_U8:
		v &= 0xff;
		break;
	case SH_DOM_NEG_TO:
		v = v < 0 ? opt->special : v;
		break;
	case SH_DOM_M1_TO:
		v = v == -1 ? opt->special : v;
		break;
	case SH_DOM_PACING:
		v = v < 0 && v >= INT32_MIN ?
			    ((uint32_t)v == UINT32_MAX ? LLONG_MAX :
							 (uint32_t)v) :
			    v;
		break;
	default:
		break;
	}
	options_domain_range(opt->domain, &min, &max);
	return v < min ? min : v > max ? max : v;
}

static bool clampable(const struct sh_option_name *opt,
		      const struct sh_fp_value *v)
{
	return opt && v->has_value && opt->kind == OPT_INT && !opt->read_only &&
	       opt->domain != SH_DOM_BOOL;
}

/* An allow, or a clamp to the observed range: a rule as the config writes
 * it, rendered as explain renders the config's rules. */
static struct json_object *set_rule(const struct footprint_entry *e)
{
	const struct sh_option_name *opt = options_by_value(e->key.a, e->key.b);
	struct sh_rule_entry r = {
		.option_name = opt ? opt->name : NULL,
		.key = { .level = e->key.a, .optname = e->key.b },
		.rule = { .action = SH_ACTION_ALLOW },
		.alias_of = -1,
	};

	if (clampable(opt, &e->v)) {
		r.rule.action = SH_ACTION_CLAMP;
		r.rule.min = kept(opt, e->v.min);
		r.rule.max = kept(opt, e->v.max);
	}
	return render_rule_json(&r);
}

static bool seen_sock(const struct footprint *fp, int family, int type)
{
	for (size_t i = 0; i < fp->nr; i++)
		if (fp->e[i].key.kind == SH_FP_SOCK &&
		    (family < 0 || fp->e[i].key.a == family) &&
		    (type < 0 || fp->e[i].key.b == type))
			return true;
	return false;
}

/* Only what the container surely never did: nothing when the table
 * overflowed or was not read. */
static struct json_object *socket_json(const struct footprint *fp)
{
	struct json_object *deny = json_object_new_array();
	struct json_object *s = json_object_new_object();
	static const struct sh_sock_rule raw = { SH_ANY, FP_SOCK_RAW, SH_ANY };
	static const struct sh_sock_rule inet6 = { FP_AF_INET6, SH_ANY,
						   SH_ANY };

	if (fp->kind_read[SH_PROG_SOCK] && !fp->overflow[SH_PROG_SOCK]) {
		if (!seen_sock(fp, -1, FP_SOCK_RAW))
			json_object_array_add(deny, render_sock_json(&raw));
		if (!seen_sock(fp, FP_AF_INET6, -1))
			json_object_array_add(deny, render_sock_json(&inet6));
	}
	json_object_object_add(s, "deny", deny);
	return s;
}

struct json_object *footprint_policy_json(const struct footprint *fp,
					  const char *name)
{
	struct json_object *root = json_object_new_object();
	struct json_object *policies = json_object_new_object();
	struct json_object *p = json_object_new_object();
	struct json_object *set = json_object_new_array();

	jsonw_str(p, "default", "deny");
	json_object_object_add(p, "socket", socket_json(fp));
	for (size_t i = 0; i < fp->nr; i++)
		if (fp->e[i].key.kind == SH_FP_SET)
			json_object_array_add(set, set_rule(&fp->e[i]));
	json_object_object_add(p, "setsockopt", set);
	json_object_object_add(policies, name, p);
	json_object_object_add(root, "policies", policies);
	return root;
}

static const char *const kind_names[] = { "setsockopt", "getsockopt",
					  "socket" };

static struct json_object *entry_json(const struct footprint_entry *e)
{
	struct json_object *o = json_object_new_object();
	const struct sh_option_name *opt;

	jsonw_str(o, "call", kind_names[e->key.kind % 3]);
	if (e->key.kind == SH_FP_SOCK) {
		jsonw_named(o, "family", names_family_name(e->key.a), e->key.a);
		jsonw_named(o, "type", names_type_name(e->key.b), e->key.b);
		jsonw_named(o, "protocol", names_protocol_name(e->key.c),
			    e->key.c);
	} else {
		opt = options_by_value(e->key.a, e->key.b);
		jsonw_named(o, "level", names_level_name(e->key.a), e->key.a);
		jsonw_named(o, "option", opt ? opt->name : NULL, e->key.b);
	}
	jsonw_int(o, "count", (int64_t)e->v.count);
	if (e->v.has_value) {
		jsonw_int(o, "min", e->v.min);
		jsonw_int(o, "max", e->v.max);
	}
	return o;
}

struct json_object *footprint_policy_entries_json(const struct footprint *fp)
{
	struct json_object *o = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	struct json_object *over = json_object_new_object();

	for (size_t i = 0; i < fp->nr; i++)
		json_object_array_add(arr, entry_json(&fp->e[i]));
	for (int k = 0; k < SH_PROG_KINDS; k++)
		jsonw_int(over, kind_get(k)->name, (int64_t)fp->overflow[k]);
	json_object_object_add(o, "entries", arr);
	jsonw_int(o, "table_size", SH_FP_MAX);
	json_object_object_add(o, "overflow", over);
	return o;
}

void footprint_policy_entry_text(const struct footprint_entry *e, char *buf,
				 size_t len)
{
	const struct sh_option_name *opt;
	struct render_buf t;

	render_buf_init(&t, buf, len);
	if (e->key.kind == SH_FP_SOCK) {
		render_add(&t, "socket");
		render_named(&t, names_family_name(e->key.a), e->key.a);
		render_named(&t, names_type_name(e->key.b), e->key.b);
		render_named(&t, names_protocol_name(e->key.c), e->key.c);
	} else {
		opt = options_by_value(e->key.a, e->key.b);
		render_add(&t, "%s", kind_names[e->key.kind % 3]);
		render_named(&t, names_level_name(e->key.a), e->key.a);
		render_named(&t, opt ? opt->name : NULL, e->key.b);
	}
	render_add(&t, " count %llu", (unsigned long long)e->v.count);
	if (e->v.has_value)
		render_add(&t, " values %lld..%lld", (long long)e->v.min,
			   (long long)e->v.max);
}
