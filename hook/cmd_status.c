// SPDX-License-Identifier: GPL-2.0-only
/*
 * `status`: every container the hook manages, with who it is (namespace,
 * pod, container), its live counters, and what enforces what: the
 * programs the kernel really has on its cgroup (drift when the record
 * says otherwise), the rules they carry, bypass-prot-mem, and the caveats
 * of the security model that apply to it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "caveats.h"
#include "cg.h"
#include "cleanup.h"
#include "commands.h"
#include "config.h"
#include "counters.h"
#include "drift.h"
#include "enforce.h"
#include "kind.h"
#include "log.h"
#include "state.h"

/* One container, as the kernel sees it now. */
struct status_row {
	struct sh_record rec;
	bool live;
	struct sh_counters c;
	struct drift_report drift;
	int drift_err; /* the cgroup could not be queried */
};

/* How to show them, and the operator config the rules come from. */
struct status_show {
	bool json, one, filtered;
	bool cfg_ok;
	struct sh_config cfg;
	char cfg_error[SH_ERROR_MSG_MAX];
};

/* What enforces what for one container. */
struct status_enf {
	const struct sh_policy *policy;
	bool rules_known;
	char rules_why[SH_ERROR_MSG_MAX + 64];
	enum enforce_bypass bypass;
	struct caveats cav;
};

struct status_ctx {
	const struct cmd_args *args;
	bool seen; /* the ID operand names a record */
	struct status_row *rows;
	size_t nr, cap;
};

/* The record's cgroup still exists and is the same cgroup. */
static int open_live(const struct sh_record *rec)
{
	return cg_open_recorded(&rec->cg);
}

static bool filter_is(const char *want, const char *have)
{
	return !want || !strcmp(want, have);
}

bool cmd_status_match(const struct sh_record *rec,
		      const struct cmd_args *args)
{
	return filter_is(args->namespace_filter, rec->k8s_namespace) &&
	       filter_is(args->pod_filter, rec->pod) &&
	       filter_is(args->container_filter, rec->container) &&
	       filter_is(args->policy_filter, rec->policy);
}

/* As config_policy.c checks policy names. */
static bool valid_policy_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > SH_POLICY_NAME_MAX)
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == len;
}

const char *cmd_status_bad_filter(const struct cmd_args *args)
{
	if (args->namespace_filter && !pod_valid_name(args->namespace_filter))
		return "--namespace";
	if (args->pod_filter && !pod_valid_name(args->pod_filter))
		return "--pod";
	if (args->container_filter && !pod_valid_name(args->container_filter))
		return "--container";
	if (args->policy_filter && !valid_policy_name(args->policy_filter))
		return "--policy";
	return NULL;
}

static const char *filter_value(const struct cmd_args *args, const char *opt)
{
	if (!strcmp(opt, "--namespace"))
		return args->namespace_filter;
	if (!strcmp(opt, "--pod"))
		return args->pod_filter;
	if (!strcmp(opt, "--container"))
		return args->container_filter;
	return args->policy_filter;
}

static int add_row(struct status_ctx *ctx, const struct sh_record *rec)
{
	struct status_row *row;

	if (ctx->nr == ctx->cap) {
		size_t cap = ctx->cap ? 2 * ctx->cap : 8;
		struct status_row *rows =
			reallocarray(ctx->rows, cap, sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		ctx->rows = rows;
		ctx->cap = cap;
	}
	row = &ctx->rows[ctx->nr++];
	memset(row, 0, sizeof(*row));
	row->rec = *rec;
	return 0;
}

static int collect(const struct sh_record *rec, void *data)
{
	struct status_ctx *ctx = data;
	const struct cmd_args *args = ctx->args;

	if (args->argc > 0 && strcmp(args->argv[0], rec->id))
		return 0;
	ctx->seen = true;
	if (!cmd_status_match(rec, args))
		return 0;
	return add_row(ctx, rec);
}

/* Counters, and the kernel's view of the cgroup. */
static void probe_row(struct status_row *row)
{
	_cleanup_close_ int fd = open_live(&row->rec);

	drift_init(&row->rec, &row->drift);
	row->live = fd >= 0;
	if (!row->live)
		return;
	counters_read(&row->rec.progs, row->rec.cg.id, &row->c);
	row->drift_err = drift_query(fd, &row->drift);
}

/* The rules come from the operator config as it is now. */
static void load_rules(const struct cmd_args *args, struct status_show *show)
{
	struct sh_error err = { 0 };
	const char *path = config_path(args->config);

	if (config_load(path, &show->cfg, &err) == 0) {
		show->cfg_ok = true;
		return;
	}
	snprintf(show->cfg_error, sizeof(show->cfg_error), "%s",
		 error_text(&err, err.code ? err.code : -EINVAL));
}

static void enf_compute(const struct status_show *show,
			const struct status_row *row, struct status_enf *e)
{
	const struct sh_record *rec = &row->rec;
	struct caveats_input in = { .rec = rec, .live = row->live };

	memset(e, 0, sizeof(*e));
	if (!show->cfg_ok) {
		snprintf(e->rules_why, sizeof(e->rules_why),
			 "the operator config cannot be read: %s",
			 show->cfg_error);
	} else if (rec->policy[0]) {
		e->policy = config_find_policy(&show->cfg, rec->policy);
		e->rules_known = e->policy != NULL;
		if (!e->policy)
			snprintf(e->rules_why, sizeof(e->rules_why),
				 "policy '%s' is no longer in %s", rec->policy,
				 show->cfg.path);
	} else {
		e->rules_known = true; /* no named policy: no rules */
	}
	e->bypass = enforce_bypass_state(rec->bypass, rec->progs.bypass_active);
	in.policy = e->policy;
	in.other_programs = row->live ? row->drift.other : "";
	caveats_collect(&in, &e->cav);
}

static void rules_text(const struct status_row *row,
		       const struct status_enf *e, int k, char *buf,
		       size_t len)
{
	if (!e->rules_known)
		snprintf(buf, len, "rules unknown: %s", e->rules_why);
	else
		enforce_rules_text(e->policy, k, row->rec.progs.bypass_active,
				   buf, len);
}

/* ---- JSON ---------------------------------------------------------- */

static void add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static struct json_object *exec_json(const struct sh_record *rec)
{
	struct json_object *o = json_object_new_object();
	struct caveats_input in = { .rec = rec, .live = true };
	struct caveats cav;

	json_object_object_add(o, "policed",
			       json_object_new_boolean(!rec->cg.created));
	if (rec->cg.created) {
		caveats_collect(&in, &cav);
		add_str(o, "note", cav.c[0].text);
	}
	return o;
}

static struct json_object *counters_json(const struct sh_counters *c)
{
	struct json_object *o = json_object_new_object();

	for (int i = 0; i < SH_CNT_MAX; i++)
		json_object_object_add(o, counters_names[i],
				       json_object_new_int64((int64_t)c->v[i]));
	return o;
}

static const char *prog_state(const struct status_row *row,
			      const struct drift_kind *k)
{
	if (!row->live)
		return "cgroup_gone";
	if (row->drift_err)
		return "unknown";
	return drift_state_name(drift_state_of(k));
}

static struct json_object *prog_json(const struct status_row *row,
				     const struct status_enf *e, int k)
{
	const struct drift_kind *dk = &row->drift.kind[k];
	struct json_object *o = json_object_new_object();
	struct json_object *ids = json_object_new_array();
	char text[SH_ENFORCE_TEXT_MAX + SH_ERROR_MSG_MAX];

	add_str(o, "attach", kind_type_name(dk->type));
	add_str(o, "bpf_attach_type", libbpf_bpf_attach_type_str(dk->type));
	add_str(o, "cgroup", row->rec.cg.rel);
	json_object_object_add(o, "recorded_id",
			       dk->recorded ? json_object_new_int64(
						      dk->recorded) :
					      NULL);
	for (int i = 0; i < dk->nr_ours; i++)
		json_object_array_add(ids, json_object_new_int64(dk->ours[i]));
	json_object_object_add(o, "attached_ids", ids);
	add_str(o, "state", prog_state(row, dk));
	rules_text(row, e, k, text, sizeof(text));
	add_str(o, "enforces", text);
	return o;
}

static bool kind_shown(const struct status_row *row, int k)
{
	const struct drift_kind *dk = &row->drift.kind[k];

	return dk->recorded || dk->nr_ours;
}

static struct json_object *rules_json(const struct status_row *row,
				      const struct status_enf *e,
				      const struct status_show *show)
{
	struct json_object *o;
	char text[SH_ENFORCE_TEXT_MAX];

	if (!e->rules_known)
		return NULL;
	o = json_object_new_object();
	add_str(o, "policy", row->rec.policy);
	add_str(o, "config", show->cfg.path);
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		if (!kind_shown(row, k))
			continue;
		rules_text(row, e, k, text, sizeof(text));
		add_str(o, kind_get(k)->name, text);
	}
	return o;
}

static struct json_object *drift_json(const struct status_row *row)
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

		add_str(c, "id", cav->c[i].id);
		add_str(c, "text", cav->c[i].text);
		json_object_array_add(arr, c);
	}
	return arr;
}

static struct json_object *enforcement_json(const struct status_show *show,
					    const struct status_row *row)
{
	struct json_object *o = json_object_new_object();
	struct json_object *progs = json_object_new_array();
	struct status_enf e;

	enf_compute(show, row, &e);
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (kind_shown(row, k))
			json_object_array_add(progs, prog_json(row, &e, k));
	json_object_object_add(o, "programs", progs);
	json_object_object_add(o, "rules", rules_json(row, &e, show));
	if (!e.rules_known)
		add_str(o, "rules_error", e.rules_why);
	add_str(o, "bypass", enforce_bypass_token(e.bypass));
	json_object_object_add(o, "caveats", caveats_json(&e.cav));
	json_object_object_add(o, "drift", drift_json(row));
	return o;
}

static int show_json(const struct status_show *show,
		     const struct status_row *rows, size_t nr)
{
	_cleanup_json_ struct json_object *list = json_object_new_array();

	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		struct json_object *o = record_to_json(&rows[i].rec);

		if (!o)
			return -ENOMEM;
		json_object_object_add(o, "live",
				       json_object_new_boolean(rows[i].live));
		json_object_object_add(o, "exec", exec_json(&rows[i].rec));
		json_object_object_add(o, "counters",
				       counters_json(&rows[i].c));
		json_object_object_add(o, "enforcement",
				       enforcement_json(show, &rows[i]));
		json_object_array_add(list, o);
	}
	puts(json_object_to_json_string_ext(
		list, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	return 0;
}

/* ---- text ---------------------------------------------------------- */

static const char *dash(const char *s)
{
	return s[0] ? s : "-";
}

/* A runtime's 64 hex digit id is shown by its first 12, as docker does. */
void cmd_status_short_id(const char *id, char *buf, size_t len)
{
	if (strlen(id) == 64 && strspn(id, "0123456789abcdef") == 64)
		snprintf(buf, len, "%.12s", id);
	else
		snprintf(buf, len, "%s", id);
}

enum { COL_ID, COL_NS, COL_POD, COL_CT, COL_POLICY, COL_BYPASS, COL_TEXTS };

static void row_cells(const struct status_row *row, char id[],
		      const char *cell[COL_TEXTS])
{
	const struct sh_record *rec = &row->rec;

	cmd_status_short_id(rec->id, id, SH_MAX_ID_LEN + 1);
	cell[COL_ID] = id;
	cell[COL_NS] = dash(rec->k8s_namespace);
	cell[COL_POD] = dash(rec->pod);
	cell[COL_CT] = dash(rec->container);
	cell[COL_POLICY] = dash(rec->policy);
	cell[COL_BYPASS] = enforce_bypass_token(
		enforce_bypass_state(rec->bypass, rec->progs.bypass_active));
}

static void row_counts(const struct sh_counters *c, uint64_t n[4])
{
	n[0] = c->v[SH_CNT_SOCK_CREATED];
	n[1] = c->v[SH_CNT_SOCK_DENIED] + c->v[SH_CNT_SET_DENIED] +
	       c->v[SH_CNT_GET_DENIED];
	n[2] = c->v[SH_CNT_SET_CLAMPED];
	n[3] = c->v[SH_CNT_SET_FORCED] + c->v[SH_CNT_GET_FORCED];
}

static const char *const headers[COL_TEXTS] = { "ID",	     "NAMESPACE",
						"POD",	     "CONTAINER",
						"POLICY",    "BYPASS" };

static void print_table(const struct status_row *rows, size_t nr)
{
	int w[COL_TEXTS];
	char id[SH_MAX_ID_LEN + 1];
	const char *cell[COL_TEXTS];
	uint64_t n[4];

	for (int c = 0; c < COL_TEXTS; c++)
		w[c] = (int)strlen(headers[c]);
	for (size_t i = 0; i < nr; i++) {
		row_cells(&rows[i], id, cell);
		for (int c = 0; c < COL_TEXTS; c++)
			if ((int)strlen(cell[c]) > w[c])
				w[c] = (int)strlen(cell[c]);
	}
	for (int c = 0; c < COL_TEXTS; c++)
		printf("%-*s  ", w[c], headers[c]);
	printf("SOCKETS  DENIED  CLAMPED  FORCED\n");
	for (size_t i = 0; i < nr; i++) {
		row_cells(&rows[i], id, cell);
		row_counts(&rows[i].c, n);
		for (int c = 0; c < COL_TEXTS; c++)
			printf("%-*s  ", w[c], cell[c]);
		printf("%7llu  %6llu  %7llu  %6llu\n", (unsigned long long)n[0],
		       (unsigned long long)n[1], (unsigned long long)n[2],
		       (unsigned long long)n[3]);
	}
}

static void print_head(const struct status_row *row)
{
	const struct sh_record *rec = &row->rec;

	printf("%s\n", rec->id);
	printf("  namespace: %s\n  pod:       %s\n  container: %s\n",
	       dash(rec->k8s_namespace), dash(rec->pod), dash(rec->container));
	printf("  cgroup:    %s%s%s\n", rec->cg.rel,
	       rec->cg.created ? " (made by the hook)" : "",
	       row->live ? "" : " (gone: stale record)");
	printf("  policy:    %s (from %s)\n", dash(rec->policy),
	       rec->policy_source);
	printf("  bypass:    %s (from %s)%s\n", rec->bypass ? "on" : "off",
	       rec->bypass_source,
	       rec->bypass && !rec->progs.bypass_active ?
		       ", not supported by this kernel" :
		       "");
}

static void print_exec(const struct sh_record *rec)
{
	struct caveats_input in = { .rec = rec, .live = true };
	struct caveats cav;

	if (!rec->cg.created) {
		printf("  exec:      policed (exec joins the container's cgroup)\n");
		return;
	}
	caveats_collect(&in, &cav);
	printf("  exec:      %s\n", cav.c[0].text);
}

static void print_counters(const struct status_row *row)
{
	const struct sh_record *rec = &row->rec;

	printf("  programs: ");
	for (int i = 0; i < rec->progs.nr; i++)
		printf(" %s=%u", kind_type_name(rec->progs.prog[i].type),
		       rec->progs.prog[i].id);
	printf("\n  counters: ");
	for (int i = 0; i < SH_CNT_MAX; i++)
		if (row->c.v[i])
			printf(" %s=%llu", counters_names[i],
			       (unsigned long long)row->c.v[i]);
	printf("\n");
}

static void print_prog(const struct status_row *row,
		       const struct status_enf *e, int k)
{
	const struct drift_kind *dk = &row->drift.kind[k];
	char text[SH_ENFORCE_TEXT_MAX + SH_ERROR_MSG_MAX];

	rules_text(row, e, k, text, sizeof(text));
	printf("    %s", kind_type_name(dk->type));
	if (!row->live || row->drift_err || !dk->nr_ours)
		printf(" (record says prog %u: %s)", dk->recorded,
		       prog_state(row, dk));
	for (int i = 0; i < dk->nr_ours; i++)
		printf(" prog %u", dk->ours[i]);
	printf(" on %s: %s\n", row->rec.cg.rel, text);
}

static void print_drift(const struct status_row *row)
{
	struct json_object *arr = drift_json(row);
	size_t n = json_object_array_length(arr);

	printf("  drift:     %s\n", n ? "" : "none");
	for (size_t i = 0; i < n; i++)
		printf("    %s\n", json_object_get_string(
				       json_object_array_get_idx(arr, i)));
	json_object_put(arr);
}

static void print_enforcement(const struct status_show *show,
			      const struct status_row *row)
{
	struct status_enf e;

	enf_compute(show, row, &e);
	printf("  enforced by:\n");
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (kind_shown(row, k))
			print_prog(row, &e, k);
	printf("  bypass-prot-mem: %s\n", enforce_bypass_text(e.bypass));
	print_drift(row);
	printf("  caveats:   %s\n", e.cav.nr ? "" : "none");
	for (int i = 0; i < e.cav.nr; i++)
		printf("    [%s] %s\n", e.cav.c[i].id, e.cav.c[i].text);
}

static void print_detail(const struct status_show *show,
			 const struct status_row *row)
{
	print_head(row);
	print_exec(&row->rec);
	print_counters(row);
	print_enforcement(show, row);
}

static int status_show(const struct status_show *show,
		       const struct status_row *rows, size_t nr)
{
	if (show->json)
		return show_json(show, rows, nr);
	if (!nr && !show->one && !show->filtered) {
		printf("no containers are managed by the hook\n");
		return 0;
	}
	if (show->one && nr == 1) {
		print_detail(show, &rows[0]);
		return 0;
	}
	print_table(rows, nr);
	for (size_t i = 0; i < nr; i++) {
		printf("\n");
		print_detail(show, &rows[i]);
	}
	return 0;
}

static int usage_error(const struct cmd_args *args, const char *opt)
{
	const char *v = filter_value(args, opt);

	log_error(
		"status %s %s: not a valid name (a letter or digit, then letters, digits, '-', '_' or '.')",
		opt, LOG_Q(v));
	return CMD_USAGE;
}

static int list(struct status_ctx *ctx, struct sh_error *err)
{
	/* An unsafe state directory is one line of its own. */
	int r = state_dir_check(err);

	if (r)
		return r;
	r = state_foreach(collect, ctx);
	if (r)
		return error_errno(err, r, "cannot list %s", state_dir());
	if (ctx->args->argc > 0 && !ctx->seen)
		return error_set(err, -ENOENT,
				 "no container '%.64s' is managed by the hook",
				 ctx->args->argv[0]);
	return 0;
}

static bool filtered(const struct cmd_args *args)
{
	return args->namespace_filter || args->pod_filter ||
	       args->container_filter || args->policy_filter;
}

int cmd_status(const struct cmd_args *args)
{
	struct status_ctx ctx = { .args = args };
	struct status_show show = { .json = args->json };
	struct sh_error err = { 0 };
	const char *bad = cmd_status_bad_filter(args);
	int r;

	if (bad)
		return usage_error(args, bad);
	r = list(&ctx, &err);
	if (r) {
		free(ctx.rows);
		error_report(&err, r);
		return r;
	}
	for (size_t i = 0; i < ctx.nr; i++)
		probe_row(&ctx.rows[i]);
	if (ctx.nr)
		load_rules(args, &show);
	show.one = args->argc > 0;
	show.filtered = filtered(args);
	r = status_show(&show, ctx.rows, ctx.nr);
	if (show.cfg_ok)
		config_free(&show.cfg);
	free(ctx.rows);
	return r;
}
