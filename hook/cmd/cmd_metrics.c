// SPDX-License-Identifier: GPL-2.0-only
/*
 * `metrics [--output FILE]`: the node's metrics in Prometheus' text
 * format, on stdout or atomically into FILE (node_exporter's textfile
 * collector), run by a timer: the hook keeps no daemon of its own.
 */
#include <stdio.h>

#include "cmd/commands.h"
#include "lib/log.h"
#include "lib/version.h"
#include "observe/metrics.h"

static int metrics(const char *output)
{
	struct sh_error err = { 0 };
	int r;

	if (output)
		r = metrics_write_file(output, SH_VERSION, &err);
	else
		r = metrics_write(stdout, SH_VERSION, &err);
	if (r)
		error_report(&err, r);
	return r;
}

enum { OPT_OUTPUT = CLI_OPT_OWN };

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	const char *output = NULL; /* --output FILE.prom, or NULL: stdout */
	struct cli_parser p;
	int id;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0)
		if (id == OPT_OUTPUT)
			output = p.value;
	if (id)
		return cli_exit(id);
	return metrics(output);
}

static const struct cli_option options[] = {
	{ OPT_OUTPUT, "output", "FILE.prom",
	  "replace FILE.prom atomically (node_exporter's textfile collector) "
	  "instead of printing" },
	{ 0 },
};

const struct cli_command cmd_metrics_command = {
	.name = "metrics",
	.summary = "the node's metrics in Prometheus' text format",
	.description =
		"Hook runs by stage, outcome and reason, their duration, and per\n"
		"policed container its names, policy and the socket calls its\n"
		"programs allowed, denied, clamped or forced. No daemon: a timer or\n"
		"the DaemonSet runs it. On stdout, or into --output FILE.prom.\n",
	.options = options,
	.run = run,
};
