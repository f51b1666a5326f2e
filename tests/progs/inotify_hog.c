// SPDX-License-Identifier: GPL-2.0-only
/*
 * inotify_hog: what a rootful container can do to the host's inotify
 * instances. fs.inotify.max_user_instances counts per user, and root in
 * every container without a user namespace is the host's root, so one
 * process can take every instance root has left.
 *
 * Takes inotify instances until inotify_init1() fails, prints
 * "held=N errno=NAME", then holds them until stdin reaches EOF (or it is
 * killed), and exits; the kernel frees them with the process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	struct rlimit lim = { 65536, 65536 };
	char buf[64];
	int held = 0;

	/* So the user's instance limit is hit first, not our fd limit. */
	setrlimit(RLIMIT_NOFILE, &lim);
	while (inotify_init1(IN_CLOEXEC) >= 0)
		held++;
	printf("held=%d errno=%s\n", held, strerrorname_np(errno));
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	return 0;
}
