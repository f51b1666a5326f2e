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
			cfg->log_file, strerror(-r));
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

/* A poststop failure is only logged by runtimes: never fail, just say. */
static int poststop_with_state(const struct cmd_args *args,
			       struct oci_state *st, int state_r)
{
	struct sh_config cfg;

	/* Only for log settings: teardown goes on without a config. */
	if (access(config_path(args->config), R_OK) == 0 &&
	    config_load(config_path(args->config), &cfg) == 0) {
		apply_log_settings(&cfg);
		config_free(&cfg);
	}
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
 * stages apart by the state the runtime sends.
 */
int cmd_hook(const struct cmd_args *args)
{
	struct oci_state st = { 0 };
	int r;

	log_open(1);
	r = oci_read_state(STDIN_FILENO, &st);
	if (r == 0 && st.status && !strcmp(st.status, "stopped"))
		r = poststop_with_state(args, &st, 0);
	else if (r == 0)
		r = attach_with_state(args, &st);
	oci_state_free(&st);
	return r;
}

int cmd_gc(const struct cmd_args *args)
{
	int n;

	attach_quiet_libbpf();
	n = stage_gc();
	if (args->json)
		printf("{\"released\": %d}\n", n);
	else
		printf("released %d stale container record(s)\n", n);
	return 0;
}

static void print_validate_json(const char *path, int r)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	const char *where = config_last_error_path();

	json_object_object_add(o, "config", json_object_new_string(path));
	json_object_object_add(o, "valid", json_object_new_boolean(!r));
	json_object_object_add(
		o, "path", r && *where ? json_object_new_string(where) : NULL);
	json_object_object_add(o, "error",
			       r ? json_object_new_string(log_last_error()) :
				   NULL);
	puts(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}

int cmd_validate(const struct cmd_args *args)
{
	const char *path = args->argc > 0 ? args->argv[0] :
					    config_path(args->config);
	struct sh_config cfg;
	int r = config_load(path, &cfg);

	if (args->json)
		print_validate_json(path, r);
	else if (!r)
		printf("%s: valid (%zu policies)\n", path, cfg.nr_policies);
	if (!r)
		config_free(&cfg);
	return r;
}
