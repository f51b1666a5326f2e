// SPDX-License-Identifier: GPL-2.0-only
/* The runtime-facing commands: state on stdin, one line on error. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "cleanup.h"
#include "commands.h"
#include "config.h"
#include "log.h"
#include "oci.h"
#include "stage.h"

static void apply_log_settings(const struct sh_config *cfg)
{
	int r;

	log_set_level(cfg->log_level);
	if (!cfg->log_file)
		return;
	r = log_set_file(cfg->log_file);
	/* Notice, not warning: stderr carries one line, the error if any. */
	if (r)
		log_msg(LOG_NOTICE, "cannot open log file %.128s: %s",
			cfg->log_file,
			r == -EINVAL ? "not a regular file" : strerror(-r));
}

static int attach_with_state(const struct cmd_args *args, struct oci_state *st)
{
	struct sh_config cfg;
	int r = config_load(config_path(args->config), &cfg);

	if (r)
		return r;
	apply_log_settings(&cfg);
	r = stage_attach(&cfg, st);
	config_free(&cfg);
	return r;
}

/* For stages that go on without a config: only its log settings. */
static void load_log_settings(const struct cmd_args *args)
{
	struct sh_config cfg;

	if (access(config_path(args->config), R_OK) == 0 &&
	    config_load(config_path(args->config), &cfg) == 0) {
		apply_log_settings(&cfg);
		config_free(&cfg);
	}
}

/* A poststop failure is only logged by runtimes: never fail, just say. */
static int poststop_with_state(const struct cmd_args *args,
			       struct oci_state *st, int state_r)
{
	load_log_settings(args);
	if (state_r == 0)
		stage_poststop(st);
	else
		stage_gc();
	return 0;
}

int cmd_prestart(const struct cmd_args *args)
{
	struct oci_state st = { 0 };
	int r;

	log_open(1);
	r = oci_read_state(STDIN_FILENO, &st);
	if (!r)
		r = attach_with_state(args, &st);
	oci_state_free(&st);
	return r;
}

int cmd_poststop(const struct cmd_args *args)
{
	struct oci_state st = { 0 };
	int r;

	log_open(1);
	r = oci_read_state(STDIN_FILENO, &st);
	poststop_with_state(args, &st, r);
	oci_state_free(&st);
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
static int hook_by_status(const struct cmd_args *args, struct oci_state *st)
{
	if (!st->status) {
		log_error(
			"OCI state on stdin lacks 'status': the hook command needs it to tell the stages apart");
		return -EINVAL;
	}
	if (!strcmp(st->status, "creating") || !strcmp(st->status, "created"))
		return attach_with_state(args, st);
	if (!strcmp(st->status, "stopped"))
		return poststop_with_state(args, st, 0);
	load_log_settings(args);
	log_debug("status %s: nothing to do at this stage", LOG_Q(st->status));
	return 0;
}

int cmd_hook(const struct cmd_args *args)
{
	struct oci_state st = { 0 };
	int r;

	log_open(1);
	r = oci_read_state(STDIN_FILENO, &st);
	if (!r)
		r = hook_by_status(args, &st);
	oci_state_free(&st);
	return r;
}

int cmd_gc(const struct cmd_args *args)
{
	int n;

	attach_quiet_libbpf();
	n = stage_gc();
	if (n < 0)
		return n;
	if (args->json)
		printf("{\"released\": %d}\n", n);
	else
		printf("released %d stale container record(s)\n", n);
	return 0;
}
