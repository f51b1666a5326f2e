// SPDX-License-Identifier: GPL-2.0-only
/* Process identity: a pid is reused, a (pid, start time) pair is not. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "state/proc.h"

#define PROC_STAT_MAX 4096
#define STARTTIME_FIELD 22 /* of /proc/<pid>/stat, in clock ticks */

int proc_stat(pid_t pid, char *state, uint64_t *start)
{
	_cleanup_free_ char *text = NULL;
	char path[64], *p;
	size_t len;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	r = fileio_read_at(AT_FDCWD, path, 0, PROC_STAT_MAX, &text, &len);
	if (r)
		return r;
	/* The comm field may hold spaces and ')': skip to the last ')'. */
	p = strrchr(text, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EBADMSG;
	*state = p[2];
	/* p is on the ')' that ends field 2: one space per field on. */
	for (int field = 2; field < STARTTIME_FIELD && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -EBADMSG;
	*start = strtoull(p + 1, NULL, 10);
	return 0;
}

bool proc_exiting(char state)
{
	return state == 'Z' || state == 'X';
}

bool proc_running(pid_t pid, uint64_t start)
{
	uint64_t now;
	char state;

	return pid > 0 && proc_stat(pid, &state, &now) == 0 &&
	       !proc_exiting(state) && now == start;
}
