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
#include "names.h"
#include "options.h"

#define FP_AF_INET6 10
#define FP_SOCK_RAW 3

static void add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static void add_int(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

/* A name when the hook knows one, else the number. */
static void add_named(struct json_object *o, const char *key, const char *name,
		      int value)
{
	if (name)
		add_str(o, key, name);
	else
		add_int(o, key, value);
}

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

static struct json_object *set_rule(const struct footprint_entry *e)
{
	const struct sh_option_name *opt = options_by_value(e->key.a, e->key.b);
	struct json_object *r = json_object_new_object();

	add_named(r, "level", names_level_name(e->key.a), e->key.a);
	add_named(r, "option", opt ? opt->name : NULL, e->key.b);
	if (!clampable(opt, &e->v)) {
		add_str(r, "action", "allow");
		return r;
	}
	add_str(r, "action", "clamp");
	add_int(r, "min", kept(opt, e->v.min));
	add_int(r, "max", kept(opt, e->v.max));
	return r;
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
	struct json_object *s = json_object_new_object(), *d;

	if (fp->kind_read[SH_PROG_SOCK] && !fp->overflow[SH_PROG_SOCK]) {
		if (!seen_sock(fp, -1, FP_SOCK_RAW)) {
			d = json_object_new_object();
			add_str(d, "type", "SOCK_RAW");
			json_object_array_add(deny, d);
		}
		if (!seen_sock(fp, FP_AF_INET6, -1)) {
			d = json_object_new_object();
			add_str(d, "family", "AF_INET6");
			json_object_array_add(deny, d);
		}
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

	add_str(p, "default", "deny");
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

	add_str(o, "call", kind_names[e->key.kind % 3]);
	if (e->key.kind == SH_FP_SOCK) {
		add_named(o, "family", names_family_name(e->key.a), e->key.a);
		add_named(o, "type", names_type_name(e->key.b), e->key.b);
		add_named(o, "protocol", names_protocol_name(e->key.c),
			  e->key.c);
	} else {
		opt = options_by_value(e->key.a, e->key.b);
		add_named(o, "level", names_level_name(e->key.a), e->key.a);
		add_named(o, "option", opt ? opt->name : NULL, e->key.b);
	}
	add_int(o, "count", (int64_t)e->v.count);
	if (e->v.has_value) {
		add_int(o, "min", e->v.min);
		add_int(o, "max", e->v.max);
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
		add_int(over, kind_get(k)->name, (int64_t)fp->overflow[k]);
	json_object_object_add(o, "entries", arr);
	add_int(o, "table_size", SH_FP_MAX);
	json_object_object_add(o, "overflow", over);
	return o;
}

static const char *named(const char *name, int value, char *buf, size_t len)
{
	if (name)
		return name;
	snprintf(buf, len, "%d", value);
	return buf;
}

void footprint_policy_entry_text(const struct footprint_entry *e, char *buf,
				 size_t len)
{
	const struct sh_option_name *opt;
	char a[16], b[16], c[16];
	int n;

	if (e->key.kind == SH_FP_SOCK) {
		n = snprintf(buf, len, "socket %s %s %s",
			     named(names_family_name(e->key.a), e->key.a, a,
				   sizeof(a)),
			     named(names_type_name(e->key.b), e->key.b, b,
				   sizeof(b)),
			     named(names_protocol_name(e->key.c), e->key.c, c,
				   sizeof(c)));
	} else {
		opt = options_by_value(e->key.a, e->key.b);
		n = snprintf(buf, len, "%s %s %s", kind_names[e->key.kind % 3],
			     named(names_level_name(e->key.a), e->key.a, a,
				   sizeof(a)),
			     named(opt ? opt->name : NULL, e->key.b, b,
				   sizeof(b)));
	}
	if (n < 0 || (size_t)n >= len)
		return;
	n += snprintf(buf + n, len - n, " count %llu",
		      (unsigned long long)e->v.count);
	if (e->v.has_value && (size_t)n < len)
		snprintf(buf + n, len - n, " values %lld..%lld",
			 (long long)e->v.min, (long long)e->v.max);
}
