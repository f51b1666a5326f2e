// SPDX-License-Identifier: GPL-2.0-only
/*
 * oci-sockopt-hook: per-container socket policy through cgroup BPF.
 * A command table as in bpftool: main reads the global options (before
 * the command), finds the command, and hands it the rest of the command
 * line, which the command parses itself (cli.h). Errors are reported
 * once, below, where their context is known; main only turns them into
 * an exit status.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "lib/context.h"
#include "lib/log.h"
#include "lib/timing.h"
#include "lib/version.h"

static int run_help(const struct cli_command *cmd,
		    const struct cli_global *global, int argc, char **argv);

static const struct cli_option help_options[] = {
	{ 0 },
};

static const struct cli_command help_command = {
	.name = "help",
	.operands = "[COMMAND]",
	.max_operands = 1,
	.summary = "the list of commands, or one command's usage",
	.options = help_options,
	.run = run_help,
};

static const struct cli_command *const commands[] = {
	&cmd_prestart_command, &cmd_create_runtime_command,
	&cmd_poststop_command, &cmd_hook_command,
	&cmd_probe_command,    &cmd_status_command,
	&cmd_explain_command,  &cmd_validate_command,
	&cmd_gc_command,       &cmd_metrics_command,
	&cmd_features_command, &cmd_record_command,
	&cmd_preload_command,  &cmd_apply_command,
	&cmd_nri_command,      &cmd_runtime_config_command,
	&cmd_cdi_command,      &cmd_runtime_exec_command,
	&help_command,
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [--config PATH] [--json] COMMAND [OPTION]... [ARG]...\n"
		"       %s COMMAND --help   (or: %s help COMMAND)\n"
		"       %s --version [--json]\n\n"
		"Commands:\n",
		SH_IDENT, SH_IDENT, SH_IDENT, SH_IDENT);
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-14s %s\n", commands[i]->name,
			commands[i]->summary);
	fprintf(out,
		"\nGlobal options, before the command:\n"
		"  -c, --config PATH  the operator config (else $%s,\n"
		"                     else %s);\n"
		"                     a command that reads none ignores it\n"
		"  -j, --json         JSON output, for the commands that have it\n"
		"  -h, --help         print this help and exit\n"
		"  -V, --version      the version of the hook and of each library it links\n",
		SH_CONFIG_ENV, SH_DEFAULT_CONFIG);
}

static const struct cli_command *find_command(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

static int run_help(const struct cli_command *cmd,
		    const struct cli_global *global, int argc, char **argv)
{
	const struct cli_command *about;
	struct cli_parser p;
	int end = cli_parse(&p, cmd, global, argc, argv);

	if (end)
		return cli_exit(end);
	if (!p.nr_operands) {
		usage(stdout);
		return 0;
	}
	about = find_command(p.operand[0]);
	if (!about) {
		cli_usage_error(cmd, "unknown command %s", LOG_Q(p.operand[0]));
		return CMD_USAGE;
	}
	cli_usage(stdout, about);
	return 0;
}

/* getopt said '?' or ':' about a global option. */
static void global_error(int c, char **argv)
{
	if (c == ':')
		log_error("option --config needs a value (try --help)");
	else if (optopt)
		log_error("unknown option '-%c' (try --help)", optopt);
	else
		log_error("unknown option %s (try --help)",
			  LOG_Q(argv[optind - 1]));
}

/* 1 when it printed what was asked (--help, --version), 0 to go on. */
static int parse_global(int argc, char **argv, struct cli_global *global)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool version = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:jhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			global->config = optarg;
			break;
		case 'j':
			global->json = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			version = true; /* after the loop: --version --json */
			break;
		default:
			global_error(c, argv);
			return -CMD_USAGE;
		}
	}
	if (version)
		return version_print(SH_VERSION, global->json) ?: 1;
	return 0;
}

/* The run's context (lib/context.h), from the environment: the one place
 * the hook reads it, but for the NRI plugin's own variables (cmd_nri.c). */
static void context_from_env(void)
{
	const char *timing = getenv("OCI_SOCKOPT_HOOK_TIMING");
	struct sh_context ctx = {
		.config = getenv(SH_CONFIG_ENV),
		.state_dir = getenv("OCI_SOCKOPT_HOOK_STATE_DIR"),
		.pin_dir = getenv("OCI_SOCKOPT_HOOK_PIN_DIR"),
		.keys_cgroup = getenv("OCI_SOCKOPT_HOOK_KEYS_CGROUP"),
		.modules_dir = getenv("OCI_SOCKOPT_HOOK_MODULES_DIR"),
		.path = getenv("PATH"),
		.tmpdir = secure_getenv("TMPDIR"),
		.timing = timing && !strcmp(timing, "1"),
	};

	context_set(&ctx);
}

int main(int argc, char **argv)
{
	struct cli_global global = { 0 };
	const struct cli_command *cmd;
	int r;

	timing_start();
	context_from_env();
	r = parse_global(argc, argv, &global);
	if (r)
		return r > 0 ? 0 : 2;
	if (optind >= argc && getenv("NRI_PLUGIN_SOCKET")) {
		/* a pre-registered NRI plugin: the runtime runs
		 * /opt/nri/plugins/NN-name with no argument */
		cmd = &cmd_nri_command;
		optind = argc - 1;
	} else if (optind >= argc) {
		log_error("no command given (try --help)");
		return 2;
	} else {
		cmd = find_command(argv[optind]);
	}
	if (!cmd) {
		log_error("unknown command %s (try --help)",
			  LOG_Q(argv[optind]));
		return 2;
	}
	/* --json before a command that has no JSON output would be
	 * ignored: a script asking for JSON would get text. */
	if (global.json && !cli_takes(cmd, "json")) {
		cli_usage_error(cmd, "no JSON output: it takes no --json");
		return 2;
	}
	log_libbpf_route();
	r = cmd->run(cmd, &global, argc - optind, argv + optind);
	log_close();
	if (r == CMD_USAGE)
		return 2;
	return r ? 1 : 0;
}
