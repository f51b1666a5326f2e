// SPDX-License-Identifier: GPL-2.0-only
/* Step timings of one hook run (see timing.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/context.h"
#include "lib/log.h"
#include "lib/timing.h"

/* More steps than any command marks; later marks are dropped. */
#define TIMING_STEPS_MAX 16
#define TIMING_LINE_MAX 512

static struct {
	long long start, last;
	int nr;
	struct {
		const char *step;
		long long ns;
	} steps[TIMING_STEPS_MAX];
} timing;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void timing_start(void)
{
	timing.start = timing.last = now_ns();
	timing.nr = 0;
}

void timing_mark(const char *step)
{
	long long now = now_ns();

	if (timing.nr < TIMING_STEPS_MAX) {
		timing.steps[timing.nr].step = step;
		timing.steps[timing.nr++].ns = now - timing.last;
	}
	timing.last = now;
}

double timing_elapsed(void)
{
	return (now_ns() - timing.start) / 1e9;
}

void timing_report(const char *command)
{
	char line[TIMING_LINE_MAX];
	size_t len = 0;

	for (int i = 0; i < timing.nr && len < sizeof(line); i++)
		len += snprintf(line + len, sizeof(line) - len, "%s %lld ",
				timing.steps[i].step,
				timing.steps[i].ns / 1000);
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	snprintf(line + len, sizeof(line) - len, "total %lld",
		 (now_ns() - timing.start) / 1000);
	if (context_get()->timing)
		fprintf(stderr, "timing: %s: %s (us)\n", command, line);
	else
		log_debug("timing: %s (us)", line);
}
