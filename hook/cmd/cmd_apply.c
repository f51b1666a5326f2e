// SPDX-License-Identifier: GPL-2.0-only
/*
 * `apply`: the operator config reaches running containers (apply.h). Run
 * after `preload` by the preload path unit and by the DaemonSet's agent
 * whenever the config changes. One line per container that changes or is
 * left as it was, a summary line, and exit status 1 when a container was
 * left or could not be updated.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "config/config.h"
#include "stage/apply.h"

struct apply_options {
	const char *config; /* --config, or NULL */
	bool json;
	bool dry_run;
	bool all; /* --all: also the unchanged and the gone */
};

struct apply_out {
	const struct apply_options *opts;
	struct json_object *list; /* --json */
};

static void hash_text(uint64_t h, char buf[17])
{
	snprintf(buf, 17, "%016" PRIx64, h);
}

/* "namespace/pod/container", or what of it the runtime named. */
static void who_text(const struct sh_attachment *att, char *buf, size_t len)
{
	if (att->pod[0])
		snprintf(buf, len, " %s/%s/%s", att->k8s_namespace, att->pod,
			 att->container);
	else if (att->container[0])
		snprintf(buf, len, " %s", att->container);
	else
		buf[0] = '\0';
}

static const char *outcome_text(const struct apply_entry *e, bool dry_run)
{
	if (e->outcome == APPLY_UPDATED && dry_run)
		return "would update";
	if (e->outcome == APPLY_LEFT)
		return "left";
	return apply_outcome_name(e->outcome);
}

static void print_text(const struct apply_entry *e, bool dry_run)
{
	char id[SH_MAX_ID_LEN + 1], who[3 * SH_MAX_CONTAINER_NAME + 8];
	char from[17], to[17];

	cmd_status_short_id(e->att->id, id, sizeof(id));
	who_text(e->att, who, sizeof(who));
	hash_text(e->from, from);
	hash_text(e->to, to);
	printf("%-12s %s%s: ", outcome_text(e, dry_run), id, who);
	switch (e->outcome) {
	case APPLY_UPDATED:
		printf("%s (policy %s -> %s)\n", e->change, from, to);
		break;
	case APPLY_LEFT:
		printf("%s; it keeps its programs (policy %s) until it restarts\n",
		       e->why, from);
		break;
	case APPLY_FAILED:
		printf("%s; it keeps its programs (policy %s)\n", e->why, from);
		break;
	case APPLY_GONE:
		printf("its container is gone (gc releases it)\n");
		break;
	default:
		printf("policy %s, as the config has it\n", from);
		break;
	}
}

static void add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

static struct json_object *entry_json(const struct apply_entry *e)
{
	struct json_object *o = json_object_new_object();
	char from[17], to[17];

	hash_text(e->from, from);
	hash_text(e->to, to);
	add_str(o, "id", e->att->id);
	add_str(o, "namespace", e->att->k8s_namespace);
	add_str(o, "pod", e->att->pod);
	add_str(o, "container", e->att->container);
	add_str(o, "outcome", apply_outcome_name(e->outcome));
	add_str(o, "policy_hash", from);
	add_str(o, "config_policy_hash", e->to ? to : NULL);
	add_str(o, "change", e->change[0] ? e->change : NULL);
	add_str(o, "reason", e->reason);
	add_str(o, "message", e->why[0] ? e->why : NULL);
	return o;
}

static void report(const struct apply_entry *e, void *data)
{
	struct apply_out *out = data;

	if (!out->opts->all &&
	    (e->outcome == APPLY_UNCHANGED || e->outcome == APPLY_GONE))
		return;
	if (out->list)
		json_object_array_add(out->list, entry_json(e));
	else
		print_text(e, out->opts->dry_run);
}

static void print_summary(const struct apply_options *opts,
			  const struct apply_totals *t,
			  struct json_object *list)
{
	const char *path = config_path(opts->config);
	struct json_object *o;

	if (!list) {
		printf("apply: %d %s, %d unchanged, %d left as it was, %d failed, %d gone (config %s)\n",
		       t->updated,
		       opts->dry_run ? "would be updated" : "updated",
		       t->unchanged, t->left, t->failed, t->gone, path);
		return;
	}
	o = json_object_new_object();
	add_str(o, "config", path);
	json_object_object_add(o, "dry_run",
			       json_object_new_boolean(opts->dry_run));
	json_object_object_add(o, "updated", json_object_new_int(t->updated));
	json_object_object_add(o, "unchanged",
			       json_object_new_int(t->unchanged));
	json_object_object_add(o, "left", json_object_new_int(t->left));
	json_object_object_add(o, "failed", json_object_new_int(t->failed));
	json_object_object_add(o, "gone", json_object_new_int(t->gone));
	json_object_object_add(o, "containers", json_object_get(list));
	printf("%s\n", json_object_to_json_string_ext(
			       o, JSON_C_TO_STRING_PRETTY |
					  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static int apply(const struct apply_options *opts)
{
	struct apply_out out = { opts,
				 opts->json ? json_object_new_array() : NULL };
	struct sh_error err = { 0 };
	struct apply_totals t;
	int r = apply_run(config_path(opts->config), opts->dry_run, report,
			  &out, &t, &err);

	if (r) {
		error_report(&err, r);
		json_object_put(out.list);
		return r;
	}
	print_summary(opts, &t, out.list);
	json_object_put(out.list);
	return t.left || t.failed ? 1 : 0;
}

enum { OPT_DRY_RUN = CLI_OPT_OWN, OPT_ALL };

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	struct apply_options opts = { 0 };
	struct cli_parser p;
	int id;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0) {
		if (id == OPT_DRY_RUN)
			opts.dry_run = true;
		else if (id == OPT_ALL)
			opts.all = true;
	}
	if (id)
		return cli_exit(id);
	opts.config = p.config;
	opts.json = p.json;
	return apply(&opts);
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	CLI_JSON,
	{ OPT_DRY_RUN, "dry-run", NULL,
	  "say what would change, change nothing (nothing is loaded)" },
	{ OPT_ALL, "all", NULL,
	  "also list the containers that are unchanged or gone" },
	{ 0 },
};

const struct cli_command cmd_apply_command = {
	.name = "apply",
	.summary =
		"bring running containers to the operator config, no restart",
	.description =
		"Every running container the hook polices gets what the operator\n"
		"config gives it now: when that differs from what its cgroup has\n"
		"(a changed policy, audit <-> enforce, bypass-prot-mem), or it still\n"
		"runs a generic program, its programs are replaced atomically\n"
		"(BPF_F_REPLACE: every call sees the old policy or the new one) and\n"
		"its record rewritten, all or nothing. A container whose policy was\n"
		"removed or is no longer allowed keeps its programs and is listed as\n"
		"left. One line per container updated, left or failed, then a\n"
		"summary; exit status 1 when one was left or failed. Run `preload`\n"
		"first, so that the new programs are pinned: apply loads the others.\n",
	.options = options,
	.run = run,
};
