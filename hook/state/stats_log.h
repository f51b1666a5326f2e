/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The node's stats on disk (stats.h's counters): the log every hook run
 * appends its line to, and the file a compaction folds it into.
 */
#ifndef SH_STATS_LOG_H
#define SH_STATS_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"
#include "state/stats.h"

/* Adds one run. reason may be NULL. Never fails the run: a log that
 * cannot be written is a notice in the logs (stderr keeps its one line,
 * the run's error). */
void stats_log_add(enum stats_stage stage, enum stats_outcome outcome,
		   const char *reason, double seconds);
/* Appends one run's line (stats_format_run()); the state directory is
 * made when create, else a missing one counts nothing. */
int stats_log_append(const char *line, size_t len, bool create,
		     struct sh_error *err);
/* The file and the log: zeros when no run was ever counted; -EBADMSG for
 * a damaged file. */
int stats_log_read(struct sh_node_stats *out, struct sh_error *err);
/* Folds the log into the file (`metrics` does before it reads; a run
 * does once the log has grown). 0 when there is nothing to fold. */
int stats_log_compact(struct sh_error *err);

#endif /* SH_STATS_LOG_H */
