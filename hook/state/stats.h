/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the hook's runs did on this node, for `metrics`: a count per
 * (stage, outcome, reason) and a latency histogram per stage. Counters
 * only grow (Prometheus counters). Every hook run appends one line to a
 * log in the state directory (no rename, nothing that waits for a
 * disk); a compaction folds the log into one small file, replaced
 * atomically, so a reader never sees half an update and no run is lost.
 *
 * This header is the contract between the writer (the hook's stages,
 * branch "audit") and the reader (`metrics`, branch "metrics").
 */
#ifndef SH_STATS_H
#define SH_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

enum stats_stage {
	STATS_PRESTART,
	STATS_POSTSTOP,
	STATS_STAGES,
};

enum stats_outcome {
	STATS_ATTACHED, /* programs attached to the container's cgroup */
	STATS_UNPOLICED, /* nothing to do: a sandbox, or no policy asked */
	STATS_REFUSED, /* prestart failed: the container does not start */
	STATS_FALLBACK, /* started without a feature the kernel lacks */
	STATS_RELEASED, /* poststop/gc/reaper detached a container */
	STATS_OUTCOMES,
};

/* A stable token, [a-z_]+, at most this long (with its NUL). */
#define STATS_REASON_MAX 40
/* Distinct (stage, outcome, reason) rows kept; more are folded into
 * reason "other", so the file and the metrics stay bounded. */
#define STATS_ROWS_MAX 64
/* Upper bounds of the latency buckets, seconds; the last is +Inf. */
#define STATS_LATENCY_BUCKETS 12

struct stats_row {
	enum stats_stage stage;
	enum stats_outcome outcome;
	char reason[STATS_REASON_MAX]; /* "" for attached/unpoliced/released */
	uint64_t count;
};

struct stats_histogram {
	uint64_t bucket[STATS_LATENCY_BUCKETS]; /* not cumulative */
	uint64_t count;
	double sum_seconds;
};

struct sh_node_stats {
	int nr_rows;
	struct stats_row row[STATS_ROWS_MAX];
	struct stats_histogram latency[STATS_STAGES];
	/* How much of the log this holds already: the first log_bytes bytes
	 * of the log of generation log_gen. */
	uint64_t log_gen;
	uint64_t log_bytes;
};

extern const char *const stats_stage_names[STATS_STAGES];
extern const char *const stats_outcome_names[STATS_OUTCOMES];
/* le="..." of each bucket, the last being +Inf. */
extern const double stats_latency_bounds[STATS_LATENCY_BUCKETS];

/* The parts of stats_log_add without the file, for unit tests: counting one
 * run into s (a negative seconds adds no latency sample: a release by gc
 * or the reaper), the file's text (malloc'd) and parsing it back. */
void stats_count(struct sh_node_stats *s, enum stats_stage stage,
		 enum stats_outcome outcome, const char *reason,
		 double seconds);
char *stats_format(const struct sh_node_stats *s, size_t *ret_len);
int stats_parse(char *text, struct sh_node_stats *ret);
/* One run as a log line ("\nprestart refused policy_not_allowed 0.0021\n";
 * "-" for no reason or no latency): its length, or -ENOSPC. */
int stats_format_run(char *buf, size_t size, enum stats_stage stage,
		     enum stats_outcome outcome, const char *reason,
		     double seconds);
/* Counts one log line (its newline removed) into s: -EBADMSG when it is
 * not one. line is modified. */
int stats_count_line(struct sh_node_stats *s, char *line);

/* The node's stats on disk: the log every hook run appends its line to,
 * and the file a compaction folds it into. */

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
int stats_log_read(struct sh_node_stats *ret, struct sh_error *err);
/* Folds the log into the file (`metrics` does before it reads; a run
 * does once the log has grown). 0 when there is nothing to fold. */
int stats_log_compact(struct sh_error *err);

#endif /* SH_STATS_H */
