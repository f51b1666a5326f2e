// SPDX-License-Identifier: GPL-2.0-only
/*
 * `runtime-exec`: the OCI runtime Docker registers (daemon.json
 * runtimes.sockopt, wiring_docker.c). At `create` the bundle gets the
 * hook (wiring_spec.c); then, for every verb, runc runs with the same
 * arguments. A bundle that cannot be edited fails the create in one line:
 * a container must not start unpoliced because its hook was lost.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "config/config.h"
#include "lib/log.h"
#include "wiring/wiring_spec.h"

#define MAX_ENV 8

enum { OPT_RUNC = CLI_OPT_OWN, OPT_HOOK_ENV };

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	char self[PATH_MAX], config_env[PATH_MAX + 32];
	const char *env[MAX_ENV + 1], *runc = "runc", *bundle;
	char *args[CLI_MAX_OPERANDS + 2];
	struct sh_error err = { 0 };
	struct cli_parser p;
	int id, nr_env = 1, r;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0) {
		if (id == OPT_RUNC) {
			runc = p.value;
		} else if (nr_env < MAX_ENV) {
			env[nr_env++] = p.value;
		} else {
			cli_usage_error(cmd, "--hook-env at most %d times",
					MAX_ENV - 1);
			return CMD_USAGE;
		}
	}
	if (id)
		return cli_exit(id);
	for (int i = 1; i < nr_env; i++) {
		if (strchr(env[i], '=') && env[i][0] != '=')
			continue;
		cli_usage_error(cmd, "--hook-env takes KEY=VALUE, not '%.32s'",
				env[i]);
		return CMD_USAGE;
	}
	snprintf(config_env, sizeof(config_env), SH_CONFIG_ENV "=%s",
		 config_path(p.config));
	env[0] = config_env;
	if (wiring_spec_bundle_verb(p.nr_operands, p.operand, &bundle) >= 0 &&
	    bundle) {
		struct wiring_hook hook = { .path = self,
					    .env = env,
					    .nr_env = nr_env };

		if (!realpath("/proc/self/exe", self)) {
			log_error(
				"runtime-exec: cannot tell where this binary is: %s",
				strerror(errno));
			return -errno;
		}
		r = wiring_spec_bundle_add(bundle, &hook, &err);
		if (r) {
			error_report(&err, r);
			return r;
		}
	}
	args[0] = (char *)runc;
	for (int i = 0; i < p.nr_operands; i++)
		args[i + 1] = p.operand[i];
	args[p.nr_operands + 1] = NULL;
	execvp(runc, args);
	log_error("runtime-exec: cannot run %s: %s", runc, strerror(errno));
	return -errno;
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	{ OPT_RUNC, "runc", "PATH", "the runtime to run (else runc on PATH)" },
	{ OPT_HOOK_ENV, "hook-env", "KEY=VALUE",
	  "more environment for the hook; repeatable" },
	{ 0 },
};

const struct cli_command cmd_runtime_exec_command = {
	.name = "runtime-exec",
	.operands = "-- RUNC-ARGS...",
	.min_operands = 1,
	.max_operands = CLI_MAX_OPERANDS,
	.summary = "an OCI runtime for Docker: the hook added, then runc",
	.description =
		"Docker's registered runtime "
		"(runtime configure --runtime docker):\n"
		"at create, the bundle's config.json gets this binary's createRuntime\n"
		"and poststop hooks (unless an entry of ours is there, a CDI device's);\n"
		"then runc runs with RUNC-ARGS, for every verb. A bundle that cannot\n"
		"be edited fails the create in one line.\n",
	.options = options,
	.run = run,
};
