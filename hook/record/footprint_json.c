// SPDX-License-Identifier: GPL-2.0-only
/*
 * A footprint as JSON and text: in `record`'s output and in each recording
 * file's provenance, from which `record merge` reads it back. Names where
 * the hook knows one, numbers otherwise, as the operator config has them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "config/names.h"
#include "config/options.h"
#include "config/render.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "record/footprint_json.h"

static const char *const call_names[] = {
	[SH_FP_SET] = "setsockopt",
	[SH_FP_GET] = "getsockopt",
	[SH_FP_SOCK] = "socket",
};

static const char *option_name(int level, int optname)
{
	const struct sh_option_name *opt = options_by_value(level, optname);

	return opt ? opt->name : NULL;
}

static struct json_object *entry_json(const struct footprint_entry *e)
{
	struct json_object *o = json_object_new_object();
	const struct sh_fp_key *k = &e->key;

	jsonw_str(o, "call", call_names[k->kind % 3]);
	if (k->kind == SH_FP_SOCK) {
		jsonw_named(o, "family", names_family_name(k->a), k->a);
		jsonw_named(o, "type", names_type_name(k->b), k->b);
		jsonw_named(o, "protocol", names_protocol_name(k->c), k->c);
	} else {
		jsonw_named(o, "level", names_level_name(k->a), k->a);
		jsonw_named(o, "option", option_name(k->a, k->b), k->b);
	}
	jsonw_int(o, "count", (int64_t)e->v.count);
	jsonw_int(o, "refused", e->v.refused);
	if (e->v.has_value) {
		jsonw_int(o, "min", e->v.min);
		jsonw_int(o, "max", e->v.max);
	}
	return o;
}

struct json_object *footprint_json_entries(const struct footprint *fp)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < fp->nr; i++)
		json_object_array_add(arr, entry_json(&fp->e[i]));
	return arr;
}

struct json_object *footprint_json_overflow(const struct footprint *fp)
{
	struct json_object *over = json_object_new_object();

	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (fp->kind_read[k])
			jsonw_int(over, kind_get(k)->name,
				  (int64_t)fp->overflow[k]);
	return over;
}

/* A name (looked up) or a number; -EINVAL for anything else. */
static int get_named(struct json_object *o, const char *key,
		     int (*lookup)(const char *, int *), int *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return -EINVAL;
	if (json_object_is_type(v, json_type_int)) {
		int64_t n = json_object_get_int64(v);

		if (n < INT_MIN || n > INT_MAX)
			return -EINVAL;
		*out = (int)n;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string) || !lookup)
		return -EINVAL;
	return lookup(json_object_get_string(v), out) ? -EINVAL : 0;
}

static int get_u64(struct json_object *o, const char *key, uint64_t max,
		   uint64_t *out)
{
	struct json_object *v;
	int64_t n;

	*out = 0;
	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	n = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || n < 0 ||
	    (uint64_t)n > max)
		return -EINVAL;
	*out = (uint64_t)n;
	return 0;
}

static int get_range(struct json_object *o, bool kept, struct sh_fp_value *v)
{
	struct json_object *min, *max;
	bool has_min = json_object_object_get_ex(o, "min", &min);
	bool has_max = json_object_object_get_ex(o, "max", &max);

	if (!has_min && !has_max)
		return 0;
	if (!has_min || !has_max || !json_object_is_type(min, json_type_int) ||
	    !json_object_is_type(max, json_type_int))
		return -EINVAL;
	v->min = json_object_get_int64(min);
	v->max = json_object_get_int64(max);
	v->has_value = kept ? SH_FP_KEPT : SH_FP_RAW;
	return v->min <= v->max ? 0 : -EINVAL;
}

static int option_value(const char *name, int level, int *out)
{
	const struct sh_option_name *opt;

	if (options_find(level, name, &opt))
		return -ENOENT;
	*out = opt->optname;
	return 0;
}

static int entry_key(struct json_object *o, struct sh_fp_key *k)
{
	const char *call =
		json_object_get_string(json_object_object_get(o, "call"));
	char option[80];
	struct json_object *v;

	for (k->kind = 0; k->kind < ARRAY_SIZE(call_names); k->kind++)
		if (call && !strcmp(call, call_names[k->kind]))
			break;
	if (k->kind == SH_FP_SOCK)
		return get_named(o, "family", names_family, &k->a)     ?:
			       get_named(o, "type", names_type, &k->b) ?:
			       get_named(o, "protocol", names_protocol, &k->c);
	if (k->kind >= ARRAY_SIZE(call_names) ||
	    get_named(o, "level", names_level, &k->a))
		return -EINVAL;
	k->c = 0;
	if (!get_named(o, "option", NULL, &k->b))
		return 0;
	if (!json_object_object_get_ex(o, "option", &v) ||
	    !json_object_is_type(v, json_type_string))
		return -EINVAL;
	snprintf(option, sizeof(option), "%s", json_object_get_string(v));
	return option_value(option, k->a, &k->b) ? -EINVAL : 0;
}

static int entry_from_json(struct json_object *o, bool kept,
			   struct footprint_entry *e)
{
	uint64_t count, refused;

	memset(e, 0, sizeof(*e));
	if (!json_object_is_type(o, json_type_object) || entry_key(o, &e->key))
		return -EINVAL;
	if (get_u64(o, "count", UINT64_MAX >> 1, &count) ||
	    get_u64(o, "refused", UINT32_MAX, &refused) ||
	    get_range(o, kept, &e->v))
		return -EINVAL;
	e->v.count = count;
	e->v.refused = (__u32)refused;
	return 0;
}

static int overflow_from_json(struct json_object *over, struct footprint *fp)
{
	uint64_t n;

	if (!json_object_is_type(over, json_type_object))
		return -EINVAL;
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		if (!json_object_object_get_ex(over, kind_get(k)->name, NULL))
			continue;
		if (get_u64(over, kind_get(k)->name, UINT64_MAX >> 1, &n))
			return -EINVAL;
		fp->kind_read[k] = true;
		fp->overflow[k] += n;
	}
	return 0;
}

#define VALUES_KEPT "kept"

void footprint_json_add(struct json_object *prov, const struct footprint *fp)
{
	jsonw_str(prov, "values", VALUES_KEPT);
	json_object_object_add(prov, "footprint", footprint_json_entries(fp));
	json_object_object_add(prov, "overflow", footprint_json_overflow(fp));
}

int footprint_json_read(struct json_object *prov, struct footprint *fp,
			struct sh_error *err)
{
	struct json_object *entries = json_object_object_get(prov, "footprint");
	struct json_object *overflow = json_object_object_get(prov, "overflow");
	struct json_object *values = NULL;
	struct footprint_entry e;
	bool kept = false;
	size_t n;
	int r;

	if (json_object_object_get_ex(prov, "values", &values)) {
		if (!json_object_is_type(values, json_type_string) ||
		    strcmp(json_object_get_string(values), VALUES_KEPT))
			return error_set(err, -EBADMSG,
					 "its \"values\" is not \"%s\"",
					 VALUES_KEPT);
		kept = true;
	}
	if (!json_object_is_type(entries, json_type_array) ||
	    overflow_from_json(overflow, fp))
		return error_set(err, -EBADMSG,
				 "its footprint or overflow is not what "
				 "the hook writes");
	n = json_object_array_length(entries);
	for (size_t i = 0; i < n; i++) {
		if (entry_from_json(json_object_array_get_idx(entries, i), kept,
				    &e))
			return error_set(
				err, -EBADMSG,
				"footprint entry %zu is not what the hook writes",
				i);
		r = footprint_policy_add(fp, &e);
		if (r)
			return error_set(err, r, "more than %d distinct calls",
					 SH_FOOTPRINT_MAX);
	}
	return 0;
}

void footprint_json_entry_text(const struct footprint_entry *e, char *buf,
			       size_t len)
{
	const struct sh_fp_key *k = &e->key;
	struct render_buf t;

	render_buf_init(&t, buf, len);
	if (k->kind == SH_FP_SOCK) {
		render_add(&t, "socket");
		render_named(&t, names_family_name(k->a), k->a);
		render_named(&t, names_type_name(k->b), k->b);
		render_named(&t, names_protocol_name(k->c), k->c);
	} else {
		render_add(&t, "%s", call_names[k->kind % 3]);
		render_named(&t, names_level_name(k->a), k->a);
		render_named(&t, option_name(k->a, k->b), k->b);
	}
	render_add(&t, " count %llu", (unsigned long long)e->v.count);
	if (e->v.refused)
		render_add(&t, " refused %u", e->v.refused);
	if (e->v.has_value)
		render_add(&t, " values %lld..%lld", (long long)e->v.min,
			   (long long)e->v.max);
}
