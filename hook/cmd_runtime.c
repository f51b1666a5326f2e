// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runtime-facing commands: the OCI state on stdin, and on failure one
 * line on stderr (and in the logs), reported here and nowhere below.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "cleanup.h"
#include "commands.h"
#include "config.h"
#include "load.h"
#include "log.h"
#include "oci.h"
#include "prestart.h"
#include "stats.h"
#include "stats_log.h"
#include "teardown.h"
#include "timing.h"

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

static int read_state(struct oci_state *st, struct sh_error *err)
{
	int r = oci_read_state(STDIN_FILENO, st, err);

	if (!r)
		log_set_context("container %s", st->id);
	else
		error_reason(err, "state_invalid");
	timing_mark("state");
	return r;
}

static int attach_config(const struct cmd_args *args, struct oci_state *st,
			 struct prestart_outcome *done, struct sh_error *err)
{
	struct sh_config cfg;
	int r = config_load(config_path(args->config), &cfg, err);

	if (r) {
		error_reason(err, "config_invalid");
		return r;
	}
	apply_log_settings(&cfg);
	timing_mark("config");
	r = prestart_run(&cfg, st, done, err);
	if (!r && done->outcome == STATS_FALLBACK)
		audit_fallback(args->command, st, done);
	config_free(&cfg);
	return r;
}

/* Every prestart counts in the node's stats, for `metrics`. */
static int attach_with_state(const struct cmd_args *args, struct oci_state *st,
			     struct sh_error *err)
{
	struct prestart_outcome done = { .outcome = STATS_ATTACHED };
	int r = attach_config(args, st, &done, err);

	if (r)
		stats_log_add(STATS_PRESTART, STATS_REFUSED,
			      error_reason_text(err), timing_elapsed());
	else
		stats_log_add(STATS_PRESTART, done.outcome, done.reason,
			      timing_elapsed());
	return r;
}

/* For stages that go on without a config: only its log settings, and
 * the reason when a config that is there is refused (untrusted, not
 * JSON, or bad log settings: its policies are prestart's to check). */
static void load_log_settings(const struct cmd_args *args)
{
	const char *path = config_path(args->config);
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
static void poststop_with_state(const struct cmd_args *args,
				struct oci_state *st, int state_r)
{
	struct sh_error err = { 0 };
	int r;

	load_log_settings(args);
	timing_mark("config");
	r = state_r == 0 ? teardown_poststop(st, &err) : teardown_gc(&err);
	if (r < 0)
		error_report(&err, r);
}

typedef int (*stage_fn)(const struct cmd_args *args, struct oci_state *st,
			struct sh_error *err);

/* Reads the state and runs the stage: on failure, one line. */
static int run_stage(const struct cmd_args *args, stage_fn stage)
{
	struct sh_error err = { 0 };
	struct oci_state st = { 0 };
	int r;

	log_open(1);
	r = read_state(&st, &err);
	if (!r)
		r = stage(args, &st, &err);
	if (r) {
		error_report(&err, r);
		audit_refusal(args->command, &st, &err, r);
	}
	oci_state_free(&st);
	timing_report(args->command);
	return r;
}

int cmd_prestart(const struct cmd_args *args)
{
	return run_stage(args, attach_with_state);
}

int cmd_poststop(const struct cmd_args *args)
{
	struct sh_error err = { 0 };
	struct oci_state st = { 0 };
	int r;

	log_open(1);
	r = read_state(&st, &err);
	if (r)
		error_report(&err, r);
	poststop_with_state(args, &st, r);
	oci_state_free(&st);
	timing_report(args->command);
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
static int hook_by_status(const struct cmd_args *args, struct oci_state *st,
			  struct sh_error *err)
{
	if (!st->status) {
		error_reason(err, "state_invalid");
		return error_set(
			err, -EINVAL,
			"OCI state on stdin lacks 'status': the hook command needs it to tell the stages apart");
	}
	if (!strcmp(st->status, "creating") || !strcmp(st->status, "created"))
		return attach_with_state(args, st, err);
	if (!strcmp(st->status, "stopped")) {
		poststop_with_state(args, st, 0);
		return 0;
	}
	load_log_settings(args);
	log_debug("status %s: nothing to do at this stage", LOG_Q(st->status));
	return 0;
}

int cmd_hook(const struct cmd_args *args)
{
	return run_stage(args, hook_by_status);
}

int cmd_gc(const struct cmd_args *args)
{
	struct sh_error err = { 0 };
	int n;

	load_quiet_libbpf();
	n = teardown_gc(&err);
	if (n < 0) {
		error_report(&err, n);
		return n;
	}
	if (args->json)
		printf("{\"released\": %d}\n", n);
	else
		printf("released %d stale container record(s)\n", n);
	return 0;
}
