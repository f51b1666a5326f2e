// SPDX-License-Identifier: GPL-2.0-only
/*
 * `cdi generate` prints (or writes) the CDI spec of kind
 * sockopt-hook.io/policy for the operator config (wiring_cdi.c); `cdi
 * refresh` writes again the specs of ours that /etc/cdi and /var/run/cdi
 * hold, for the config their hooks name, so that a config change (the
 * preload unit runs it) never leaves a device for a policy no longer
 * allowed. Either way a stale device that a runtime still injects is
 * refused by the hook itself (container.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "config/config.h"
#include "input/container.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "wiring/wiring.h"
#include "wiring/wiring_cdi.h"
#include "wiring/wiring_spec.h"

#define MAX_ENV 8

struct cdi_options {
	const char *verb;
	const char *config;
	const char *output; /* --output FILE, or stdout */
	const char *hook; /* --hook-path */
	const char *dir; /* --cdi-dir: refresh only there */
	const char *env[MAX_ENV]; /* --hook-env */
	int nr_env;
};

/* The spec for the config at path, run by hook with env. */
static int spec_for(const char *path, const char *hook_path,
		    const char *const *env, int nr_env, char **text,
		    struct sh_error *err)
{
	struct wiring_hook hook = { .path = hook_path,
				    .env = env,
				    .nr_env = nr_env };
	struct sh_config cfg;
	int r = config_load(path, &cfg, err);

	if (r)
		return r;
	r = wiring_cdi_text(&cfg, &hook, text, err);
	config_free(&cfg);
	return r;
}

static int write_plan(struct wiring_plan *plan, struct sh_error *err)
{
	int r = wiring_plan_apply(plan, err);

	if (!r)
		wiring_plan_print(plan, stdout, /* dry_run= */ false);
	return r;
}

static int generate(const struct cdi_options *o, struct sh_error *err)
{
	char self[PATH_MAX], config_env[PATH_MAX + 32];
	const char *env[MAX_ENV + 1];
	const char *hook = o->hook, *path = config_path(o->config);
	struct wiring_plan plan = { .nr_files = 0 };
	char *text = NULL;
	int nr = 0, r = wiring_hook_binary(&hook, self, err);

	if (r)
		return r;
	snprintf(config_env, sizeof(config_env), SH_CONFIG_ENV "=%s", path);
	env[nr++] = config_env;
	for (int i = 0; i < o->nr_env; i++)
		env[nr++] = o->env[i];
	r = spec_for(path, hook, env, nr, &text, err);
	if (r)
		return r;
	if (!o->output) {
		fputs(text, stdout);
		free(text);
		return 0;
	}
	r = wiring_plan_write(&plan, o->output, text, 0644, err) ?:
		    write_plan(&plan, err);
	wiring_plan_free(&plan);
	return r;
}

/* The spec at path again, if it is ours: its hook, its config. */
static int refresh_one(const struct cdi_options *o, const char *path,
		       struct wiring_plan *plan, struct sh_error *err)
{
	_cleanup_free_ char *text = NULL, *hook = NULL;
	char *env[MAX_ENV] = { NULL }, *spec = NULL;
	const char *config = config_path(o->config);
	size_t n = strlen(SH_CONFIG_ENV "=");
	int nr_env = 0, r;

	text = wiring_read(path, &r);
	if (r == -ENOENT)
		return 0;
	if (r)
		return error_errno(err, r, "cannot read %s", path);
	if (!wiring_cdi_is_ours(text)) {
		printf("%s: not a CDI spec of kind " SH_CDI_KIND
		       ": left alone\n",
		       path);
		return 0;
	}
	r = wiring_cdi_hook_of(text, &hook, env, MAX_ENV, &nr_env);
	if (r) {
		error_set(
			err, r,
			"%s runs no hook: remove it, or write it again with `oci-sockopt-hook runtime configure --cdi`",
			path);
		goto out;
	}
	for (int i = 0; i < nr_env; i++)
		if (!strncmp(env[i], SH_CONFIG_ENV "=", n))
			config = env[i] + n;
	r = spec_for(config, hook, (const char *const *)env, nr_env, &spec,
		     err);
	if (r == -ENOENT) {
		printf("%s\n", err->msg);
		memset(err, 0, sizeof(*err));
		r = wiring_plan_remove(plan, path, err);
	} else if (!r) {
		r = wiring_plan_write(plan, path, spec, 0644, err);
	}
out:
	for (int i = 0; i < nr_env; i++)
		free(env[i]);
	return r;
}

static int refresh(const struct cdi_options *o, struct sh_error *err)
{
	const char *dirs[] = { o->dir ?: SH_CDI_ETC,
			       o->dir ? NULL : SH_CDI_RUN };
	struct wiring_plan plan = { .nr_files = 0 };
	char path[PATH_MAX];
	int r = 0;

	for (size_t i = 0; !r && i < ARRAY_SIZE(dirs) && dirs[i]; i++) {
		snprintf(path, sizeof(path), "%s/" SH_CDI_SPEC_NAME, dirs[i]);
		r = refresh_one(o, path, &plan, err);
	}
	if (!r && !plan.nr_files)
		printf("no CDI spec of kind " SH_CDI_KIND
		       " in %s%s%s: nothing to refresh\n",
		       dirs[0], dirs[1] ? " or " : "", dirs[1] ?: "");
	else if (!r)
		r = write_plan(&plan, err);
	wiring_plan_free(&plan);
	return r;
}

enum {
	OPT_OUTPUT = CLI_OPT_OWN,
	OPT_HOOK,
	OPT_HOOK_ENV,
	OPT_DIR,
};

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	struct cdi_options o = { 0 };
	struct sh_error err = { 0 };
	struct cli_parser p;
	int id, r;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0) {
		if (id == OPT_OUTPUT)
			o.output = p.value;
		else if (id == OPT_HOOK)
			o.hook = p.value;
		else if (id == OPT_DIR)
			o.dir = p.value;
		else if (o.nr_env < MAX_ENV - 1)
			o.env[o.nr_env++] = p.value;
		else {
			cli_usage_error(cmd, "--hook-env at most %d times",
					MAX_ENV - 1);
			return CMD_USAGE;
		}
	}
	if (id)
		return cli_exit(id);
	for (int i = 0; i < o.nr_env; i++) {
		if (strchr(o.env[i], '=') && o.env[i][0] != '=')
			continue;
		cli_usage_error(cmd, "--hook-env takes KEY=VALUE, not '%.32s'",
				o.env[i]);
		return CMD_USAGE;
	}
	o.verb = p.operand[0];
	o.config = p.config;
	if (strcmp(o.verb, "generate") && strcmp(o.verb, "refresh")) {
		cli_usage_error(cmd, "generate or refresh, not %s",
				LOG_Q(o.verb));
		return CMD_USAGE;
	}
	if (!strcmp(o.verb, "generate") && o.dir) {
		cli_usage_error(
			cmd,
			"--cdi-dir is refresh's (generate takes --output)");
		return CMD_USAGE;
	}
	if (!strcmp(o.verb, "refresh") && (o.output || o.hook || o.nr_env)) {
		cli_usage_error(
			cmd,
			"refresh keeps the hook of the spec it finds: --output, --hook-path and --hook-env are generate's");
		return CMD_USAGE;
	}
	r = !strcmp(o.verb, "generate") ? generate(&o, &err) :
					  refresh(&o, &err);
	if (r)
		error_report(&err, r);
	return r;
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	{ OPT_OUTPUT, "output", "FILE", "write the spec there (else stdout)" },
	{ OPT_HOOK, "hook-path", "PATH",
	  "the binary the spec runs (else this one)" },
	{ OPT_HOOK_ENV, "hook-env", "KEY=VALUE",
	  "more environment for the hook; repeatable" },
	{ OPT_DIR, "cdi-dir", "DIR",
	  "refresh the spec there only (else " SH_CDI_ETC " and " SH_CDI_RUN
	  ")" },
	{ 0 },
};

const struct cli_command cmd_cdi_command = {
	.name = "cdi",
	.operands = "generate|refresh",
	.min_operands = 1,
	.max_operands = 1,
	.summary = "the CDI spec of kind " SH_CDI_KIND
		   ": a device per policy a workload may name",
	.description =
		"generate: the spec for the operator config, a device per policy in\n"
		"annotations.allow_policies and " SH_CDI_BYPASS
		" when annotations.allow_bypass_prot_mem,\n"
		"each running the hook's createRuntime and poststop with\n"
		"--" SH_CDI_OPTION " " SH_CDI_KIND
		"=NAME; a container that asks for one\n"
		"(podman's and Docker's device flag, containerd's and CRI-O's\n"
		"CDIDevices) is policed as with the annotation, through the same\n"
		"allow-list.\n"
		"refresh: the specs of ours in " SH_CDI_ETC " and " SH_CDI_RUN
		" written again for\n"
		"the config their hooks name (the preload unit runs it when the config\n"
		"changes); a spec with no device left is removed.\n",
	.options = options,
	.run = run,
};
