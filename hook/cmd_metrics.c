// SPDX-License-Identifier: GPL-2.0-only
/*
 * `metrics [--output FILE]`: the node's metrics in Prometheus' text
 * format, on stdout or atomically into FILE (node_exporter's textfile
 * collector), run by a timer: the hook keeps no daemon of its own.
 */
#include <stdio.h>

#include "commands.h"
#include "log.h"
#include "metrics.h"
#include "version.h"

/* As main.c has it (the build may set it). */

int cmd_metrics(const struct cmd_args *args)
{
	struct sh_error err = { 0 };
	int r;

	if (args->output)
		r = metrics_write_file(args->output, SH_VERSION, &err);
	else
		r = metrics_write(stdout, SH_VERSION, &err);
	if (r)
		error_report(&err, r);
	return r;
}
