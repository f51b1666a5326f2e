// SPDX-License-Identifier: GPL-2.0-only
/* The one rules renderer: see render.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/names.h"
#include "config/render.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"

void render_buf_init(struct render_buf *t, char *buf, size_t len)
{
	*t = (struct render_buf){ .buf = buf, .len = len };
	if (len)
		buf[0] = '\0';
}

void render_add(struct render_buf *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->full || !t->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->pos, t->len - t->pos, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < t->len - t->pos) {
		t->pos += (size_t)n;
		return;
	}
	t->full = true;
	if (t->len >= 4)
		strcpy(t->buf + t->len - 4, "...");
}

void render_sep(struct render_buf *t)
{
	if (t->pos)
		render_add(t, "; ");
}

void render_named(struct render_buf *t, const char *name, int value)
{
	const char *space = t->pos ? " " : "";

	if (name)
		render_add(t, "%s%s", space, name);
	else
		render_add(t, "%s%d", space, value);
}

static __s64 force_int(const struct sh_opt_rule *r)
{
	__s64 v;

	memcpy(&v, r->value, sizeof(v));
	return v;
}

static void clamp_json(struct json_object *o, const struct sh_opt_rule *r)
{
	jsonw_int(o, "min", r->min);
	jsonw_int(o, "max", r->max);
}

static void clamp_text(struct render_buf *t, const struct sh_opt_rule *r)
{
	render_add(t, " %lld..%lld", (long long)r->min, (long long)r->max);
}

static void force_int_json(struct json_object *o, const struct sh_opt_rule *r)
{
	jsonw_int(o, "value", force_int(r));
}

static void force_int_text(struct render_buf *t, const struct sh_opt_rule *r)
{
	render_add(t, " =%lld", (long long)force_int(r));
}

static void force_bytes_json(struct json_object *o, const struct sh_opt_rule *r)
{
	json_object_object_add(
		o, "value",
		json_object_new_string_len((const char *)r->value,
					   (int)r->value_len));
}

static void force_bytes_text(struct render_buf *t, const struct sh_opt_rule *r)
{
	render_add(t, " =\"%.*s\"",
		   (int)strnlen((const char *)r->value, r->value_len),
		   (const char *)r->value);
}

static const char *const plain_keys[] = { "level", "option", "action", NULL };
static const char *const clamp_keys[] = { "level", "option", "action",
					  "min",   "max",    NULL };
static const char *const force_keys[] = { "level", "option", "action", "value",
					  NULL };

static const struct render_action actions[] = {
	{ SH_ACTION_ALLOW, "allow", false, plain_keys, NULL, NULL },
	{ SH_ACTION_DENY, "deny", true, plain_keys, NULL, NULL },
	{ SH_ACTION_CLAMP, "clamp", false, clamp_keys, clamp_json, clamp_text },
	{ SH_ACTION_FORCE_INT, "force", true, force_keys, force_int_json,
	  force_int_text },
	{ SH_ACTION_FORCE_BYTES, "force", true, NULL, force_bytes_json,
	  force_bytes_text },
};

const struct render_action *render_action_named(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(actions); i++)
		if (actions[i].keys && !strcmp(actions[i].name, name))
			return &actions[i];
	return NULL;
}

static const struct render_action *action_of(__u32 action)
{
	for (size_t i = 0; i < ARRAY_SIZE(actions); i++)
		if (actions[i].action == action)
			return &actions[i];
	return NULL;
}

const char *render_action_name(__u32 action)
{
	const struct render_action *a = action_of(action);

	return a ? a->name : "?";
}

struct json_object *render_rule_json(const struct sh_rule_entry *e)
{
	const struct render_action *a = action_of(e->rule.action);
	struct json_object *o = json_object_new_object();

	jsonw_named(o, "level", names_level_name(e->key.level), e->key.level);
	jsonw_named(o, "option", e->option_name, e->key.optname);
	jsonw_str(o, "action", render_action_name(e->rule.action));
	if (a && a->json)
		a->json(o, &e->rule);
	return o;
}

void render_rule_text(struct render_buf *t, const struct sh_rule_entry *e)
{
	const struct render_action *a = action_of(e->rule.action);

	render_add(t, "%s", render_action_name(e->rule.action));
	render_named(t, names_level_name(e->key.level), e->key.level);
	render_named(t, e->option_name, e->key.optname);
	if (a && a->text)
		a->text(t, &e->rule);
}

struct json_object *render_sock_json(const struct sh_sock_rule *r)
{
	struct json_object *o = json_object_new_object();

	if (r->family != SH_ANY)
		jsonw_named(o, "family", names_family_name(r->family),
			    r->family);
	if (r->type != SH_ANY)
		jsonw_named(o, "type", names_type_name(r->type), r->type);
	if (r->protocol != SH_ANY)
		jsonw_named(o, "protocol", names_protocol_name(r->protocol),
			    r->protocol);
	return o;
}

void render_sock_text(struct render_buf *t, const struct sh_sock_rule *r)
{
	render_add(t, "deny");
	if (r->family != SH_ANY)
		render_named(t, names_family_name(r->family), r->family);
	if (r->type != SH_ANY)
		render_named(t, names_type_name(r->type), r->type);
	if (r->protocol != SH_ANY)
		render_named(t, names_protocol_name(r->protocol), r->protocol);
	if (r->family == SH_ANY && r->type == SH_ANY && r->protocol == SH_ANY)
		render_add(t, " every socket");
}
