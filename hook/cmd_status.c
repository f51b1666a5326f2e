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

#include "caveats.h"
#include "cg.h"
#include "cleanup.h"
#include "commands.h"
#include "config.h"
#include "counters.h"
#include "wouldhave.h"
#include "drift.h"
#include "enforce.h"
#include "kind.h"
#include "log.h"
#include "state.h"

/* How to show them, and where the rules come from. */
struct status_show {
	bool json, one, filtered;
	struct enforce_rules rules;
};

struct status_ctx {
	const struct cmd_args *args;
	bool seen; /* the ID operand names a record */
	struct enforce_row *rows;
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

bool cmd_status_match(const struct sh_record *rec, const struct cmd_args *args)
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
	struct enforce_row *row;

	if (ctx->nr == ctx->cap) {
		size_t cap = ctx->cap ? 2 * ctx->cap : 8;
		struct enforce_row *rows =
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

/* Audit mode: what the policy would have done (NULL when unreadable). */
static void probe_would_have(struct enforce_row *row)
{
	if (!row->rec.audit)
		return;
	row->wh = malloc(sizeof(*row->wh));
	if (row->wh &&
	    wouldhave_read(&row->rec.progs, row->rec.cg.id, row->wh) < 0) {
		free(row->wh);
		row->wh = NULL;
	}
}

static void free_rows(struct enforce_row *rows, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(rows[i].wh);
	free(rows);
}

/* Counters, and the kernel's view of the cgroup. */
static void probe_row(struct enforce_row *row)
{
	_cleanup_close_ int fd = open_live(&row->rec);

	drift_init(&row->rec, &row->drift);
	row->live = fd >= 0;
	if (!row->live)
		return;
	counters_read(&row->rec.progs, row->rec.cg.id, &row->c);
	probe_would_have(row);
	row->drift_err = drift_query(fd, &row->drift);
}

/* The rules come from the operator config as it is now. */
static void load_rules(const struct cmd_args *args, struct enforce_rules *rules)
{
	struct sh_error err = { 0 };
	const char *path = config_path(args->config);

	if (config_load(path, &rules->cfg, &err) == 0) {
		rules->cfg_ok = true;
		return;
	}
	snprintf(rules->cfg_error, sizeof(rules->cfg_error), "%s",
		 error_text(&err, err.code ? err.code : -EINVAL));
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

static int show_json(const struct status_show *show,
		     const struct enforce_row *rows, size_t nr)
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
		if (rows[i].wh)
			json_object_object_add(o, "would_have",
					       wouldhave_json(rows[i].wh));
		json_object_object_add(o, "enforcement",
				       enforce_json(&show->rules, &rows[i]));
		json_object_array_add(list, o);
	}
	puts(json_object_to_json_string_ext(
		list,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
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

static void row_cells(const struct enforce_row *row, char id[],
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

static const char *const headers[COL_TEXTS] = { "ID",	  "NAMESPACE",
						"POD",	  "CONTAINER",
						"POLICY", "BYPASS" };

static void print_table(const struct enforce_row *rows, size_t nr)
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

static void print_head(const struct enforce_row *row)
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
	printf("  mode:      %s (from %s)%s\n",
	       rec->audit ? "audit" : "enforce", dash(rec->mode_source),
	       rec->audit ? ": counts what it would do, applies nothing" : "");
	if (rec->footprint[0])
		printf("  record:    '%s': its recording goes to %s/%s when it is gone "
		       "(record %s shows it now)\n",
		       rec->footprint, rec->footprint_dir, rec->footprint,
		       rec->id);
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

/* Audit mode: "    would deny SOL_SOCKET SO_MARK (setsockopt): 3". */
static void print_would_have(const struct enforce_row *row)
{
	char text[256];

	if (!row->rec.audit)
		return;
	if (!row->wh) {
		printf("  would have: unknown (cannot read the counters)\n");
		return;
	}
	printf("  would have:%s\n", row->wh->nr ? "" : " nothing");
	for (int i = 0; i < row->wh->nr; i++) {
		wouldhave_text(&row->wh->e[i], text, sizeof(text));
		printf("    %s: %llu\n", text,
		       (unsigned long long)row->wh->e[i].n);
	}
}

static void print_counters(const struct enforce_row *row)
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
	print_would_have(row);
}

static void print_prog(const struct enforce_row *row,
		       const struct enforce_view *e, int k)
{
	const struct drift_kind *dk = &row->drift.kind[k];
	char text[SH_ENFORCE_TEXT_MAX + SH_ERROR_MSG_MAX];

	enforce_prog_rules(row, e, k, text, sizeof(text));
	printf("    %s", kind_type_name(dk->type));
	if (!row->live || row->drift_err || !dk->nr_ours)
		printf(" (record says prog %u: %s)", dk->recorded,
		       enforce_prog_state(row, dk));
	for (int i = 0; i < dk->nr_ours; i++)
		printf(" prog %u", dk->ours[i]);
	printf(" on %s: %s\n", row->rec.cg.rel, text);
}

static void print_drift(const struct enforce_row *row)
{
	struct json_object *arr = enforce_drift_json(row);
	size_t n = json_object_array_length(arr);

	printf("  drift:%s\n", n ? "" : "     none");
	for (size_t i = 0; i < n; i++)
		printf("    %s\n", json_object_get_string(
					   json_object_array_get_idx(arr, i)));
	json_object_put(arr);
}

static void print_enforcement(const struct status_show *show,
			      const struct enforce_row *row)
{
	struct enforce_view e;
	int shown = 0;

	enforce_view_of(&show->rules, row, &e);
	for (int k = 0; k < SH_PROG_KINDS; k++)
		shown += enforce_kind_shown(row, k);
	printf("  enforced by:%s\n", shown ? "" : " no program");
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (enforce_kind_shown(row, k))
			print_prog(row, &e, k);
	if (!e.rules_known)
		printf("  rules:     unknown: %s\n", e.rules_why);
	else if (row->rec.policy[0])
		printf("  rules:     policy %s as %s has it now%s\n",
		       row->rec.policy, show->rules.cfg.path,
		       row->rec.audit ? " (audit mode: counted, not applied)" :
					"");
	printf("  bypass-prot-mem: %s\n", enforce_bypass_text(e.bypass));
	print_drift(row);
	printf("  caveats:%s\n", e.cav.nr ? "" : "   none");
	for (int i = 0; i < e.cav.nr; i++)
		printf("    [%s] %s\n", e.cav.c[i].id, e.cav.c[i].text);
}

static void print_detail(const struct status_show *show,
			 const struct enforce_row *row)
{
	print_head(row);
	print_exec(&row->rec);
	print_counters(row);
	print_enforcement(show, row);
}

static int status_show(const struct status_show *show,
		       const struct enforce_row *rows, size_t nr)
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
		load_rules(args, &show.rules);
	show.one = args->argc > 0;
	show.filtered = filtered(args);
	r = status_show(&show, ctx.rows, ctx.nr);
	if (show.rules.cfg_ok)
		config_free(&show.rules.cfg);
	free_rows(ctx.rows, ctx.nr);
	return r;
}
