// SPDX-License-Identifier: GPL-2.0-only
/*
 * The node's outcome counters (stats.h) as text: the "stats" file that a
 * compaction writes (stats_log.c), a line per row, then a line per
 * stage's latency histogram, then how much of the log it holds:
 *
 *   oci-sockopt-hook stats 1
 *   row prestart refused policy_not_allowed 3
 *   latency prestart 12 0.0421 0 5 7 0 0 0 0 0 0 0 0 0
 *   log 4 1830
 *
 * (count, sum of seconds, then the buckets, not cumulative; "-" is the
 * empty reason; the log's generation and bytes), and the log's lines, one
 * per run, each written with a newline before and after it:
 *
 *   prestart refused policy_not_allowed 0.0021
 *
 *   poststop released - -
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/number.h"
#include "state/stats.h"

#define STATS_MAGIC "oci-sockopt-hook stats 1"
#define STATS_OTHER "other"
/* Rows kept back so every (stage, outcome) can still fold into "other". */
#define STATS_SPECIFIC_MAX (STATS_ROWS_MAX - STATS_STAGES * STATS_OUTCOMES)
#define STATS_FIELDS_MAX (4 + STATS_LATENCY_BUCKETS)

const char *const stats_stage_names[STATS_STAGES] = {
	[STATS_PRESTART] = "prestart",
	[STATS_POSTSTOP] = "poststop",
};

const char *const stats_outcome_names[STATS_OUTCOMES] = {
	[STATS_ATTACHED] = "attached", [STATS_UNPOLICED] = "unpoliced",
	[STATS_REFUSED] = "refused",   [STATS_FALLBACK] = "fallback",
	[STATS_RELEASED] = "released",
};

/* A hook run takes milliseconds; seconds mean a stuck kernel or disk. */
const double stats_latency_bounds[STATS_LATENCY_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1,   0.25,   0.5,   1,    2.5,   INFINITY,
};

/* A token is [a-z_]+ and fits; anything else is folded into "other". */
static bool stats_token_ok(const char *s)
{
	size_t len = strlen(s);

	if (len >= STATS_REASON_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
			return false;
	return true;
}

static struct stats_row *stats_find(struct sh_node_stats *s,
				    enum stats_stage stage,
				    enum stats_outcome outcome,
				    const char *reason)
{
	for (int i = 0; i < s->nr_rows; i++)
		if (s->row[i].stage == stage && s->row[i].outcome == outcome &&
		    !strcmp(s->row[i].reason, reason))
			return &s->row[i];
	return NULL;
}

/* The row to count in: reason's own, or "other" once rows run short. */
static struct stats_row *stats_row_for(struct sh_node_stats *s,
				       enum stats_stage stage,
				       enum stats_outcome outcome,
				       const char *reason)
{
	struct stats_row *row;

	if (!stats_token_ok(reason))
		reason = STATS_OTHER;
	row = stats_find(s, stage, outcome, reason);
	if (row)
		return row;
	if (s->nr_rows >= STATS_SPECIFIC_MAX && strcmp(reason, STATS_OTHER)) {
		reason = STATS_OTHER;
		row = stats_find(s, stage, outcome, reason);
		if (row)
			return row;
	}
	if (s->nr_rows >= STATS_ROWS_MAX)
		return NULL;
	row = &s->row[s->nr_rows++];
	row->stage = stage;
	row->outcome = outcome;
	row->count = 0;
	snprintf(row->reason, sizeof(row->reason), "%s", reason);
	return row;
}

/* Counts one run into s (no file): the bounds and folding, testable. */
void stats_count(struct sh_node_stats *s, enum stats_stage stage,
		 enum stats_outcome outcome, const char *reason, double seconds)
{
	struct stats_row *row;
	struct stats_histogram *h;
	int b = 0;

	if ((unsigned)stage >= STATS_STAGES ||
	    (unsigned)outcome >= STATS_OUTCOMES)
		return;
	row = stats_row_for(s, stage, outcome, reason ? reason : "");
	if (row)
		row->count++;
	/* No time to tell (a release by gc or the reaper): no sample. */
	if (!(seconds >= 0))
		return;
	h = &s->latency[stage];
	while (b < STATS_LATENCY_BUCKETS - 1 &&
	       seconds > stats_latency_bounds[b])
		b++;
	h->bucket[b]++;
	h->count++;
	h->sum_seconds += seconds;
}

static int stats_index(const char *name, const char *const *names, int nr)
{
	for (int i = 0; i < nr; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

static int stats_u64(const char *s, uint64_t *out)
{
	long long v;
	int r = number_parse(s, 0, INT64_MAX, &v);

	*out = (uint64_t)v;
	return r;
}

static int stats_parse_row(struct sh_node_stats *s, char **f, int n)
{
	int stage, outcome;
	struct stats_row *row;
	const char *reason;

	if (n != 5 || s->nr_rows >= STATS_ROWS_MAX)
		return -EBADMSG;
	stage = stats_index(f[1], stats_stage_names, STATS_STAGES);
	outcome = stats_index(f[2], stats_outcome_names, STATS_OUTCOMES);
	reason = strcmp(f[3], "-") ? f[3] : "";
	if (stage < 0 || outcome < 0 || !stats_token_ok(reason) ||
	    stats_find(s, stage, outcome, reason))
		return -EBADMSG;
	row = &s->row[s->nr_rows++];
	row->stage = stage;
	row->outcome = outcome;
	snprintf(row->reason, sizeof(row->reason), "%s", reason);
	return stats_u64(f[4], &row->count) ? -EBADMSG : 0;
}

static int stats_parse_latency(struct sh_node_stats *s, char **f, int n)
{
	int stage = n == 4 + STATS_LATENCY_BUCKETS ?
			    stats_index(f[1], stats_stage_names, STATS_STAGES) :
			    -1;
	struct stats_histogram *h;
	char *end;

	if (stage < 0)
		return -EBADMSG;
	h = &s->latency[stage];
	errno = 0;
	h->sum_seconds = strtod(f[3], &end);
	if (errno || *end || !(h->sum_seconds >= 0) ||
	    stats_u64(f[2], &h->count))
		return -EBADMSG;
	for (int b = 0; b < STATS_LATENCY_BUCKETS; b++)
		if (stats_u64(f[4 + b], &h->bucket[b]))
			return -EBADMSG;
	return 0;
}

static int stats_parse_line(struct sh_node_stats *s, char *line)
{
	char *f[STATS_FIELDS_MAX + 1], *save = NULL;
	int n = 0;

	for (char *t = strtok_r(line, " ", &save); t && n <= STATS_FIELDS_MAX;
	     t = strtok_r(NULL, " ", &save))
		f[n++] = t;
	if (n == 0)
		return 0;
	if (!strcmp(f[0], "row"))
		return stats_parse_row(s, f, n);
	if (!strcmp(f[0], "latency"))
		return stats_parse_latency(s, f, n);
	if (!strcmp(f[0], "log") && n == 3)
		return stats_u64(f[1], &s->log_gen) ||
				       stats_u64(f[2], &s->log_bytes) ?
			       -EBADMSG :
			       0;
	return -EBADMSG;
}

/* text is modified. */
int stats_parse(char *text, struct sh_node_stats *out)
{
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (!line || strcmp(line, STATS_MAGIC))
		return -EBADMSG;
	while (!r && (line = strtok_r(NULL, "\n", &save)))
		r = stats_parse_line(out, line);
	return r;
}

/* The file's text, in a buffer the caller frees. */
char *stats_format(const struct sh_node_stats *s, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	fprintf(f, "%s\n", STATS_MAGIC);
	for (int i = 0; i < s->nr_rows; i++)
		fprintf(f, "row %s %s %s %llu\n",
			stats_stage_names[s->row[i].stage],
			stats_outcome_names[s->row[i].outcome],
			s->row[i].reason[0] ? s->row[i].reason : "-",
			(unsigned long long)s->row[i].count);
	for (int st = 0; st < STATS_STAGES; st++) {
		const struct stats_histogram *h = &s->latency[st];

		fprintf(f, "latency %s %llu %.9g", stats_stage_names[st],
			(unsigned long long)h->count, h->sum_seconds);
		for (int b = 0; b < STATS_LATENCY_BUCKETS; b++)
			fprintf(f, " %llu", (unsigned long long)h->bucket[b]);
		fputc('\n', f);
	}
	fprintf(f, "log %" PRIu64 " %" PRIu64 "\n", s->log_gen, s->log_bytes);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int stats_format_run(char *buf, size_t size, enum stats_stage stage,
		     enum stats_outcome outcome, const char *reason,
		     double seconds)
{
	char sec[32] = "-";
	int len;

	if ((unsigned)stage >= STATS_STAGES ||
	    (unsigned)outcome >= STATS_OUTCOMES)
		return -EINVAL;
	if (!reason || !*reason)
		reason = "-";
	else if (!stats_token_ok(reason))
		reason = STATS_OTHER;
	if (seconds >= 0)
		snprintf(sec, sizeof(sec), "%.9g", seconds);
	/* A newline first too: a line cut short by a crash (no newline)
	 * ends there, and cannot swallow the next run's. */
	len = snprintf(buf, size, "\n%s %s %s %s\n", stats_stage_names[stage],
		       stats_outcome_names[outcome], reason, sec);
	return len < 0 || (size_t)len >= size ? -ENOSPC : len;
}

int stats_count_line(struct sh_node_stats *s, char *line)
{
	char *f[5], *save = NULL, *end;
	int n = 0, stage, outcome;
	double seconds = -1;

	for (char *t = strtok_r(line, " ", &save); t && n < 5;
	     t = strtok_r(NULL, " ", &save))
		f[n++] = t;
	if (n != 4)
		return -EBADMSG;
	stage = stats_index(f[0], stats_stage_names, STATS_STAGES);
	outcome = stats_index(f[1], stats_outcome_names, STATS_OUTCOMES);
	if (stage < 0 || outcome < 0)
		return -EBADMSG;
	if (strcmp(f[3], "-")) {
		errno = 0;
		seconds = strtod(f[3], &end);
		if (errno || *end || !(seconds >= 0))
			return -EBADMSG;
	}
	stats_count(s, stage, outcome, strcmp(f[2], "-") ? f[2] : "", seconds);
	return 0;
}
