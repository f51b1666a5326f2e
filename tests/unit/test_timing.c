// SPDX-License-Identifier: GPL-2.0-only
/*
 * timing.c: the steps of one hook run, in microseconds, on stderr with
 * OCI_SOCKOPT_HOOK_TIMING=1 and otherwise in the log at debug level;
 * at most 16 steps, one bounded line.
 *
 * Modules: `timing.c`
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "lib/context.h"
#include "lib/log.h"
#include "tap.h"
#include "lib/timing.h"

int main(void)
{
	const char *said;
	char *text, step[20][16];

	tmpdir_make();
	context_set(&(struct sh_context){ .timing = true });
	timing_start();
	usleep(2000);
	timing_mark("read");
	timing_mark("attach");
	capture_start();
	timing_report("prestart");
	said = capture_end();
	ok(!strncmp(said, "timing: prestart: read ", 23) &&
		   strstr(said, " attach ") && strstr(said, " total ") &&
		   strstr(said, " (us)\n") && count_lines(said) == 1,
	   "OCI_SOCKOPT_HOOK_TIMING=1: one stderr line, steps and total (us)");
	ok(atoi(said + 23) >= 2000,
	   "the first step took the 2 ms slept (%d us)", atoi(said + 23));
	ok(timing_elapsed() >= 0.002,
	   "timing_elapsed: seconds since the start");

	timing_start();
	for (int i = 0; i < 20; i++) {
		snprintf(step[i], sizeof(step[i]), "step%02d", i);
		timing_mark(step[i]);
	}
	capture_start();
	timing_report("many");
	said = capture_end();
	ok(strstr(said, "step15 ") && !strstr(said, "step16 ") &&
		   strstr(said, "total "),
	   "20 marks: the first 16 steps, then the total");

	context_set(&(struct sh_context){ .timing = false });
	log_set_file(TMP_PATH("log"));
	log_set_level(LOG_DEBUG);
	capture_start();
	timing_report("quiet");
	said = capture_end();
	log_close();
	text = read_file(TMP_PATH("log"));
	ok(!*said && text && strstr(text, "debug: timing: step00 "),
	   "without it: nothing on stderr, a debug line in the log");
	free(text);
	return tap_done();
}
