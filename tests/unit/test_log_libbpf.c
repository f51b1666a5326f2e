// SPDX-License-Identifier: GPL-2.0-only
/*
 * log.c, libbpf's route: once routed, libbpf's warnings and information go to the
 * log at debug level, one log line per line of theirs, and nothing to
 * stderr (which carries the hook's one error line); libbpf's debug
 * output is dropped.
 *
 * Modules: `log.c`
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "helpers.h"
#include "lib/log.h"
#include "tap.h"

static libbpf_print_fn_t routed;

static void say(enum libbpf_print_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	routed(level, fmt, ap);
	va_end(ap);
}

int main(void)
{
	const char *said;
	char *text;

	tmpdir_make();
	log_libbpf_route();
	routed = libbpf_set_print(NULL);
	libbpf_set_print(routed);
	ok(routed != NULL, "log_libbpf_route sets libbpf's print function");

	log_set_file(TMP_PATH("log"));
	log_set_level(LOG_DEBUG);
	capture_start();
	say(LIBBPF_WARN,
	    "libbpf: prog '%s': BPF program load failed\n-- BEGIN PROG LOAD LOG --\nR1 invalid mem access\n",
	    "sh_setsockopt");
	say(LIBBPF_INFO, "libbpf: %s\n", "info line");
	say(LIBBPF_DEBUG, "libbpf: %s\n", "debug noise");
	said = capture_end();
	log_close();
	text = read_file(TMP_PATH("log"));
	is_str(said, "", "nothing reaches stderr");
	ok(text &&
		   strstr(text,
			  "debug: libbpf: prog 'sh_setsockopt': BPF program load failed\n") &&
		   strstr(text, "debug: -- BEGIN PROG LOAD LOG --\n") &&
		   strstr(text, "debug: R1 invalid mem access\n"),
	   "a warning of three lines: three debug lines in the log");
	ok(text && strstr(text, "debug: libbpf: info line\n"),
	   "information too");
	ok(text && !strstr(text, "debug noise"),
	   "libbpf's debug output is dropped");
	free(text);

	log_set_file(TMP_PATH("log2"));
	log_set_level(LOG_INFO);
	say(LIBBPF_WARN, "libbpf: hidden\n");
	log_close();
	text = read_file(TMP_PATH("log2"));
	ok(text && !*text, "below debug level, nothing is logged");
	free(text);
	return tap_done();
}
