// SPDX-License-Identifier: GPL-2.0-only
/*
 * The node's outcome counters (stats.h) as text: the "stats" file that a
 * compaction writes (below), a line per row, then a line per
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
 *
 * Counting hook runs without rewriting a file on every run.
 *
 * A run appends one line to "stats.log" in the state directory: one
 * O_APPEND write, no rename. On a disk-backed /run a rename over the old
 * file made ext4 write the new one out first (auto_da_alloc): 0.5 ms on
 * every container start. A compaction folds the log into the "stats"
 * file (temp file + rename, the format above) and starts a new log:
 * `metrics` compacts before it reads, and a run compacts once the log
 * passes STATS_LOG_COMPACT bytes, so the log stays small where nothing
 * reads the metrics.
 *
 * Locks (flock): a run holds the log shared while it writes, a reader
 * while it reads the file and the log; a compaction holds "stats.lock"
 * (one compaction at a time, and older versions' writers, which lock it,
 * wait) and the log exclusively. Whoever finds that its log was replaced
 * while it waited (no link left) opens the new one.
 *
 * Crash safety: the log's first line names its generation, and the stats
 * file says how many bytes of which generation it holds ("log G N"). A
 * crash between writing the file and replacing the log leaves a log the
 * file already holds: those bytes are skipped, no run is counted twice.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/number.h"
#include "state/state.h"
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

static int stats_u64(const char *s, uint64_t *ret)
{
	long long v;
	int r = number_parse(s, 0, INT64_MAX, &v);

	*ret = (uint64_t)v;
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
int stats_parse(char *text, struct sh_node_stats *ret)
{
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	if (!line || strcmp(line, STATS_MAGIC))
		return -EBADMSG;
	while (!r && (line = strtok_r(NULL, "\n", &save)))
		r = stats_parse_line(ret, line);
	return r;
}

/* The file's text, in a buffer the caller frees. */
char *stats_format(const struct sh_node_stats *s, size_t *ret_len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, ret_len);

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

/* The log and the file. */

#define STATS_FILE "stats"
/* "\npoststop released " + a reason + a latency + "\n". */
#define STATS_LINE_MAX (64 + STATS_REASON_MAX)
#define STATS_LOCK "stats.lock"
#define STATS_LOG "stats.log"
#define STATS_LOG_MAGIC "oci-sockopt-hook stats-log 1 gen"
#define STATS_FILE_MAX 16384
/* About 2000 runs: a compaction (one rename) per 2000 runs at most. */
#define STATS_LOG_COMPACT (64 * 1024)
/* Far beyond what a compaction leaves; a bigger log is not ours. */
#define STATS_LOG_MAX (16 << 20)
/* Replaced again and again while we wait: someone else's loop. */
#define STATS_OPEN_TRIES 16

/* A new log of generation gen: in place of the old one (replace), or
 * only where there is none yet (-EEXIST otherwise). */
static int runlog_create(int dir, uint64_t gen, bool replace)
{
	_cleanup_close_ int fd = -1;
	char tmp[32], head[64];
	int len = snprintf(head, sizeof(head), "%s %" PRIu64 "\n",
			   STATS_LOG_MAGIC, gen);
	int r;

	/* A dot name: out of every listing, as fileio's temp files. */
	snprintf(tmp, sizeof(tmp), ".tmp.%d", getpid());
	fd = openat(dir, tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	r = fd < 0 ? -errno : fileio_write_all(fd, head, len);
	/* linkat never replaces: two first runs make one log. */
	if (!r && (replace ? renameat(dir, tmp, dir, STATS_LOG) :
			     linkat(dir, tmp, dir, STATS_LOG, 0)) < 0)
		r = -errno;
	if (r || !replace)
		unlinkat(dir, tmp, 0);
	return r;
}

/* Holds "stats.lock" shared: no compaction starts until it is closed. */
static int compactions_held(int dir)
{
	int fd = openat(dir, STATS_LOCK,
			O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			0600);

	if (fd < 0 || flock(fd, LOCK_SH) == 0)
		return fd < 0 ? -errno : fd;
	closep(&fd);
	return -errno;
}

/*
 * The log, opened with flags and locked with op (LOCK_SH, LOCK_EX, maybe
 * | LOCK_NB), and still the log (linked): an fd, its stat in *st, or
 * -errno; -ENOENT when there is none and !create. When a compaction
 * replaced it while we waited, the next try holds off compactions
 * (guard: never for a compaction, which holds their lock already), so
 * that a run of them cannot starve us.
 */
static int runlog_open(int dir, int flags, int op, bool create, bool guard,
		       struct stat *st)
{
	_cleanup_close_ int held = -1;

	for (int i = 0; i < STATS_OPEN_TRIES; i++) {
		_cleanup_close_ int fd =
			openat(dir, STATS_LOG,
			       flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		int r;

		if (fd < 0 && errno == ENOENT && create) {
			r = runlog_create(dir, 0, /* replace= */ false);
			if (r && r != -EEXIST)
				return r;
			continue;
		}
		if (fd < 0 || flock(fd, op) < 0 || fstat(fd, st) < 0)
			return -errno;
		if (!S_ISREG(st->st_mode))
			return -EINVAL;
		if (st->st_nlink)
			return take_fd(&fd);
		/* A compaction replaced it while we waited. */
		if (guard && held < 0) {
			held = compactions_held(dir);
			if (held < 0)
				return held;
		}
	}
	return -EAGAIN;
}

/* The log's generation, from its first line: the offset after it, or
 * -EBADMSG. */
static long runlog_header(const char *text, size_t len, uint64_t *gen)
{
	const char *nl = memchr(text, '\n', len);
	size_t magic = strlen(STATS_LOG_MAGIC);
	char num[24];
	long long v;

	if (!nl || (size_t)(nl - text) <= magic + 1 ||
	    (size_t)(nl - text) - magic - 1 >= sizeof(num) ||
	    strncmp(text, STATS_LOG_MAGIC " ", magic + 1))
		return -EBADMSG;
	snprintf(num, sizeof(num), "%.*s", (int)(nl - text - magic - 1),
		 text + magic + 1);
	if (number_parse(num, 0, INT64_MAX, &v))
		return -EBADMSG;
	*gen = (uint64_t)v;
	return nl - text + 1;
}

/*
 * Counts the runs of the log (text, len bytes) that s does not hold yet,
 * and marks them held. Each run was written as "\n<line>\n": a whole one
 * is followed by the end or by the next run's first newline. A write cut
 * short by a crash lacks its last newline and is followed by the next
 * run's line: it is skipped, and the next run still counts. A bad line
 * is skipped. -EBADMSG when the log has no valid first line (its runs
 * cannot be placed).
 */
static int runlog_fold(struct sh_node_stats *s, char *text, size_t len)
{
	uint64_t gen;
	long at = runlog_header(text, len, &gen);
	size_t pos;
	int bad = 0;

	if (at < 0)
		return (int)at;
	pos = (size_t)at;
	if (s->log_gen == gen && s->log_bytes > pos && s->log_bytes <= len)
		pos = s->log_bytes;
	while (pos < len) {
		char *line = text + pos, *nl = memchr(line, '\n', len - pos);

		if (!nl)
			break;
		pos = (size_t)(nl - text) + 1;
		if (nl == line)
			continue;
		*nl = '\0';
		if (pos < len && text[pos] != '\n')
			bad++; /* cut short */
		else if (stats_count_line(s, line))
			bad++;
	}
	if (bad)
		log_msg(LOG_NOTICE,
			"stats: %d damaged line(s) in %s/%s skipped", bad,
			state_dir(), STATS_LOG);
	s->log_gen = gen;
	s->log_bytes = len;
	return 0;
}

/* The stats file of dir: -ENOENT when there is none, -EBADMSG. */
static int file_read_at(int dir, struct sh_node_stats *s)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = fileio_read_at(dir, STATS_FILE, 1, STATS_FILE_MAX, &text, &len);

	memset(s, 0, sizeof(*s));
	if (r)
		return r;
	return stats_parse(text, s);
}

/* Folds the log of fd (locked) into s. */
static int fold_fd(int fd, struct sh_node_stats *s)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = fileio_read_fd(fd, STATS_LOG_MAX, &text, &len);

	return r ? r : runlog_fold(s, text, len);
}

/*
 * Under both locks: the file plus the log, written as the new file, then
 * a new, empty log. A damaged file or log starts over (a notice), as a
 * counter that stops for good would be worse.
 */
static int compact_locked(int dir, int log_fd)
{
	_cleanup_free_ struct sh_node_stats *s = calloc(1, sizeof(*s));
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	if (!s)
		return -ENOMEM;
	r = file_read_at(dir, s);
	if (r && r != -ENOENT) {
		log_msg(LOG_NOTICE,
			"stats: %s/%s is damaged (%s): counting from zero",
			state_dir(), STATS_FILE,
			r == -EBADMSG ? "not a stats file" : strerror(-r));
		memset(s, 0, sizeof(*s));
	}
	r = fold_fd(log_fd, s);
	if (r) {
		log_msg(LOG_NOTICE,
			"stats: %s/%s is damaged (%s): its runs are lost",
			state_dir(), STATS_LOG,
			r == -EBADMSG ? "no header" : strerror(-r));
		s->log_bytes = 0;
	}
	text = stats_format(s, &len);
	if (!text)
		return -ENOMEM;
	r = fileio_replace_at(dir, STATS_FILE, text, len);
	return r ? r : runlog_create(dir, s->log_gen + 1, /* replace= */ true);
}

/* wait: block for the locks, else give up at once (another process
 * compacts, or appends: a later run will). */
static int compact_at(int dir, bool wait)
{
	int nb = wait ? 0 : LOCK_NB;
	_cleanup_close_ int lock = openat(dir, STATS_LOCK,
					  O_RDWR | O_CREAT | O_NOFOLLOW |
						  O_NONBLOCK | O_CLOEXEC,
					  0600),
			    fd = -1;
	struct stat st;

	if (lock < 0 || flock(lock, LOCK_EX | nb) < 0)
		return errno == EWOULDBLOCK ? 0 : -errno;
	fd = runlog_open(dir, O_RDONLY, LOCK_EX | nb, /* create= */ false,
			 /* guard= */ false, &st);
	if (fd == -ENOENT || fd == -EWOULDBLOCK)
		return 0;
	if (fd < 0)
		return fd;
	return compact_locked(dir, fd);
}

int stats_log_compact(struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(/* create= */ false, err);
	int r;

	if (dir == -ENOENT)
		return 0;
	if (dir < 0)
		return dir;
	r = compact_at(dir, /* wait= */ true);
	if (r)
		return error_errno(err, r, "cannot fold %s/%s into %s",
				   state_dir(), STATS_LOG, STATS_FILE);
	return 0;
}

int stats_log_append(const char *line, size_t len, bool create,
		     struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(create, err), fd = -1;
	struct stat st;
	int r;

	if (dir == -ENOENT && !create)
		return 0;
	if (dir < 0)
		return dir;
	fd = runlog_open(dir, O_WRONLY | O_APPEND, LOCK_SH, /* create= */ true,
			 /* guard= */ true, &st);
	r = fd < 0 ? fd : fileio_write_all(fd, line, len);
	if (r)
		return error_errno(err, r, "cannot append to %s/%s",
				   state_dir(), STATS_LOG);
	closep(&fd); /* lets go of the shared lock */
	fd = -1;
	if ((size_t)st.st_size + len >= STATS_LOG_COMPACT)
		compact_at(dir, /* wait= */ false);
	return 0;
}

int stats_log_read(struct sh_node_stats *ret, struct sh_error *err)
{
	struct sh_error dir_err = { 0 };
	_cleanup_close_ int dir = state_dir_open(/* create= */ false, &dir_err),
			    fd = -1;
	struct stat st;
	int r;

	memset(ret, 0, sizeof(*ret));
	/* No directory: no run counted yet. */
	if (dir == -ENOENT)
		return 0;
	if (dir < 0) {
		*err = err->code ? *err : dir_err;
		return dir;
	}
	/* Shared: no compaction between reading the file and the log. */
	fd = runlog_open(dir, O_RDONLY, LOCK_SH, /* create= */ false,
			 /* guard= */ true, &st);
	if (fd < 0 && fd != -ENOENT)
		return error_errno(err, fd, "cannot read %s/%s", state_dir(),
				   STATS_LOG);
	r = file_read_at(dir, ret);
	if (r == -EBADMSG)
		return error_set(err, r, "%s/%s is damaged: not a stats file",
				 state_dir(), STATS_FILE);
	if (r && r != -ENOENT)
		return error_errno(err, r, "cannot read %s/%s", state_dir(),
				   STATS_FILE);
	r = fd < 0 ? 0 : fold_fd(fd, ret);
	if (r)
		return error_set(err, r, "%s/%s is damaged: %s", state_dir(),
				 STATS_LOG,
				 r == -EBADMSG ? "no header" : strerror(-r));
	return 0;
}

/*
 * A container with nothing to attach leaves nothing behind where nothing
 * was ever policed (45-preload): its run is counted only once the state
 * directory exists. Every other outcome makes it, a refusal included.
 */
void stats_log_add(enum stats_stage stage, enum stats_outcome outcome,
		   const char *reason, double seconds)
{
	struct sh_error err = { 0 };
	char line[STATS_LINE_MAX];
	int len = stats_format_run(line, sizeof(line), stage, outcome, reason,
				   seconds);
	int r = len < 0 ? len :
			  stats_log_append(line, (size_t)len,
					   outcome != STATS_UNPOLICED, &err);

	/* A notice: the logs have it, and stderr keeps its one line, the
	 * run's error if any (the stats fail with it when the state
	 * directory does). */
	if (r)
		log_msg(LOG_NOTICE, "stats: cannot count this run: %s",
			error_text(&err, r));
}
