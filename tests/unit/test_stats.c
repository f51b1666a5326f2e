// SPDX-License-Identifier: GPL-2.0-only
/*
 * stats.c: rows per (stage, outcome, reason), bounded by
 * folding into "other"; the file's text and the log's lines read back;
 * stats_log_add() from several processes at once, with compactions among
 * them; a crash between a compaction's two steps; what one call costs.
 *
 * Modules: `stats.c`
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/context.h"
#include "state/stats.h"
#include "tap.h"

static uint64_t count_of(const struct sh_node_stats *s, enum stats_stage st,
			 enum stats_outcome o, const char *reason)
{
	for (int i = 0; i < s->nr_rows; i++)
		if (s->row[i].stage == st && s->row[i].outcome == o &&
		    !strcmp(s->row[i].reason, reason))
			return s->row[i].count;
	return 0;
}

static void test_count(void)
{
	static struct sh_node_stats s;

	stats_count(&s, STATS_PRESTART, STATS_ATTACHED, NULL, 0.002);
	stats_count(&s, STATS_PRESTART, STATS_ATTACHED, "", 0.0005);
	stats_count(&s, STATS_PRESTART, STATS_REFUSED, "policy_not_allowed",
		    0.3);
	stats_count(&s, STATS_POSTSTOP, STATS_RELEASED, NULL, -1);
	ok(s.nr_rows == 3, "three distinct rows (%d)", s.nr_rows);
	ok(count_of(&s, STATS_PRESTART, STATS_ATTACHED, "") == 2,
	   "NULL and \"\" are the same reason");
	ok(s.latency[STATS_PRESTART].count == 3 &&
		   s.latency[STATS_PRESTART].bucket[0] == 1 &&
		   s.latency[STATS_PRESTART].bucket[1] == 1 &&
		   s.latency[STATS_PRESTART].bucket[8] == 1,
	   "latency: 0.5 ms in le=0.001, 2 ms in le=0.0025, 0.3 s in le=0.5");
	ok(s.latency[STATS_POSTSTOP].count == 0,
	   "a negative time adds no latency sample");
	stats_count(&s, STATS_PRESTART, STATS_REFUSED, "Bad Token\n", 0);
	stats_count(&s, STATS_PRESTART, STATS_REFUSED,
		    "a_reason_that_is_much_too_long_for_a_stats_row", 0);
	ok(count_of(&s, STATS_PRESTART, STATS_REFUSED, "other") == 2,
	   "a reason that is not a short [a-z_]+ token counts as \"other\"");
	stats_count(&s, STATS_PRESTART, STATS_REFUSED, "x", 1e9);
	ok(s.latency[STATS_PRESTART].bucket[STATS_LATENCY_BUCKETS - 1] == 1,
	   "a huge time lands in +Inf");
}

static void test_fold(void)
{
	static struct sh_node_stats s;
	char reason[32];
	uint64_t total = 0;

	for (int i = 0; i < 200; i++) {
		snprintf(reason, sizeof(reason), "reason_%c%c", 'a' + i % 26,
			 'a' + i / 26);
		stats_count(&s, i % 2 ? STATS_PRESTART : STATS_POSTSTOP,
			    i % 3 ? STATS_REFUSED : STATS_FALLBACK, reason, 0);
	}
	for (int o = 0; o < STATS_OUTCOMES; o++)
		stats_count(&s, STATS_PRESTART, o, "late_reason", 0);
	ok(s.nr_rows <= STATS_ROWS_MAX, "200 reasons: %d rows, at most %d",
	   s.nr_rows, STATS_ROWS_MAX);
	for (int i = 0; i < s.nr_rows; i++)
		total += s.row[i].count;
	ok(total == 200 + STATS_OUTCOMES,
	   "no run is lost when reasons fold (%llu)",
	   (unsigned long long)total);
	ok(count_of(&s, STATS_PRESTART, STATS_ATTACHED, "other") == 1,
	   "a full table still counts a new (stage, outcome) in \"other\"");
}

static void test_text(void)
{
	static struct sh_node_stats s, back;
	char *text;
	size_t len;

	stats_count(&s, STATS_PRESTART, STATS_FALLBACK,
		    "bypass_prot_mem_unsupported", 0.01);
	stats_count(&s, STATS_POSTSTOP, STATS_RELEASED, NULL, 0.004);
	text = stats_format(&s, &len);
	ok(text && stats_parse(text, &back) == 0, "the file's text reads back");
	ok(!memcmp(&s, &back, sizeof(s)), "the same stats");
	free(text);
	text = strdup("oci-sockopt-hook stats 1\nrow prestart exploded - 1\n");
	ok(stats_parse(text, &back) == -EBADMSG, "an unknown outcome: EBADMSG");
	free(text);
	text = strdup(
		"oci-sockopt-hook stats 1\nrow prestart refused B\"ad 1\n");
	ok(stats_parse(text, &back) == -EBADMSG, "a bad reason: EBADMSG");
	free(text);
	text = strdup("something else\n");
	ok(stats_parse(text, &back) == -EBADMSG, "no magic line: EBADMSG");
	free(text);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_lines(void)
{
	static struct sh_node_stats s;
	char line[128];
	int len = stats_format_run(line, sizeof(line), STATS_PRESTART,
				   STATS_REFUSED, "policy_not_allowed", 0.25);

	ok(len > 0 && !strcmp(line,
			      "\nprestart refused policy_not_allowed 0.25\n"),
	   "a run as a log line, a newline before and after it");
	line[len - 1] = '\0';
	ok(stats_count_line(&s, line + 1) == 0 &&
		   count_of(&s, STATS_PRESTART, STATS_REFUSED,
			    "policy_not_allowed") == 1 &&
		   s.latency[STATS_PRESTART].count == 1,
	   "and counted back, with its latency");
	stats_format_run(line, sizeof(line), STATS_POSTSTOP, STATS_RELEASED,
			 NULL, -1);
	ok(!strcmp(line, "\npoststop released - -\n"),
	   "no reason, no latency: dashes");
	line[strlen(line) - 1] = '\0';
	ok(stats_count_line(&s, line + 1) == 0 &&
		   count_of(&s, STATS_POSTSTOP, STATS_RELEASED, "") == 1 &&
		   s.latency[STATS_POSTSTOP].count == 0,
	   "counted, with no latency sample");
	stats_format_run(line, sizeof(line), STATS_PRESTART, STATS_REFUSED,
			 "Bad Reason", 0.1);
	ok(!strcmp(line, "\nprestart refused other 0.1\n"),
	   "a reason that is not a token is written as other");
	static const char *const bad[] = { "prestart", "x attached - -",
					   "prestart attached - x",
					   "prestart attached - -1",
					   "prestart attached a b c" };
	int refused = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "%s", bad[i]);
		refused += stats_count_line(&s, line) == -EBADMSG;
	}
	ok(refused == 5, "bad lines: EBADMSG (%d of 5)", refused);
}

static uint64_t read_count(enum stats_stage st, enum stats_outcome o)
{
	static struct sh_node_stats s;
	struct sh_error err = { 0 };

	if (stats_log_read(&s, &err))
		return UINT64_MAX;
	return count_of(&s, st, o, "");
}

/* Runs a shell command made from a literal format and the state dir. */
#define SH(fmt, state)                                           \
	({                                                       \
		char _cmd[256];                                  \
		snprintf(_cmd, sizeof(_cmd), fmt, state, state); \
		system(_cmd);                                    \
	})

/*
 * A compaction writes the file, then replaces the log: a crash between
 * the two leaves the old log, which the file already holds. Its runs are
 * not counted twice; a line cut short by a crash is not counted at all.
 */
static void test_crash(const char *state)
{
	struct sh_error err = { 0 };
	uint64_t before = read_count(STATS_POSTSTOP, STATS_FALLBACK);

	for (int i = 0; i < 3; i++)
		stats_log_add(STATS_POSTSTOP, STATS_FALLBACK, NULL, 0.001);
	ok(SH("cp %s/stats.log %s/saved.log", state) == 0 &&
		   stats_log_compact(&err) == 0 &&
		   SH("mv %s/saved.log %s/stats.log", state) == 0 &&
		   read_count(STATS_POSTSTOP, STATS_FALLBACK) == before + 3,
	   "a crash between writing the file and replacing the log: 3 runs counted once");
	stats_log_add(STATS_POSTSTOP, STATS_FALLBACK, NULL, 0.001);
	ok(read_count(STATS_POSTSTOP, STATS_FALLBACK) == before + 4 &&
		   stats_log_compact(&err) == 0 &&
		   read_count(STATS_POSTSTOP, STATS_FALLBACK) == before + 4,
	   "a run appended to that log counts, once, before and after compacting");
	ok(SH("printf '\\npoststop fallback - 0.0' >> %s/stats.log%.0s",
	      state) == 0 &&
		   read_count(STATS_POSTSTOP, STATS_FALLBACK) == before + 4,
	   "a last line without its newline (a write cut short) is not counted");
	stats_log_add(STATS_POSTSTOP, STATS_FALLBACK, NULL, 0.001);
	ok(read_count(STATS_POSTSTOP, STATS_FALLBACK) == before + 5,
	   "nor does it swallow the next run");
}

/* Appenders and compactions at once: every run counted exactly once. */
static void test_compact_racing(const char *state)
{
	struct sh_error err = { 0 };
	uint64_t before = read_count(STATS_PRESTART, STATS_FALLBACK);
	int status, bad = 0;

	(void)state;
	for (int p = 0; p < 5; p++)
		if (fork() == 0) {
			for (int i = 0; i < 300; i++) {
				if (p == 4)
					bad += stats_log_compact(&err) != 0;
				else
					stats_log_add(STATS_PRESTART,
						      STATS_FALLBACK, NULL,
						      0.001);
			}
			_exit(bad ? 1 : 0);
		}
	for (int p = 0; p < 5; p++)
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	ok(!bad && read_count(STATS_PRESTART, STATS_FALLBACK) == before + 1200,
	   "4 processes x 300 runs while another compacts 300 times: 1200 counted (%llu)",
	   (unsigned long long)(read_count(STATS_PRESTART, STATS_FALLBACK) -
				before));
}

/* stats_log_add() from 4 processes at once: the lock loses no run. */
static void test_file(void)
{
	static struct sh_node_stats s;
	/* Where the hook keeps it: /run (tmpfs, or ext4 on some hosts). */
	char dir[] = "/run/test-stats-XXXXXX", state[64], cmd[96];
	struct sh_error err = { 0 };
	int status, bad = 0;
	uint64_t lat;
	double t;

	if (!mkdtemp(dir))
		return;
	snprintf(state, sizeof(state), "%s/state", dir);
	context_set(&(struct sh_context){ .state_dir = state });
	ok(stats_log_read(&s, &err) == 0 && s.nr_rows == 0,
	   "no state directory: zeros");
	stats_log_add(STATS_PRESTART, STATS_UNPOLICED, NULL, 0.001);
	ok(access(state, F_OK) != 0,
	   "an unpoliced run makes no state directory (nothing to count in)");
	stats_log_add(STATS_PRESTART, STATS_REFUSED, "policy_not_allowed",
		      0.001);
	ok(stats_log_read(&s, &err) == 0 && s.nr_rows == 1 &&
		   count_of(&s, STATS_PRESTART, STATS_REFUSED,
			    "policy_not_allowed") == 1,
	   "a refusal makes it, and counts");
	stats_log_add(STATS_PRESTART, STATS_UNPOLICED, NULL, 0.001);
	ok(stats_log_read(&s, &err) == 0 &&
		   count_of(&s, STATS_PRESTART, STATS_UNPOLICED, "") == 1,
	   "then an unpoliced run counts too");
	lat = s.latency[STATS_PRESTART].count;
	for (int p = 0; p < 4; p++)
		if (fork() == 0) {
			for (int i = 0; i < 250; i++)
				stats_log_add(STATS_PRESTART, STATS_ATTACHED,
					      NULL, 0.001);
			_exit(0);
		}
	for (int p = 0; p < 4; p++)
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	if (stats_log_read(&s, &err))
		bad++;
	ok(!bad && count_of(&s, STATS_PRESTART, STATS_ATTACHED, "") == 1000 &&
		   s.latency[STATS_PRESTART].count == lat + 1000,
	   "4 processes x 250 stats_log_add(): 1000 runs counted (%llu)",
	   (unsigned long long)count_of(&s, STATS_PRESTART, STATS_ATTACHED,
					""));
	t = now();
	for (int i = 0; i < 500; i++)
		stats_log_add(STATS_POSTSTOP, STATS_RELEASED, NULL, 0.001);
	tap_diag("stats_log_add: %.1f us per call in %s",
		 (now() - t) / 500 * 1e6, dir);
	snprintf(cmd, sizeof(cmd), "printf 'garbage' > %s/stats", state);
	ok(system(cmd) == 0 && stats_log_read(&s, &err) == -EBADMSG,
	   "a damaged file: stats_log_read() says EBADMSG");
	stats_log_add(STATS_PRESTART, STATS_UNPOLICED, NULL, 0.001);
	ok(stats_log_compact(&err) == 0 && stats_log_read(&s, &err) == 0 &&
		   count_of(&s, STATS_PRESTART, STATS_UNPOLICED, "") >= 1,
	   "a compaction over a damaged file starts over from the log (with a notice)");
	test_crash(state);
	test_compact_racing(state);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		tap_diag("cannot remove %s", dir);
}

int main(void)
{
	test_count();
	test_fold();
	test_text();
	test_lines();
	test_file();
	return tap_done();
}
