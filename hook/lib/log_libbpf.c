// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbpf's own messages go to our log at debug level, not to stderr:
 * stderr carries one line, the error if any (runtimes show it to users).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "lib/log_libbpf.h"

static int libbpf_to_log(enum libbpf_print_level level, const char *fmt,
			 va_list ap) __attribute__((format(printf, 2, 0)));

static int libbpf_to_log(enum libbpf_print_level level, const char *fmt,
			 va_list ap)
{
	char buf[4096], *line, *save = NULL;

	/* libbpf's debug level is ~130 lines per load: keep its warnings
	 * (verifier logs among them) and information only. */
	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		log_debug("%s", line);
	return 0;
}

void log_libbpf_route(void)
{
	libbpf_set_print(libbpf_to_log);
}
