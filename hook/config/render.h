/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one rules renderer: a setsockopt/getsockopt rule or a socket rule,
 * as JSON (explain, record's proposal) and as text (status, would-have
 * lines), both driven by one action table; a new action is one row.
 */
#ifndef SH_RENDER_H
#define SH_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "config/config_types.h"

/* A text that grows; once a part does not fit, it ends in "...". */
struct render_buf {
	char *buf;
	size_t len, pos;
	bool full;
};

void render_buf_init(struct render_buf *t, char *buf, size_t len);
void render_add(struct render_buf *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "; " before every part but the first. */
void render_sep(struct render_buf *t);
/* NAME, or NUMBER when the hook knows no name; after a space unless it
 * is the first word. */
void render_named(struct render_buf *t, const char *name, int value);

/*
 * The action table: per action, the name operators write ("force" for
 * both forces), whether a getsockopt rule may take it, the keys a rule
 * with it takes (NULL for FORCE_BYTES: written as force, with a string),
 * and how its own values show after the level and the option. The
 * config parser reads it (render_action_named()), explain, status, record
 * and the would-have lines show through it: a new action is one row.
 */
struct render_action {
	__u32 action;
	const char *name;
	bool on_get;
	const char *const *keys;
	void (*json)(struct json_object *o, const struct sh_opt_rule *r);
	void (*text)(struct render_buf *t, const struct sh_opt_rule *r);
};

/* The row operators write as name, or NULL. */
const struct render_action *render_action_named(const char *name);
/* The name operators write for an action, "?" for none. */
const char *render_action_name(__u32 action);

/* { "level", "option", "action", and the action's own keys } */
struct json_object *render_rule_json(const struct sh_rule_entry *e);
/* "clamp SOL_SOCKET SO_RCVBUF 4096..65536", "force SOL_IP IP_TTL =64" */
void render_rule_text(struct render_buf *t, const struct sh_rule_entry *e);

/* { "family", "type", "protocol" }, each only when the rule names it. */
struct json_object *render_sock_json(const struct sh_sock_rule *r);
/* "deny AF_INET SOCK_RAW", "deny every socket" */
void render_sock_text(struct render_buf *t, const struct sh_sock_rule *r);

#endif /* SH_RENDER_H */
