// SPDX-License-Identifier: GPL-2.0-only
/*
 * A policy's rules, summed up per program for `status`: what the
 * sock_create, setsockopt and getsockopt programs do, in the operator's
 * words (option and family names as the config wrote them).
 */
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "config/render.h"
#include "lib/jsonw.h"
#include "observe/status_view.h"

static void sock_text(struct render_buf *t, const struct sh_policy *p,
		      bool bypass)
{
	for (__u32 i = 0; p && i < p->nr_deny; i++) {
		render_sep(t);
		render_sock_text(t, &p->deny[i]);
	}
	if (p && p->has_mark) {
		render_sep(t);
		render_add(t, "mark %u", p->mark);
	}
	if (p && p->has_priority) {
		render_sep(t);
		render_add(t, "priority %u", p->priority);
	}
	if (bypass) {
		render_sep(t);
		render_add(t, "bypass-prot-mem");
	}
	if (!t->pos)
		render_add(t, "counts sockets");
}

/* Aliases (the same rule under a twin option) are left out. */
static void opt_text(struct render_buf *t, const struct sh_rule_entry *rules,
		     size_t n, bool default_deny)
{
	bool first = true;

	render_add(t, "%s",
		   default_deny ? "default deny (allow-list):" :
				  "default allow:");
	for (size_t i = 0; i < n; i++) {
		if (rules[i].alias_of >= 0)
			continue;
		render_add(t, "%s", first ? " " : "; ");
		render_rule_text(t, &rules[i]);
		first = false;
	}
	if (first)
		render_add(t, " no rules");
}

void status_view_rules_text(const struct sh_policy *p, enum sh_prog_kind kind,
			    bool bypass_active, char *buf, size_t len)
{
	struct render_buf t;

	render_buf_init(&t, buf, len);
	if (kind == SH_PROG_SOCK)
		sock_text(&t, p, bypass_active);
	else if (!p)
		render_add(&t, "no rules");
	else if (kind == SH_PROG_SET)
		opt_text(&t, p->set_rules, p->nr_set, p->default_deny);
	else
		opt_text(&t, p->get_rules, p->nr_get, false);
}

enum status_view_bypass status_view_bypass_state(bool asked, bool active)
{
	if (!asked)
		return STATUS_VIEW_BYPASS_NOT_ASKED;
	return active ? STATUS_VIEW_BYPASS_APPLIED :
			STATUS_VIEW_BYPASS_FELL_BACK;
}

const char *status_view_bypass_token(enum status_view_bypass b)
{
	static const char *const tokens[] = { "not_asked", "applied",
					      "fell_back" };

	return tokens[b];
}

const char *status_view_bypass_text(enum status_view_bypass b)
{
	static const char *const texts[] = {
		"not asked",
		"applied (sockets bypass tcp_mem accounting)",
		"fell back: asked for, but this kernel lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19); sockets are charged to tcp_mem",
	};

	return texts[b];
}

/* ---- what enforces what, for one container ---- */

void status_view_of(const struct status_view_rules *rules,
		    const struct status_view_row *row, struct status_view *e)
{
	const struct sh_record *rec = &row->rec;
	struct caveats_input in = { .rec = rec, .live = row->live };

	memset(e, 0, sizeof(*e));
	if (!rules->cfg_ok) {
		snprintf(e->rules_why, sizeof(e->rules_why),
			 "the operator config cannot be read: %s",
			 rules->cfg_error);
	} else if (rec->policy[0]) {
		e->policy = config_find_policy(&rules->cfg, rec->policy);
		e->rules_known = e->policy != NULL;
		if (!e->policy)
			snprintf(e->rules_why, sizeof(e->rules_why),
				 "policy '%s' is no longer in %s", rec->policy,
				 rules->cfg.path);
	} else {
		e->rules_known = true; /* no named policy: no rules */
	}
	e->bypass =
		status_view_bypass_state(rec->bypass, rec->progs.bypass_active);
	in.policy = e->policy;
	in.other_programs = row->live ? row->drift.other : "";
	in.families = rules->families;
	caveats_collect(&in, &e->cav);
}

void status_view_prog_rules(const struct status_view_row *row,
			    const struct status_view *e, int k, char *buf,
			    size_t len)
{
	if (!e->rules_known)
		snprintf(buf, len, "rules unknown");
	else
		status_view_rules_text(e->policy, k,
				       row->rec.progs.bypass_active, buf, len);
}

const char *status_view_prog_state(const struct status_view_row *row,
				   const struct drift_kind *k)
{
	if (!row->live)
		return "cgroup_gone";
	if (row->drift_err)
		return "unknown";
	return drift_state_name(drift_state_of(k));
}

static struct json_object *prog_json(const struct status_view_row *row,
				     const struct status_view *e, int k)
{
	const struct drift_kind *dk = &row->drift.kind[k];
	struct json_object *o = json_object_new_object();
	struct json_object *ids = json_object_new_array();
	char text[SH_STATUS_VIEW_TEXT_MAX + SH_ERROR_MSG_MAX];

	jsonw_str(o, "attach", kind_type_name(dk->type));
	jsonw_str(o, "bpf_attach_type", libbpf_bpf_attach_type_str(dk->type));
	jsonw_str(o, "cgroup", row->rec.cg.rel);
	json_object_object_add(
		o, "recorded_id",
		dk->recorded ? json_object_new_int64(dk->recorded) : NULL);
	for (int i = 0; i < dk->nr_ours; i++)
		json_object_array_add(ids, json_object_new_int64(dk->ours[i]));
	json_object_object_add(o, "attached_ids", ids);
	jsonw_str(o, "state", status_view_prog_state(row, dk));
	status_view_prog_rules(row, e, k, text, sizeof(text));
	jsonw_str(o, "enforces", e->rules_known ? text : NULL);
	return o;
}

bool status_view_kind_shown(const struct status_view_row *row, int k)
{
	const struct drift_kind *dk = &row->drift.kind[k];

	return dk->recorded || dk->nr_ours;
}

static struct json_object *rules_json(const struct status_view_row *row,
				      const struct status_view *e,
				      const struct status_view_rules *rules)
{
	struct json_object *o;
	char text[SH_STATUS_VIEW_TEXT_MAX];

	if (!e->rules_known)
		return NULL;
	o = json_object_new_object();
	jsonw_str(o, "policy", row->rec.policy);
	jsonw_str(o, "config", rules->cfg.path);
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		if (!status_view_kind_shown(row, k))
			continue;
		status_view_prog_rules(row, e, k, text, sizeof(text));
		jsonw_str(o, kind_get(k)->name, text);
	}
	return o;
}

void status_view_policy_hash_text(const struct status_view_row *row, char *buf,
				  size_t len)
{
	const struct apply_check *c = &row->check;
	const char *generic =
		c->generic ?
			"; it runs generic programs until `oci-sockopt-hook apply` swaps in its own copies" :
			"";

	if (!row->checked)
		snprintf(buf, len, "%016" PRIx64 " (the config cannot be read)",
			 apply_progs_hash(&row->rec.progs));
	else if (!c->config_hash)
		snprintf(
			buf, len,
			"%016" PRIx64
			"; the config gives it none now: %s (it keeps its programs until it restarts)",
			c->hash, c->why);
	else if (c->config_hash == c->hash)
		snprintf(buf, len, "%016" PRIx64 ", as the config has it%s",
			 c->hash, generic);
	else
		snprintf(buf, len,
			 "%016" PRIx64 "; the config's is %016" PRIx64
			 " (`oci-sockopt-hook apply` brings it)%s",
			 c->hash, c->config_hash, generic);
}

/* "policy": what it runs against what the config gives it now. */
static struct json_object *policy_hash_json(const struct status_view_row *row)
{
	const struct apply_check *c = &row->check;
	struct json_object *o = json_object_new_object();
	char hash[20];

	snprintf(hash, sizeof(hash), "%016" PRIx64,
		 apply_progs_hash(&row->rec.progs));
	jsonw_str(o, "hash", hash);
	snprintf(hash, sizeof(hash), "%016" PRIx64, c->config_hash);
	jsonw_str(o, "config_hash", c->config_hash ? hash : NULL);
	json_object_object_add(
		o, "current",
		row->checked ? json_object_new_boolean(apply_check_current(c)) :
			       NULL);
	json_object_object_add(
		o, "generic",
		json_object_new_boolean(apply_runs_generic(&row->rec.progs)));
	json_object_object_add(o, "reason",
			       c->reason ? json_object_new_string(c->reason) :
					   NULL);
	json_object_object_add(o, "message",
			       c->why[0] ? json_object_new_string(c->why) :
					   NULL);
	return o;
}

struct json_object *status_view_drift_json(const struct status_view_row *row)
{
	struct json_object *arr = json_object_new_array();
	char text[SH_DRIFT_TEXT_MAX];

	if (!row->live)
		return arr;
	if (row->drift_err) {
		snprintf(text, sizeof(text), "cannot query %s: %s",
			 row->rec.cg.rel, strerror(-row->drift_err));
		json_object_array_add(arr, json_object_new_string(text));
		return arr;
	}
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (drift_text(&row->drift.kind[k], row->rec.cg.rel, text,
			       sizeof(text)))
			json_object_array_add(arr,
					      json_object_new_string(text));
	return arr;
}

static struct json_object *caveats_json(const struct caveats *cav)
{
	struct json_object *arr = json_object_new_array();

	for (int i = 0; i < cav->nr; i++) {
		struct json_object *c = json_object_new_object();

		jsonw_str(c, "id", cav->c[i].id);
		jsonw_str(c, "text", cav->c[i].text);
		json_object_array_add(arr, c);
	}
	return arr;
}

struct json_object *status_view_json(const struct status_view_rules *rules,
				     const struct status_view_row *row)
{
	struct json_object *o = json_object_new_object();
	struct json_object *progs = json_object_new_array();
	struct status_view e;

	status_view_of(rules, row, &e);
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (status_view_kind_shown(row, k))
			json_object_array_add(progs, prog_json(row, &e, k));
	json_object_object_add(o, "programs", progs);
	json_object_object_add(o, "rules", rules_json(row, &e, rules));
	if (!e.rules_known)
		jsonw_str(o, "rules_error", e.rules_why);
	jsonw_str(o, "bypass", status_view_bypass_token(e.bypass));
	json_object_object_add(o, "policy_hash", policy_hash_json(row));
	json_object_object_add(o, "caveats", caveats_json(&e.cav));
	json_object_object_add(o, "drift", status_view_drift_json(row));
	return o;
}