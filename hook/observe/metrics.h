/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `metrics`: what the hook did on this node (stats.h) and what the
 * programs of each policed container saw (counters.h), in Prometheus'
 * text format, for node_exporter's textfile collector.
 */
#ifndef SH_METRICS_H
#define SH_METRICS_H

#include <stdio.h>

#include "lib/error.h"

#define METRICS_PREFIX "oci_sockopt_hook_"

/* Writes every family to out; a record or counter that cannot be read
 * is skipped with a warning and counted in ..._collect_errors. */
int metrics_write(FILE *out, const char *version, struct sh_error *err);
/* The same into path (which must end in ".prom"), atomically: a temp
 * file beside it ('.'-prefixed, which the collector ignores), then
 * rename. */
int metrics_write_file(const char *path, const char *version,
		       struct sh_error *err);

#endif /* SH_METRICS_H */
