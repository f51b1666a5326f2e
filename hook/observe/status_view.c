// SPDX-License-Identifier: GPL-2.0-only
/*
 * A policy's rules, summed up per program for `status`: what the
 * sock_create, setsockopt and getsockopt programs do, in the operator's
 * words (option and family names as the config wrote them).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/render.h"
#include "lib/kind.h"
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
		opt_text(&t, p->get_rules, p->nr_get,
			 /* default_deny= */ false);
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
	const struct sh_attachment *att = &row->att;
	struct caveats_input in = { .att = att, .live = row->live };

	memset(e, 0, sizeof(*e));
	if (!rules->cfg_ok) {
		snprintf(e->rules_why, sizeof(e->rules_why),
			 "the operator config cannot be read: %s",
			 rules->cfg_error);
	} else if (att->policy[0]) {
		e->policy = config_find_policy(&rules->cfg, att->policy);
		e->rules_known = e->policy != NULL;
		if (!e->policy)
			snprintf(e->rules_why, sizeof(e->rules_why),
				 "policy '%s' is no longer in %s", att->policy,
				 rules->cfg.path);
	} else {
		e->rules_known = true; /* no named policy: no rules */
	}
	e->bypass =
		status_view_bypass_state(att->bypass, att->progs.bypass_active);
	in.policy = e->policy;
	in.other_programs = row->live ? row->drift.other : "";
	in.families = rules->families;
	status_view_caveats(&in, &e->cav);
}

void status_view_prog_rules(const struct status_view_row *row,
			    const struct status_view *e, int k, char *buf,
			    size_t len)
{
	if (!e->rules_known)
		snprintf(buf, len, "rules unknown");
	else
		status_view_rules_text(e->policy, k,
				       row->att.progs.bypass_active, buf, len);
}

const char *status_view_prog_state(const struct status_view_row *row,
				   const struct drift_kind *k)
{
	if (!row->live)
		return "cgroup_gone";
	if (row->drift_err)
		return "unknown";
	return status_view_drift_state_name(status_view_drift_state_of(k));
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
	jsonw_str(o, "cgroup", row->att.cg.rel);
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
	jsonw_str(o, "policy", row->att.policy);
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
			 apply_progs_hash(&row->att.progs));
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
		 apply_progs_hash(&row->att.progs));
	jsonw_str(o, "hash", hash);
	snprintf(hash, sizeof(hash), "%016" PRIx64, c->config_hash);
	jsonw_str(o, "config_hash", c->config_hash ? hash : NULL);
	json_object_object_add(
		o, "current",
		row->checked ? json_object_new_boolean(apply_check_current(c)) :
			       NULL);
	json_object_object_add(
		o, "generic",
		json_object_new_boolean(apply_runs_generic(&row->att.progs)));
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
			 row->att.cg.rel, strerror(-row->drift_err));
		json_object_array_add(arr, json_object_new_string(text));
		return arr;
	}
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (status_view_drift_text(&row->drift.kind[k], row->att.cg.rel,
					   text, sizeof(text)))
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

/*
 * The caveats of the security model (docs/security.md), each asked of one
 * container: what it has attached, how its cgroup came to be, and what
 * else the kernel runs for it. The texts name the mitigation.
 */

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

static const char *const caveat_ids[CAVEATS_MAX] = {
	[CAVEATS_STALE_ATTACHMENT] = "stale_record",
	[CAVEATS_HOOK_MADE_CGROUP] = "hook_made_cgroup",
	[CAVEATS_COMPAT_SYSCALLS] = "compat_syscalls",
	[CAVEATS_PACKET_SOCKETS] = "packet_sockets",
	[CAVEATS_MPTCP_SUBFLOWS] = "mptcp_subflows",
	[CAVEATS_BYPASS_FELL_BACK] = "bypass_fell_back",
	[CAVEATS_OTHER_PROGRAMS] = "other_programs",
	[CAVEATS_SOCK_DIAG] = "sock_diag",
	[CAVEATS_KERNEL_SOCKETS] = "kernel_sockets",
	[CAVEATS_ROUTE_METRICS] = "route_metrics",
};

const char *status_view_caveat_name(enum caveats_id id)
{
	return caveat_ids[id];
}

static void add(struct caveats *ret, enum caveats_id id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(struct caveats *ret, enum caveats_id id, const char *fmt, ...)
{
	struct caveat *c = &ret->c[ret->nr++];
	va_list ap;

	c->id = caveat_ids[id];
	va_start(ap, fmt);
	vsnprintf(c->text, sizeof(c->text), fmt, ap);
	va_end(ap);
}

static bool has_kind(const struct sh_attachment *att, enum sh_prog_kind kind)
{
	for (int i = 0; i < att->progs.nr; i++)
		if (att->progs.prog[i].type == kind_get(kind)->type)
			return true;
	return false;
}

static bool mark_or_priority(const struct sh_policy *p)
{
	return p && (p->has_mark || p->has_priority);
}

/* A stamped mark or priority that MPTCP subflows do not carry. */
static bool mptcp_open(const struct sh_policy *p)
{
	if (!p || (!p->has_mark && !p->has_priority))
		return false;
	for (__u32 i = 0; i < p->nr_deny; i++)
		if (p->deny[i].protocol == IPPROTO_MPTCP ||
		    (p->deny[i].protocol == SH_ANY &&
		     p->deny[i].family == SH_ANY && p->deny[i].type == SH_ANY))
			return false;
	return true;
}

/* A rule on what a route's metrics also set: the congestion control
 * (RTAX_CC_ALGO) and the TTL or hop limit (RTAX_HOPLIMIT). */
static bool route_governed(const struct sh_policy *p)
{
	static const struct sh_opt_key keys[] = {
		{ IPPROTO_TCP, 13 }, /* TCP_CONGESTION */
		{ IPPROTO_IP, 2 }, /* IP_TTL */
		{ IPPROTO_IPV6, 16 }, /* IPV6_UNICAST_HOPS */
	};

	if (!p)
		return false;
	for (size_t i = 0; i < p->nr_set; i++)
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (p->set_rules[i].key.level == keys[k].level &&
			    p->set_rules[i].key.optname == keys[k].optname &&
			    p->set_rules[i].rule.action != SH_ACTION_ALLOW)
				return true;
	return false;
}

static void kernel_caveats(const struct caveats_input *in, struct caveats *ret)
{
	const struct sh_attachment *att = in->att;

	if (has_kind(att, SH_PROG_SET) || has_kind(att, SH_PROG_GET))
		add(ret, CAVEATS_COMPAT_SYSCALLS,
		    "32-bit compat syscalls (a -m32 binary, int $0x80, io_uring of a 32-bit process) skip the setsockopt/getsockopt programs: use a seccomp profile that lists only the native ABI (examples/seccomp-no-compat.json)");
	if (has_kind(att, SH_PROG_SOCK))
		add(ret, CAVEATS_PACKET_SOCKETS,
		    "cgroup/sock_create sees only AF_INET/AF_INET6: AF_PACKET sockets (also through SOCK_PACKET, io_uring and the i386 socket/socketcall syscalls) get no deny rule, mark or priority: drop CAP_NET_RAW or use examples/seccomp-no-packet.json (or seccomp-socket-allowlist.json)");
	if (has_kind(att, SH_PROG_SOCK) && in->families && in->families[0])
		add(ret, CAVEATS_KERNEL_SOCKETS,
		    "this kernel offers %s: their TCP/UDP goes through sockets the kernel makes itself, with no deny rule, mark or priority: allow only the families the workload needs with seccomp (examples/seccomp-socket-allowlist.json)",
		    in->families);
	if (has_kind(att, SH_PROG_GET) || mark_or_priority(in->policy))
		add(ret, CAVEATS_SOCK_DIAG,
		    "sock_diag netlink (ss -tie) shows each socket's real congestion control, TOS, priority and, with CAP_NET_ADMIN, mark, whatever getsockopt rules return: block NETLINK_SOCK_DIAG with seccomp (examples/seccomp-socket-allowlist.json)");
	if (mptcp_open(in->policy))
		add(ret, CAVEATS_MPTCP_SUBFLOWS,
		    "the policy stamps a mark or priority but does not deny IPPROTO_MPTCP: MPTCP subflows may go out without the stamp");
	if (has_kind(att, SH_PROG_SET) && route_governed(in->policy))
		add(ret, CAVEATS_ROUTE_METRICS,
		    "a route's metrics (congctl, hoplimit) give sockets that never call setsockopt their congestion control and TTL, and a locked congctl replaces a forced TCP_CONGESTION at connect(): a container with CAP_NET_ADMIN in its network namespace can set them; drop CAP_NET_ADMIN");
}

void status_view_caveats(const struct caveats_input *in, struct caveats *ret)
{
	const struct sh_attachment *att = in->att;

	ret->nr = 0;
	if (!in->live)
		add(ret, CAVEATS_STALE_ATTACHMENT,
		    "the cgroup %s is gone: the record is stale (gc releases it)",
		    att->cg.rel);
	if (att->cg.created)
		add(ret, CAVEATS_HOOK_MADE_CGROUP,
		    "NOT policed: the hook made this cgroup, so processes started with runc/crun exec stay outside it, in %s or the runtime's cgroup: run the runtime with a cgroup manager, or set on_shared_cgroup \"refuse\"",
		    att->cg.parent_rel);
	kernel_caveats(in, ret);
	if (att->bypass && !att->progs.bypass_active)
		add(ret, CAVEATS_BYPASS_FELL_BACK,
		    "bypass-prot-mem was asked for (by %s) but this kernel lacks SK_BPF_BYPASS_PROT_MEM: sockets are charged to tcp_mem",
		    att->bypass_source);
	if (in->other_programs && in->other_programs[0])
		add(ret, CAVEATS_OTHER_PROGRAMS,
		    "other programs run for this cgroup too (%s): on an ancestor with BPF_F_ALLOW_MULTI they run after ours and can undo its verdicts",
		    in->other_programs);
}

/*
 * The kernel's answer to "what runs for this cgroup": the programs
 * attached to it (bpf_prog_query, as `bpftool cgroup show`), and the
 * effective ones, which include what ancestors attached with
 * BPF_F_ALLOW_MULTI. Ours are the sh_* programs; the attachment is checked
 * against them, never trusted alone.
 */

#define DRIFT_QUERY_MAX 64
#define OUR_PREFIX "sh_"

void status_view_drift_init(const struct sh_attachment *att,
			    struct drift_report *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		ret->kind[k].type = kind_get(k)->type;
		for (int i = 0; i < att->progs.nr; i++)
			if (att->progs.prog[i].type == ret->kind[k].type)
				ret->kind[k].recorded = att->progs.prog[i].id;
	}
}

static int query(int cg_fd, enum bpf_attach_type type, __u32 flags, __u32 *ids,
		 __u32 *n)
{
	__u32 attach_flags = 0;

	*n = DRIFT_QUERY_MAX;
	if (bpf_prog_query(cg_fd, type, flags, &attach_flags, ids, n) == 0)
		return 0;
	if (errno == ENOSPC) { /* more than we look at: the first ones */
		*n = DRIFT_QUERY_MAX;
		return 0;
	}
	return -errno;
}

static bool ours(__u32 id)
{
	char name[SH_BPF_NAME_MAX];

	kind_prog_name(id, name);
	return !strncmp(name, OUR_PREFIX, strlen(OUR_PREFIX));
}

static void add_other(struct drift_report *ret, enum bpf_attach_type type,
		      __u32 id)
{
	size_t pos = strlen(ret->other);
	char name[SH_BPF_NAME_MAX];

	kind_prog_name(id, name);
	snprintf(ret->other + pos, sizeof(ret->other) - pos, "%s%s %u (%s)",
		 pos ? ", " : "", kind_type_name(type), id, name);
}

static int query_kind(int cg_fd, struct drift_report *ret, int k)
{
	struct drift_kind *dk = &ret->kind[k];
	__u32 ids[DRIFT_QUERY_MAX], n;
	int r = query(cg_fd, dk->type, 0, ids, &n);

	if (r)
		return r;
	for (__u32 i = 0; i < n; i++)
		if (dk->nr_ours < SH_DRIFT_OURS_MAX && ours(ids[i]))
			dk->ours[dk->nr_ours++] = ids[i];
	r = query(cg_fd, dk->type, BPF_F_QUERY_EFFECTIVE, ids, &n);
	if (r)
		return r;
	for (__u32 i = 0; i < n; i++)
		if (!ours(ids[i]))
			add_other(ret, dk->type, ids[i]);
	return 0;
}

int status_view_drift_query(int cg_fd, struct drift_report *ret)
{
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		int r = query_kind(cg_fd, ret, k);

		if (r)
			return r;
	}
	return 0;
}

enum drift_state status_view_drift_state_of(const struct drift_kind *k)
{
	bool found = false;

	for (int i = 0; i < k->nr_ours; i++)
		found = found || k->ours[i] == k->recorded;
	if (!k->recorded)
		return k->nr_ours ? DRIFT_UNRECORDED : DRIFT_NONE;
	if (!k->nr_ours)
		return DRIFT_MISSING;
	if (!found)
		return DRIFT_REPLACED;
	return k->nr_ours > 1 ? DRIFT_EXTRA : DRIFT_ATTACHED;
}

const char *status_view_drift_state_name(enum drift_state s)
{
	static const char *const names[] = {
		[DRIFT_NONE] = "none",	     [DRIFT_ATTACHED] = "attached",
		[DRIFT_MISSING] = "missing", [DRIFT_REPLACED] = "replaced",
		[DRIFT_EXTRA] = "extra",     [DRIFT_UNRECORDED] = "unrecorded",
	};

	return names[s];
}

static void ids_text(const struct drift_kind *k, char *buf, size_t len)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (int i = 0; i < k->nr_ours && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%u",
					i ? ", " : "", k->ours[i]);
}

int status_view_drift_text(const struct drift_kind *k, const char *cg_rel,
			   char *buf, size_t len)
{
	const char *type = kind_type_name(k->type);
	char ids[SH_DRIFT_OURS_MAX * 12];

	ids_text(k, ids, sizeof(ids));
	switch (status_view_drift_state_of(k)) {
	case DRIFT_MISSING:
		snprintf(buf, len,
			 "record says %s program %u on %s, the cgroup has none",
			 type, k->recorded, cg_rel);
		return 1;
	case DRIFT_REPLACED:
	case DRIFT_EXTRA:
		snprintf(buf, len,
			 "record says %s program %u on %s, the cgroup has %s",
			 type, k->recorded, cg_rel, ids);
		return 1;
	case DRIFT_UNRECORDED:
		snprintf(
			buf, len,
			"the record names no %s program on %s, the cgroup has %s",
			type, cg_rel, ids);
		return 1;
	default:
		return 0;
	}
}
