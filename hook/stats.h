/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the hook's runs did on this node, for `metrics`: a count per
 * (stage, outcome, reason) and a latency histogram per stage, kept in one
 * small file in the state directory that every hook run adds to. Counters
 * only grow (Prometheus counters); the file is replaced atomically under
 * a lock, so a reader never sees half an update and no run is lost.
 *
 * This header is the contract between the writer (the hook's stages,
 * branch "audit") and the reader (`metrics`, branch "metrics").
 */
#ifndef SH_STATS_H
#define SH_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

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
};

extern const char *const stats_stage_names[STATS_STAGES];
extern const char *const stats_outcome_names[STATS_OUTCOMES];
/* le="..." of each bucket, the last being +Inf. */
extern const double stats_latency_bounds[STATS_LATENCY_BUCKETS];

/* Adds one run. reason may be NULL. Never fails the run: a file that
 * cannot be updated is a notice in the logs (stderr keeps its one line,
 * the run's error). */
void stats_add(enum stats_stage stage, enum stats_outcome outcome,
	       const char *reason, double seconds);
/* Zeros when no run ever wrote the file; -EBADMSG for a damaged one. */
int stats_read(struct sh_node_stats *out, struct sh_error *err);

/* The parts of stats_add without the file, for unit tests: counting one
 * run into s (a negative seconds adds no latency sample: a release by gc
 * or the reaper), the file's text (malloc'd) and parsing it back. */
void stats_count(struct sh_node_stats *s, enum stats_stage stage,
		 enum stats_outcome outcome, const char *reason,
		 double seconds);
char *stats_format(const struct sh_node_stats *s, size_t *len);
int stats_parse(char *text, struct sh_node_stats *out);

#endif /* SH_STATS_H */
