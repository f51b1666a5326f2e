// SPDX-License-Identifier: GPL-2.0-only
/*
 * A policy's rules, summed up per program for `status`: what the
 * sock_create, setsockopt and getsockopt programs do, in the operator's
 * words (option and family names as the config wrote them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config_rules.h"
#include "enforce.h"
#include "names.h"

struct text {
	char *buf;
	size_t len, pos;
	bool full;
};

static void add(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends; once a part does not fit, the text ends in "...". */
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->full)
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

static void sep(struct text *t)
{
	if (t->pos)
		add(t, "; ");
}

static void add_named(struct text *t, const char *name, int value)
{
	if (name)
		add(t, " %s", name);
	else
		add(t, " %d", value);
}

static void sock_rule(struct text *t, const struct sh_sock_rule *r)
{
	sep(t);
	add(t, "deny");
	if (r->family != SH_ANY)
		add_named(t, names_family_name(r->family), r->family);
	if (r->type != SH_ANY)
		add_named(t, names_type_name(r->type), r->type);
	if (r->protocol != SH_ANY)
		add_named(t, names_protocol_name(r->protocol), r->protocol);
	if (r->family == SH_ANY && r->type == SH_ANY && r->protocol == SH_ANY)
		add(t, " every socket");
}

static void sock_text(struct text *t, const struct sh_policy *p, bool bypass)
{
	for (__u32 i = 0; p && i < p->nr_deny; i++)
		sock_rule(t, &p->deny[i]);
	if (p && p->has_mark) {
		sep(t);
		add(t, "mark %u", p->mark);
	}
	if (p && p->has_priority) {
		sep(t);
		add(t, "priority %u", p->priority);
	}
	if (bypass) {
		sep(t);
		add(t, "bypass-prot-mem");
	}
	if (!t->pos)
		add(t, "counts sockets");
}

static void opt_rule(struct text *t, const struct sh_rule_entry *e,
		     bool first)
{
	const struct sh_opt_rule *r = &e->rule;
	const char *level = names_level_name(e->key.level);
	__s64 v;

	add(t, "%s%s", first ? " " : "; ",
	    config_rules_action_name(r->action));
	add_named(t, level, e->key.level);
	add_named(t, e->option_name, e->key.optname);
	if (r->action == SH_ACTION_CLAMP) {
		add(t, " %lld..%lld", (long long)r->min, (long long)r->max);
	} else if (r->action == SH_ACTION_FORCE_INT) {
		memcpy(&v, r->value, sizeof(v));
		add(t, " =%lld", (long long)v);
	} else if (r->action == SH_ACTION_FORCE_BYTES) {
		add(t, " =\"%.*s\"",
		    (int)strnlen((const char *)r->value, r->value_len),
		    (const char *)r->value);
	}
}

/* Aliases (the same rule under a twin option) are left out. */
static void opt_text(struct text *t, const struct sh_rule_entry *rules,
		     size_t n, bool default_deny)
{
	bool first = true;

	add(t, "%s", default_deny ? "default deny (allow-list):" :
				    "default allow:");
	for (size_t i = 0; i < n; i++) {
		if (rules[i].alias_of >= 0)
			continue;
		opt_rule(t, &rules[i], first);
		first = false;
	}
	if (first)
		add(t, " no rules");
}

void enforce_rules_text(const struct sh_policy *p, enum sh_prog_kind kind,
			bool bypass_active, char *buf, size_t len)
{
	struct text t = { .buf = buf, .len = len };

	if (!len)
		return;
	buf[0] = '\0';
	if (kind == SH_PROG_SOCK)
		sock_text(&t, p, bypass_active);
	else if (!p)
		add(&t, "no rules");
	else if (kind == SH_PROG_SET)
		opt_text(&t, p->set_rules, p->nr_set, p->default_deny);
	else
		opt_text(&t, p->get_rules, p->nr_get, false);
}

enum enforce_bypass enforce_bypass_state(bool asked, bool active)
{
	if (!asked)
		return ENFORCE_BYPASS_NOT_ASKED;
	return active ? ENFORCE_BYPASS_APPLIED : ENFORCE_BYPASS_FELL_BACK;
}

const char *enforce_bypass_token(enum enforce_bypass b)
{
	static const char *const tokens[] = { "not_asked", "applied",
					      "fell_back" };

	return tokens[b];
}

const char *enforce_bypass_text(enum enforce_bypass b)
{
	static const char *const texts[] = {
		"not asked",
		"applied (sockets bypass tcp_mem accounting)",
		"fell back: asked for, but this kernel lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19); sockets are charged to tcp_mem",
	};

	return texts[b];
}
