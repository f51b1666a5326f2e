// SPDX-License-Identifier: GPL-2.0-only
/*
 * The node's outcome counters (stats.h): one small text file, "stats", in
 * the state directory. A run locks "stats.lock" (flock), reads the file,
 * adds itself, and replaces it (temp file + rename): readers take no lock
 * and see the old file or the new one. A line per row, then a line per
 * stage's latency histogram:
 *
 *   oci-sockopt-hook stats 1
 *   row prestart refused policy_not_allowed 3
 *   latency prestart 12 0.0421 0 5 7 0 0 0 0 0 0 0 0 0
 *
 * (count, sum of seconds, then the buckets, not cumulative; "-" is the
 * empty reason.)
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "log.h"
#include "number.h"
#include "state.h"
#include "stats.h"

#define STATS_FILE "stats"
#define STATS_LOCK "stats.lock"
#define STATS_MAGIC "oci-sockopt-hook stats 1"
#define STATS_FILE_MAX 16384
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
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The file as it is in dir: zeros when absent; a damaged one starts
 * over, with a warning, rather than stop counting for good. */
static int stats_load_at(int dir, struct sh_node_stats *s)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = fileio_read_at(dir, STATS_FILE, 1, STATS_FILE_MAX, &text, &len);

	if (r == -ENOENT) {
		memset(s, 0, sizeof(*s));
		return 0;
	}
	if (!r && stats_parse(text, s) == 0)
		return 0;
	log_msg(LOG_NOTICE, "stats: %s/%s is damaged (%s): counting from zero",
		state_dir(), STATS_FILE, r ? strerror(-r) : "not a stats file");
	memset(s, 0, sizeof(*s));
	return 0;
}

/*
 * A container with nothing to attach leaves nothing behind where nothing
 * was ever policed (45-preload): its run is counted only once the state
 * directory exists. Every other outcome makes it, a refusal included.
 */
static int stats_update(enum stats_stage stage, enum stats_outcome outcome,
			const char *reason, double seconds,
			struct sh_error *err)
{
	bool create = outcome != STATS_UNPOLICED;
	_cleanup_close_ int dir = state_dir_open(create, err), lock = -1;
	_cleanup_free_ struct sh_node_stats *s = calloc(1, sizeof(*s));
	_cleanup_free_ char *text = NULL;
	size_t len;

	if (dir == -ENOENT && !create)
		return 0;
	if (dir < 0)
		return dir;
	if (!s)
		return -ENOMEM;
	lock = openat(dir, STATS_LOCK,
		      O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		      0600);
	/* Released by close: at the end of this scope. */
	if (lock < 0 || flock(lock, LOCK_EX) < 0)
		return error_errno(err, -errno, "cannot lock %s/%s",
				   state_dir(), STATS_LOCK);
	stats_load_at(dir, s);
	stats_count(s, stage, outcome, reason, seconds);
	text = stats_format(s, &len);
	if (!text)
		return -ENOMEM;
	return fileio_replace_at(dir, STATS_FILE, text, len);
}

void stats_add(enum stats_stage stage, enum stats_outcome outcome,
	       const char *reason, double seconds)
{
	struct sh_error err = { 0 };
	int r = stats_update(stage, outcome, reason, seconds, &err);

	/* A notice: the logs have it, and stderr keeps its one line, the
	 * run's error if any (the stats fail with it when the state
	 * directory does). */
	if (r)
		log_msg(LOG_NOTICE, "stats: cannot count this run: %s",
			error_text(&err, r));
}

int stats_read(struct sh_node_stats *out, struct sh_error *err)
{
	_cleanup_free_ char *text = NULL;
	struct sh_error dir_err = { 0 };
	size_t len;
	int r = state_file_read(STATS_FILE, STATS_FILE_MAX, &text, &len,
				&dir_err);

	memset(out, 0, sizeof(*out));
	/* No directory or no file: no run counted yet. */
	if (r == -ENOENT)
		return 0;
	if (r && dir_err.code) {
		*err = err->code ? *err : dir_err;
		return r;
	}
	if (r)
		return error_errno(err, r, "cannot read %s/%s", state_dir(),
				   STATS_FILE);
	r = stats_parse(text, out);
	if (r)
		return error_set(err, r, "%s/%s is damaged: not a stats file",
				 state_dir(), STATS_FILE);
	return 0;
}
