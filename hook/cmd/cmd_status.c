// SPDX-License-Identifier: GPL-2.0-only
/*
 * `status`: every container the hook manages, with who it is (namespace,
 * pod, container), its live counters, and what enforces what: the
 * programs the kernel really has on its cgroup (drift when the attachment
 * says otherwise), the rules they carry, bypass-prot-mem, and the caveats
 * of the security model that apply to it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/cg.h"
#include "cmd/commands.h"
#include "config/config.h"
#include "input/container.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "lib/kind.h"
#include "lib/log.h"
#include "observe/counters.h"
#include "observe/status_view.h"
#include "prog/keys.h"
#include "state/state.h"

struct status_options {
	const char *config; /* --config, or NULL */
	bool json;
	const char *id; /* the ID operand, or NULL: every container */
	struct cmd_status_filter filter;
};

/* How to show them, and where the rules come from. */
struct status_show {
	bool json, one, filtered;
	struct status_view_rules rules;
};

struct status_ctx {
	const struct status_options *opts;
	bool seen; /* the ID operand names an attachment */
	struct status_view_row *rows;
	size_t nr, cap;
};

/* The attachment's cgroup still exists and is the same cgroup. */
static int open_live(const struct sh_attachment *att)
{
	return cg_open_attached(&att->cg);
}

static bool filter_is(const char *want, const char *have)
{
	return !want || !strcmp(want, have);
}

bool cmd_status_match(const struct sh_attachment *att,
		      const struct cmd_status_filter *f)
{
	return filter_is(f->k8s_namespace, att->k8s_namespace) &&
	       filter_is(f->pod, att->pod) &&
	       filter_is(f->container, att->container) &&
	       filter_is(f->policy, att->policy);
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

const char *cmd_status_bad_filter(const struct cmd_status_filter *f)
{
	if (f->k8s_namespace && !container_pod_valid_name(f->k8s_namespace))
		return "--namespace";
	if (f->pod && !container_pod_valid_name(f->pod))
		return "--pod";
	if (f->container && !container_pod_valid_name(f->container))
		return "--container";
	if (f->policy && !valid_policy_name(f->policy))
		return "--policy";
	return NULL;
}

static const char *filter_value(const struct cmd_status_filter *f,
				const char *opt)
{
	if (!strcmp(opt, "--namespace"))
		return f->k8s_namespace;
	if (!strcmp(opt, "--pod"))
		return f->pod;
	if (!strcmp(opt, "--container"))
		return f->container;
	return f->policy;
}

static int add_row(struct status_ctx *ctx, const struct sh_attachment *att)
{
	struct status_view_row *row;

	if (ctx->nr == ctx->cap) {
		size_t cap = ctx->cap ? 2 * ctx->cap : 8;
		struct status_view_row *rows =
			reallocarray(ctx->rows, cap, sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		ctx->rows = rows;
		ctx->cap = cap;
	}
	row = &ctx->rows[ctx->nr++];
	memset(row, 0, sizeof(*row));
	row->att = *att;
	return 0;
}

static int collect(const struct sh_attachment *att, void *data)
{
	struct status_ctx *ctx = data;
	const struct status_options *opts = ctx->opts;

	if (opts->id && strcmp(opts->id, att->id))
		return 0;
	ctx->seen = true;
	if (!cmd_status_match(att, &opts->filter))
		return 0;
	return add_row(ctx, att);
}

/* Audit mode: what the policy would have done (NULL when unreadable). */
static void probe_would_have(struct status_view_row *row)
{
	if (!row->att.audit)
		return;
	row->wh = malloc(sizeof(*row->wh));
	if (row->wh &&
	    counters_audit_read(&row->att.progs, row->att.cg.id, row->wh) < 0) {
		free(row->wh);
		row->wh = NULL;
	}
}

static void free_rows(struct status_view_row *rows, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(rows[i].wh);
	free(rows);
}

/* Counters, and the kernel's view of the cgroup. */
static void probe_row(struct status_view_row *row)
{
	_cleanup_close_ int fd = open_live(&row->att);

	status_view_drift_init(&row->att, &row->drift);
	row->live = fd >= 0;
	if (!row->live)
		return;
	counters_read(&row->att.progs, row->att.cg.id, &row->c);
	probe_would_have(row);
	row->drift_err = status_view_drift_query(fd, &row->drift);
}

/* Its policy hash against the config's: no program is loaded to learn
 * whether the kernel takes the bypass variant, the sysctl of the same
 * series tells. */
static void check_row(const struct sh_config *cfg, struct status_view_row *row)
{
	bool bypass_ok = access("/proc/sys/net/core/bypass_prot_mem", F_OK) ==
			 0;

	apply_check(cfg, &row->att, bypass_ok, &row->check);
	row->checked = true;
}

/* The rules come from the operator config as it is now. */
static void load_rules(const struct status_options *opts,
		       struct status_view_rules *rules)
{
	struct sh_error err = { 0 };
	const char *path = config_path(opts->config);
	struct family_seen seen[FAMILIES_MAX];

	families_probe(seen);
	families_text(seen, rules->families, sizeof(rules->families));
	if (config_load(path, &rules->cfg, &err) == 0) {
		rules->cfg_ok = true;
		return;
	}
	snprintf(rules->cfg_error, sizeof(rules->cfg_error), "%s",
		 error_text(&err, err.code ? err.code : -EINVAL));
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

static void row_cells(const struct status_view_row *row, char id[],
		      const char *cell[COL_TEXTS])
{
	const struct sh_attachment *att = &row->att;

	cmd_status_short_id(att->id, id, SH_MAX_ID_LEN + 1);
	cell[COL_ID] = id;
	cell[COL_NS] = dash(att->k8s_namespace);
	cell[COL_POD] = dash(att->pod);
	cell[COL_CT] = dash(att->container);
	cell[COL_POLICY] = dash(att->policy);
	cell[COL_BYPASS] = status_view_bypass_token(status_view_bypass_state(
		att->bypass, att->progs.bypass_active));
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

static void print_table(const struct status_view_row *rows, size_t nr)
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

static void print_head(const struct status_view_row *row)
{
	const struct sh_attachment *att = &row->att;
	char text[SH_ERROR_MSG_MAX + 256];

	printf("%s\n", att->id);
	printf("  namespace: %s\n  pod:       %s\n  container: %s\n",
	       dash(att->k8s_namespace), dash(att->pod), dash(att->container));
	printf("  cgroup:    %s%s%s\n", att->cg.rel,
	       att->cg.created ? " (made by the hook)" : "",
	       row->live ? "" : " (gone: stale record)");
	printf("  policy:    %s (from %s)\n", dash(att->policy),
	       att->policy_source);
	printf("  bypass:    %s (from %s)%s\n", att->bypass ? "on" : "off",
	       att->bypass_source,
	       att->bypass && !att->progs.bypass_active ?
		       ", not supported by this kernel" :
		       "");
	printf("  mode:      %s (from %s)%s\n",
	       att->audit ? "audit" : "enforce", dash(att->mode_source),
	       att->audit ? ": counts what it would do, applies nothing" : "");
	status_view_policy_hash_text(row, text, sizeof(text));
	printf("  policy hash: %s\n", text);
	if (att->footprint[0])
		printf("  record:    '%s': its recording goes to %s/%s when it is gone "
		       "(record %s shows it now)\n",
		       att->footprint, att->footprint_dir, att->footprint,
		       att->id);
}

static void print_exec(const struct sh_attachment *att)
{
	struct caveats_input in = { .att = att, .live = true };
	struct caveats cav;

	if (!att->cg.created) {
		printf("  exec:      policed (exec joins the container's cgroup)\n");
		return;
	}
	status_view_caveats(&in, &cav);
	printf("  exec:      %s\n", cav.c[0].text);
}

/* Audit mode: "    would deny SOL_SOCKET SO_MARK (setsockopt): 3". */
static void print_would_have(const struct status_view_row *row)
{
	char text[256];

	if (!row->att.audit)
		return;
	if (!row->wh) {
		printf("  would have: unknown (cannot read the counters)\n");
		return;
	}
	printf("  would have:%s\n", row->wh->nr ? "" : " nothing");
	for (int i = 0; i < row->wh->nr; i++) {
		counters_audit_text(&row->wh->e[i], text, sizeof(text));
		printf("    %s: %llu\n", text,
		       (unsigned long long)row->wh->e[i].n);
	}
}

static void print_counters(const struct status_view_row *row)
{
	const struct sh_attachment *att = &row->att;

	printf("  programs: ");
	for (int i = 0; i < att->progs.nr; i++)
		printf(" %s=%u", kind_type_name(att->progs.prog[i].type),
		       att->progs.prog[i].id);
	printf("\n  counters: ");
	for (int i = 0; i < SH_CNT_MAX; i++)
		if (row->c.v[i])
			printf(" %s=%llu", counters_names[i],
			       (unsigned long long)row->c.v[i]);
	printf("\n");
	print_would_have(row);
}

static void print_prog(const struct status_view_row *row,
		       const struct status_view *e, int k)
{
	const struct drift_kind *dk = &row->drift.kind[k];
	char text[SH_STATUS_VIEW_TEXT_MAX + SH_ERROR_MSG_MAX];

	status_view_prog_rules(row, e, k, text, sizeof(text));
	printf("    %s", kind_type_name(dk->type));
	if (!row->live || row->drift_err || !dk->nr_ours)
		printf(" (record says prog %u: %s)", dk->recorded,
		       status_view_prog_state(row, dk));
	for (int i = 0; i < dk->nr_ours; i++)
		printf(" prog %u", dk->ours[i]);
	printf(" on %s: %s\n", row->att.cg.rel, text);
}

static void print_drift(const struct status_view_row *row)
{
	struct json_object *arr = status_view_drift_json(row);
	size_t n = json_object_array_length(arr);

	printf("  drift:%s\n", n ? "" : "     none");
	for (size_t i = 0; i < n; i++)
		printf("    %s\n", json_object_get_string(
					   json_object_array_get_idx(arr, i)));
	json_object_put(arr);
}

static void print_enforcement(const struct status_show *show,
			      const struct status_view_row *row)
{
	struct status_view e;
	int shown = 0;

	status_view_of(&show->rules, row, &e);
	for (int k = 0; k < SH_PROG_KINDS; k++)
		shown += status_view_kind_shown(row, k);
	printf("  enforced by:%s\n", shown ? "" : " no program");
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (status_view_kind_shown(row, k))
			print_prog(row, &e, k);
	if (!e.rules_known)
		printf("  rules:     unknown: %s\n", e.rules_why);
	else if (row->att.policy[0])
		printf("  rules:     policy %s as %s has it now%s%s\n",
		       row->att.policy, show->rules.cfg.path,
		       row->att.audit ? " (audit mode: counted, not applied)" :
					"",
		       row->checked && row->check.config_hash &&
				       row->check.config_hash !=
					       row->check.hash ?
			       "; its programs run another version (policy hash)" :
			       "");
	printf("  bypass-prot-mem: %s\n", status_view_bypass_text(e.bypass));
	print_drift(row);
	printf("  caveats:%s\n", e.cav.nr ? "" : "   none");
	for (int i = 0; i < e.cav.nr; i++)
		printf("    [%s] %s\n", e.cav.c[i].id, e.cav.c[i].text);
}

static void print_detail(const struct status_show *show,
			 const struct status_view_row *row)
{
	print_head(row);
	print_exec(&row->att);
	print_counters(row);
	print_enforcement(show, row);
}

/* The node's part of the listing: the static keys preload keeps on
 * (keys.h), when it keeps any. */
static void print_keys(void)
{
	struct sh_error err = { 0 };
	struct keys_state keys;
	char kept[64];

	if (keys_query(&keys, &err) || !keys.cgroup[0])
		return;
	keys_text(&keys, kept, sizeof(kept));
	printf("\nstatic keys kept on for %s (cgroup %s)\n", kept, keys.cgroup);
}

static int status_show(const struct status_show *show,
		       const struct status_view_row *rows, size_t nr)
{
	if (show->json)
		return cmd_status_json(rows, nr, &show->rules);
	if (!nr && !show->one && !show->filtered) {
		printf("no containers are managed by the hook\n");
		print_keys();
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
	if (!show->filtered)
		print_keys();
	return 0;
}

static int usage_error(const struct status_options *opts, const char *opt)
{
	const char *v = filter_value(&opts->filter, opt);

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
	if (ctx->opts->id && !ctx->seen)
		return error_set(err, -ENOENT,
				 "no container '%.64s' is managed by the hook",
				 ctx->opts->id);
	return 0;
}

static bool filtered(const struct cmd_status_filter *f)
{
	return f->k8s_namespace || f->pod || f->container || f->policy;
}

static int status(const struct status_options *opts)
{
	struct status_ctx ctx = { .opts = opts };
	struct status_show show = { .json = opts->json };
	struct sh_error err = { 0 };
	const char *bad = cmd_status_bad_filter(&opts->filter);
	int r;

	if (bad)
		return usage_error(opts, bad);
	r = list(&ctx, &err);
	if (r) {
		free(ctx.rows);
		error_report(&err, r);
		return r;
	}
	for (size_t i = 0; i < ctx.nr; i++)
		probe_row(&ctx.rows[i]);
	if (ctx.nr)
		load_rules(opts, &show.rules);
	for (size_t i = 0; show.rules.cfg_ok && i < ctx.nr; i++)
		check_row(&show.rules.cfg, &ctx.rows[i]);
	show.one = opts->id != NULL;
	show.filtered = filtered(&opts->filter);
	r = status_show(&show, ctx.rows, ctx.nr);
	if (show.rules.cfg_ok)
		config_free(&show.rules.cfg);
	free_rows(ctx.rows, ctx.nr);
	return r;
}

enum {
	OPT_NAMESPACE = CLI_OPT_OWN,
	OPT_POD,
	OPT_CONTAINER,
	OPT_POLICY,
};

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	struct status_options opts = { 0 };
	struct cmd_status_filter *f = &opts.filter;
	struct cli_parser p;
	int id;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0) {
		if (id == OPT_NAMESPACE)
			f->k8s_namespace = p.value;
		else if (id == OPT_POD)
			f->pod = p.value;
		else if (id == OPT_CONTAINER)
			f->container = p.value;
		else if (id == OPT_POLICY)
			f->policy = p.value;
	}
	if (id)
		return cli_exit(id);
	opts.config = p.config;
	opts.json = p.json;
	opts.id = p.nr_operands ? p.operand[0] : NULL;
	return status(&opts);
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	CLI_JSON,
	{ OPT_NAMESPACE, "namespace", "NS",
	  "only containers in Kubernetes namespace NS" },
	{ OPT_POD, "pod", "POD", "only containers of pod POD" },
	{ OPT_CONTAINER, "container", "NAME", "only containers named NAME" },
	{ OPT_POLICY, "policy", "POLICY",
	  "only containers under policy POLICY" },
	{ 0 },
};

const struct cli_command cmd_status_command = {
	.name = "status",
	.operands = "[ID]",
	.max_operands = 1,
	.summary = "the containers the hook manages, and what enforces what",
	.description =
		"A table (id, namespace, pod, container, policy, bypass, counters),\n"
		"then per container: the programs the kernel has on its cgroup, the\n"
		"rules they carry, bypass-prot-mem, drift from the record, and the\n"
		"caveats that apply to it. Filters are exact and combine; no match\n"
		"is an empty table ([] with --json) and exit 0; an invalid name is\n"
		"a usage error. With ID (a full container id), that container only.\n",
	.options = options,
	.run = run,
};

/*
 * `status --json`: each container's attachment as it is written, with what the
 * kernel has now (live, counters, audit mode's would-have counters) and
 * what enforces what (status_view.c).
 */

static struct json_object *exec_json(const struct sh_attachment *att)
{
	struct json_object *o = json_object_new_object();
	struct caveats_input in = { .att = att, .live = true };
	struct caveats cav;

	jsonw_bool(o, "policed", !att->cg.created);
	if (att->cg.created) {
		status_view_caveats(&in, &cav);
		jsonw_str(o, "note", cav.c[0].text);
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

int cmd_status_json(const struct status_view_row *rows, size_t nr,
		    const struct status_view_rules *rules)
{
	_cleanup_json_ struct json_object *list = json_object_new_array();

	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		struct json_object *o = state_attachment_to_json(&rows[i].att);

		if (!o)
			return -ENOMEM;
		jsonw_bool(o, "live", rows[i].live);
		json_object_object_add(o, "exec", exec_json(&rows[i].att));
		json_object_object_add(o, "counters",
				       counters_json(&rows[i].c));
		if (rows[i].wh)
			json_object_object_add(o, "would_have",
					       counters_audit_json(rows[i].wh));
		json_object_object_add(o, "enforcement",
				       status_view_json(rules, &rows[i]));
		json_object_array_add(list, o);
	}
	puts(json_object_to_json_string_ext(
		list,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	return 0;
}
