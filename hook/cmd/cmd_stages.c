// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runtime-facing commands: the OCI state on stdin, and on failure one
 * line on stderr (and in the logs), reported here and nowhere below.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "config/config.h"
#include "input/container.h"
#include "input/oci.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "lib/timing.h"
#include "observe/events.h"
#include "stage/prestart.h"
#include "stage/teardown.h"
#include "state/stats.h"

static void apply_log_settings(const struct sh_config *cfg)
{
	int r;

	log_set_level(cfg->log_level);
	log_set_format(cfg->log_format);
	if (!cfg->log_file)
		return;
	r = log_set_file(cfg->log_file);
	/* Notice, not warning: stderr carries one line, the error if any. */
	if (r)
		log_msg(LOG_NOTICE, "cannot open log file %.128s: %s",
			cfg->log_file,
			r == -EINVAL ? "not a regular file" : strerror(-r));
}

/* The stages' command line: the name they run under, and --config. */
struct runtime_options {
	const char *stage; /* prestart, createRuntime, poststop, hook */
	const char *config; /* --config, or NULL */
	const char *cdi_device; /* --cdi-device (container.h), or NULL */
	/* A long-running caller's config, kept between containers. */
	struct config_cache *cache;
};

static int read_state(const struct runtime_options *opts, struct oci_state *st,
		      struct sh_error *err)
{
	int r = oci_read_state(STDIN_FILENO, st, err);

	st->cdi_device = opts->cdi_device;
	if (r)
		error_reason(err, SH_REASON_STATE_INVALID);
	else
		log_set_context("container %s", st->id);
	timing_mark("state");
	return r;
}

/*
 * prestart under the operator config: read again when it was replaced
 * while this prestart ran (state.h, SH_STATE_CONFIG_LOCK), a few times,
 * then its last reading is used. Every prestart counts in the node's
 * stats, for `metrics`.
 */
static int attach_with_state(const struct runtime_options *opts,
			     struct oci_state *st, struct sh_container *c,
			     struct sh_error *err)
{
	struct prestart_outcome done;
	int r;

	for (int tries = 0;; tries++) {
		const struct sh_config *cfg;
		struct sh_config own;

		done = (struct prestart_outcome){ .config_last_try = tries ==
								     3 };
		r = opts->cache ?
			    config_cache_get(opts->cache,
					     config_path(opts->config), &cfg,
					     err) :
			    config_load(config_path(opts->config), &own, err);
		if (r) {
			error_reason(err, SH_REASON_CONFIG_INVALID);
			break;
		}
		if (!opts->cache)
			cfg = &own;
		apply_log_settings(cfg);
		timing_mark("config");
		r = prestart_run(cfg, st, c, &done, err);
		if (!r && done.outcome == STATS_FALLBACK)
			events_fallback(opts->stage, c, done.reason,
					&done.cause);
		if (!opts->cache)
			config_free(&own);
		if (r != -EAGAIN || !done.config_changed)
			break;
		log_info(
			"the operator config changed while this container started: reading it again");
		memset(err, 0, sizeof(*err));
	}
	if (r)
		stats_log_add(STATS_PRESTART, STATS_REFUSED,
			      error_reason_text(err), timing_elapsed());
	else
		stats_log_add(STATS_PRESTART, done.outcome,
			      error_reason_token(done.reason),
			      timing_elapsed());
	return r;
}

/* For stages that go on without a config: only its log settings, and
 * the reason when a config that is there is refused (untrusted, not
 * JSON, or bad log settings: its policies are prestart's to check). */
static void load_log_settings(const struct runtime_options *opts)
{
	const char *path = config_path(opts->config);
	struct sh_error err = { 0 };
	struct sh_config cfg;
	int r;

	if (access(path, R_OK) != 0)
		return;
	r = config_load_logging(path, &cfg, &err);
	if (r) {
		error_report(&err, r);
		return;
	}
	apply_log_settings(&cfg);
	config_free(&cfg);
}

/* A poststop failure is only logged by runtimes: never fail, just say. */
static void poststop_with_state(const struct runtime_options *opts,
				struct oci_state *st, int state_r)
{
	struct sh_error err = { 0 };
	int r;

	load_log_settings(opts);
	timing_mark("config");
	r = state_r == 0 ? teardown_poststop(st, &err) : teardown_gc(&err);
	if (r < 0)
		error_report(&err, r);
}

/* The end of a stage that read the state: on failure, one line and the
 * audit line. */
static int stage_end(const struct runtime_options *opts, struct oci_state *st,
		     struct sh_container *c, const struct sh_error *err, int r)
{
	if (r) {
		error_report(err, r);
		/* Refused before prestart read the container (the state or
		 * the config): what the state alone says. */
		if (!c->st)
			container_read(st, c);
		events_refusal(opts->stage, c, err, r);
	}
	oci_state_free(st);
	timing_report(opts->stage);
	return r;
}

int cmd_stages_attach_state(const char *stage, const char *config,
			    struct config_cache *cache, struct oci_state *st,
			    struct sh_error *err)
{
	const struct runtime_options opts = { .stage = stage,
					      .config = config,
					      .cache = cache };
	struct sh_container c = { 0 };
	int r;

	timing_start();
	log_set_context("container %s", st->id);
	r = attach_with_state(&opts, st, &c, err);
	if (r) {
		error_report(err, r);
		if (!c.st)
			container_read(st, &c);
		events_refusal(stage, &c, err, r);
	}
	timing_report(stage);
	log_set_context("%s", "");
	return r;
}

static int poststop(const struct runtime_options *opts)
{
	struct sh_error err = { 0 };
	struct oci_state st = { 0 };
	int r;

	r = read_state(opts, &st, &err);
	if (r)
		error_report(&err, r);
	poststop_with_state(opts, &st, r);
	oci_state_free(&st);
	timing_report(opts->stage);
	return 0;
}

/*
 * hooks.d files give a hook the same arguments at every stage: tell the
 * stages apart by the state the runtime sends. runc sends "creating" and
 * crun "created" where the policy goes on; "stopped" is poststop. Any
 * other status (running, starting, paused, ...) is a stage where a hook
 * has nothing to do: attaching there would police a container that is
 * already running, or one that poststop has released.
 */
static int hook_by_status(const struct runtime_options *opts,
			  struct oci_state *st, struct sh_container *c,
			  struct sh_error *err)
{
	if (!st->status) {
		error_reason(err, SH_REASON_STATE_INVALID);
		return error_set(
			err, -EINVAL,
			"OCI state on stdin lacks 'status': the hook command needs it to tell the stages apart");
	}
	if (!strcmp(st->status, "creating") || !strcmp(st->status, "created"))
		return attach_with_state(opts, st, c, err);
	if (!strcmp(st->status, "stopped")) {
		poststop_with_state(opts, st, 0);
		return 0;
	}
	load_log_settings(opts);
	log_debug("status %s: nothing to do at this stage", LOG_Q(st->status));
	return 0;
}

static int gc(bool json)
{
	struct sh_error err = { 0 };
	int n = teardown_gc(&err);

	if (n < 0) {
		error_report(&err, n);
		return n;
	}
	if (json)
		printf("{\"released\": %d}\n", n);
	else
		printf("released %d stale container record(s)\n", n);
	return 0;
}

/* The stages' command line: --config, --cdi-device. 0, or how the
 * command ends (cli_next(): --help, a usage error). */
static int parse_stage_options(const struct cli_command *cmd,
			       const struct cli_global *global, int argc,
			       char **argv, struct runtime_options *ret_opts)
{
	struct cli_parser p;
	int id;

	*ret_opts = (struct runtime_options){ .stage = cmd->name };
	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0)
		ret_opts->cdi_device =
			p.value; /* OPT_CDI_DEVICE, the only one */
	if (id)
		return id;
	ret_opts->config = p.config;
	return 0;
}

/* The start every stage shares: its command line, then the log. 0, or
 * how the command ends (parse_stage_options()). */
static int stage_begin(const struct cli_command *cmd,
		       const struct cli_global *global, int argc, char **argv,
		       struct runtime_options *ret_opts)
{
	int end = parse_stage_options(cmd, global, argc, argv, ret_opts);

	if (end)
		return end;
	log_open(1);
	return 0;
}

static int run_prestart(const struct cli_command *cmd,
			const struct cli_global *global, int argc, char **argv)
{
	struct runtime_options opts;
	struct sh_error err = { 0 };
	struct oci_state st = { 0 };
	struct sh_container c = { 0 };
	int r = stage_begin(cmd, global, argc, argv, &opts);

	if (r)
		return cli_exit(r);
	r = read_state(&opts, &st, &err) ?:
		    attach_with_state(&opts, &st, &c, &err);
	return stage_end(&opts, &st, &c, &err, r);
}

static int run_poststop(const struct cli_command *cmd,
			const struct cli_global *global, int argc, char **argv)
{
	struct runtime_options opts;
	int end = stage_begin(cmd, global, argc, argv, &opts);

	if (end)
		return cli_exit(end);
	return poststop(&opts);
}

static int run_hook(const struct cli_command *cmd,
		    const struct cli_global *global, int argc, char **argv)
{
	struct runtime_options opts;
	struct sh_error err = { 0 };
	struct oci_state st = { 0 };
	struct sh_container c = { 0 };
	int r = stage_begin(cmd, global, argc, argv, &opts);

	if (r)
		return cli_exit(r);
	r = read_state(&opts, &st, &err) ?:
					   hook_by_status(&opts, &st, &c, &err);
	return stage_end(&opts, &st, &c, &err, r);
}

static int run_gc(const struct cli_command *cmd,
		  const struct cli_global *global, int argc, char **argv)
{
	struct cli_parser p;
	int end = cli_parse(&p, cmd, global, argc, argv);

	if (end)
		return cli_exit(end);
	return gc(p.json);
}

enum { OPT_CDI_DEVICE = CLI_OPT_OWN };

static const struct cli_option stage_options[] = {
	CLI_CONFIG,
	{ OPT_CDI_DEVICE, SH_CDI_OPTION, "DEVICE",
	  "the CDI device (" SH_CDI_KIND "=NAME) whose spec runs this hook" },
	{ 0 },
};

#define STATE_ON_STDIN                                                        \
	"The runtime sends the container's OCI state on stdin; on failure,\n" \
	"one line on stderr (the runtime shows it) and in the log.\n"

/* prestart, under its two names. */
#define PRESTART_COMMAND(cmd_name, cmd_summary)                                      \
	{                                                                            \
		.name = cmd_name, .summary = cmd_summary,                            \
		.description = STATE_ON_STDIN                                        \
			"Exit 1 refuses the container: nothing is left attached.\n", \
		.options = stage_options, .run = run_prestart,                       \
	}

const struct cli_command cmd_prestart_command = PRESTART_COMMAND(
	"prestart", "attach the container's policy (OCI state on stdin)");
const struct cli_command cmd_create_runtime_command = PRESTART_COMMAND(
	"createRuntime", "the same as prestart, as the OCI createRuntime hook");

const struct cli_command cmd_poststop_command = {
	.name = "poststop",
	.summary = "release what prestart did (never fails a teardown)",
	.description = STATE_ON_STDIN "Exit 0 whatever happens.\n",
	.options = stage_options,
	.run = run_poststop,
};

const struct cli_command cmd_hook_command = {
	.name = "hook",
	.summary = "prestart or poststop by the state's status (hooks.d files)",
	.description = STATE_ON_STDIN
	"Attaches on status \"creating\" (runc) or \"created\" (crun),\n"
	"releases on \"stopped\", does nothing on any other status, and\n"
	"refuses a state without one.\n",
	.options = stage_options,
	.run = run_hook,
};

const struct cli_command cmd_gc_command = {
	.name = "gc",
	.summary = "release what containers that are gone left behind",
	.description =
		"Every record of a container whose cgroup is gone, then the index\n"
		"entries of program copies no container uses (poststop also does\n"
		"this, at most once a minute). Exit 1 on an unsafe state directory.\n",
	.options = cli_json_only,
	.run = run_gc,
};
