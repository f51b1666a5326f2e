// SPDX-License-Identifier: GPL-2.0-only
/* `status`: every container the hook manages, with its live counters. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cg.h"
#include "cleanup.h"
#include "commands.h"
#include "counters.h"
#include "kind.h"
#include "log.h"
#include "state.h"

struct status_ctx {
	const char *only_id;
	bool json;
	int shown;
	struct json_object *list;
};

/* The record's cgroup still exists and is the same cgroup. */
static bool record_live(const struct sh_record *rec)
{
	_cleanup_close_ int fd = cg_open_recorded(&rec->cg);

	return fd >= 0;
}

/*
 * The runtime made the container's cgroup namespace before the hook made
 * its cgroup, and knows nothing of that cgroup: what it starts with exec
 * joins the container's namespaces but not our cgroup.
 */
static const char exec_gap[] =
	"NOT policed: the hook made this cgroup, so processes started with runc/crun exec stay outside it, in %s or the runtime's cgroup";

static struct json_object *exec_json(const struct sh_record *rec)
{
	struct json_object *o = json_object_new_object();
	char text[sizeof(exec_gap) + PATH_MAX];

	json_object_object_add(o, "policed",
			       json_object_new_boolean(!rec->cg.created));
	if (rec->cg.created) {
		snprintf(text, sizeof(text), exec_gap, rec->cg.parent_rel);
		json_object_object_add(o, "note", json_object_new_string(text));
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

static void print_text(const struct sh_record *rec, bool live,
		       const struct sh_counters *c)
{
	printf("%s\n", rec->id);
	printf("  cgroup:    %s%s%s\n", rec->cg.rel,
	       rec->cg.created ? " (made by the hook)" : "",
	       live ? "" : " (gone: stale record)");
	printf("  policy:    %s (from %s)\n",
	       rec->policy[0] ? rec->policy : "-", rec->policy_source);
	printf("  bypass:    %s (from %s)%s\n", rec->bypass ? "on" : "off",
	       rec->bypass_source,
	       rec->bypass && !rec->progs.bypass_active ?
		       ", not supported by this kernel" :
		       "");
	printf("  exec:      ");
	if (rec->cg.created)
		printf(exec_gap, rec->cg.parent_rel);
	else
		printf("policed (exec joins the container's cgroup)");
	printf("\n");
	printf("  programs: ");
	for (int i = 0; i < rec->progs.nr; i++)
		printf(" %s=%u", kind_type_name(rec->progs.prog[i].type),
		       rec->progs.prog[i].id);
	printf("\n  counters: ");
	for (int i = 0; i < SH_CNT_MAX; i++)
		if (c->v[i])
			printf(" %s=%llu", counters_names[i],
			       (unsigned long long)c->v[i]);
	printf("\n");
}

static int show_record(const struct sh_record *rec, void *data)
{
	struct status_ctx *ctx = data;
	struct sh_counters c = { 0 };
	bool live = record_live(rec);
	struct json_object *o;

	if (ctx->only_id && strcmp(ctx->only_id, rec->id))
		return 0;
	if (live)
		counters_read(&rec->progs, rec->cg.id, &c);
	ctx->shown++;
	if (!ctx->json) {
		print_text(rec, live, &c);
		return 0;
	}
	o = record_to_json(rec);
	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "live", json_object_new_boolean(live));
	json_object_object_add(o, "exec", exec_json(rec));
	json_object_object_add(o, "counters", counters_json(&c));
	json_object_array_add(ctx->list, o);
	return 0;
}

int cmd_status(const struct cmd_args *args)
{
	_cleanup_json_ struct json_object *list = json_object_new_array();
	struct status_ctx ctx = { .json = args->json, .list = list };
	struct sh_error err = { 0 };
	int r;

	if (args->argc > 0)
		ctx.only_id = args->argv[0];
	/* An unsafe state directory is one line of its own. */
	r = state_dir_check(&err);
	if (!r) {
		r = state_foreach(show_record, &ctx);
		if (r)
			error_errno(&err, r, "cannot list %s", state_dir());
	}
	if (!r && ctx.only_id && !ctx.shown)
		r = error_set(&err, -ENOENT,
			      "no container '%.64s' is managed by the hook",
			      ctx.only_id);
	if (r) {
		error_report(&err, r);
		return r;
	}
	if (args->json)
		puts(json_object_to_json_string_ext(
			list, JSON_C_TO_STRING_PRETTY |
				      JSON_C_TO_STRING_NOSLASHESCAPE));
	else if (!ctx.shown)
		printf("no containers are managed by the hook\n");
	return 0;
}
