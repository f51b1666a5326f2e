// SPDX-License-Identifier: GPL-2.0-only
/*
 * oci-sockopt-hook: per-container socket policy through cgroup BPF.
 * A command table as in bpftool; errors are reported once, below, where
 * their context is known, and main only turns them into an exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "load.h"
#include "commands.h"
#include "log.h"
#include "timing.h"
#include "version.h"

struct command {
	const char *name;
	int (*run)(const struct cmd_args *args);
	const char *help;
};

static const struct command commands[] = {
	{ "prestart", cmd_prestart, "attach the policy (OCI state on stdin)" },
	{ "createRuntime", cmd_prestart, "same as prestart" },
	{ "poststop", cmd_poststop, "release what prestart did (never fails)" },
	{ "hook", cmd_hook,
	  "prestart or poststop, from the state's status (hooks.d files)" },
	{ "probe", cmd_probe, "what this kernel and host support" },
	{ "status", cmd_status,
	  "containers the hook manages, with counters [ID]" },
	{ "explain", cmd_explain,
	  "dry run: the effective policy (--bundle DIR, or state on stdin)" },
	{ "validate", cmd_validate,
	  "check an operator config [CONFIG] [--hooks-dir DIR]..." },
	{ "gc", cmd_gc, "release state left by containers that are gone" },
	{ "metrics", cmd_metrics,
	  "Prometheus text format, for node_exporter [--output FILE.prom]" },
	{ "features", cmd_features,
	  "node labels for Node Feature Discovery [--nfd-file FILE]" },
	{ "record", cmd_footprint,
	  "the socket footprint of a recorded container, and its policy ID;\n"
	  "                 record merge NAME|FILE...: one policy from the\n"
	  "                 recordings of a workload's replicas and restarts" },
	{ "preload", cmd_preload,
	  "load and pin every policy's programs ahead of time [--unpin]" },
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [--config PATH] [--json] COMMAND [ARGS]\n"
		"       %s --version [--json]  the version of the hook and of "
		"each library it links\n\n"
		"Commands:\n",
		SH_IDENT, SH_IDENT);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-14s %s\n", commands[i].name,
			commands[i].help);
	fprintf(out,
		"\nOperator config: --config, $OCI_SOCKOPT_HOOK_CONFIG, or "
		"/etc/oci-sockopt-hook/config.json\n");
}

static int parse_options(int argc, char **argv, struct cmd_args *args)
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

	while ((c = getopt_long(argc, argv, "+c:jhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			args->config = optarg;
			break;
		case 'j':
			args->json = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			version = true; /* after the loop: --version --json */
			break;
		default:
			return -EINVAL;
		}
	}
	if (version)
		return version_print(SH_VERSION, args->json) ?: 1;
	return 0;
}

/* The options that take a value, after the command. */
static const char **value_option(struct cmd_args *args, const char *name)
{
	static const struct {
		const char *name;
		size_t offset;
	} value_opts[] = {
		{ "--config", offsetof(struct cmd_args, config) },
		{ "--bundle", offsetof(struct cmd_args, bundle) },
		{ "--namespace", offsetof(struct cmd_args, namespace_filter) },
		{ "--pod", offsetof(struct cmd_args, pod_filter) },
		{ "--container", offsetof(struct cmd_args, container_filter) },
		{ "--policy", offsetof(struct cmd_args, policy_filter) },
		{ "--output", offsetof(struct cmd_args, output) },
		{ "--nfd-file", offsetof(struct cmd_args, nfd_file) },
	};

	for (size_t i = 0; i < sizeof(value_opts) / sizeof(value_opts[0]); i++)
		if (!strcmp(value_opts[i].name, name))
			return (const char **)((char *)args +
					       value_opts[i].offset);
	return NULL;
}

/* Options may also follow the command: `probe --json`. */
static int parse_trailing(int argc, char **argv, struct cmd_args *args)
{
	args->argc = 0;
	args->argv = argv;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			args->json = true;
		} else if (!strcmp(argv[i], "--unpin")) {
			args->unpin = true;
		} else if (value_option(args, argv[i])) {
			if (i + 1 == argc) {
				log_error("option %s needs a value", argv[i]);
				return -EINVAL;
			}
			*value_option(args, argv[i]) = argv[i + 1];
			i++;
		} else if (!strcmp(argv[i], "--hooks-dir") && i + 1 < argc) {
			if (args->nr_hooks_dirs == SH_MAX_HOOKS_DIRS) {
				log_error("at most %d --hooks-dir options",
					  SH_MAX_HOOKS_DIRS);
				return -EINVAL;
			}
			args->hooks_dirs[args->nr_hooks_dirs++] = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			log_error("unknown option %s", argv[i]);
			return -EINVAL;
		} else {
			args->argv[args->argc++] = argv[i];
		}
	}
	return 0;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct cmd_args args = { 0 };
	const struct command *cmd;
	int r;

	timing_start();
	r = parse_options(argc, argv, &args);

	if (r)
		return r > 0 ? 0 : 2;
	if (optind >= argc) {
		log_error("no command given (try --help)");
		return 2;
	}
	cmd = find_command(argv[optind]);
	if (!cmd) {
		log_error("unknown command '%.64s' (try --help)", argv[optind]);
		return 2;
	}
	if (parse_trailing(argc - optind - 1, argv + optind + 1, &args))
		return 2;
	load_quiet_libbpf();
	args.command = cmd->name;
	r = cmd->run(&args);
	log_close();
	if (r == CMD_USAGE)
		return 2;
	return r ? 1 : 0;
}
