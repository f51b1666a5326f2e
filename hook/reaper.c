// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgroup v2 has no release agent, and a cgroup the runtime does not know
 * about is removed by nobody. This reaper is the one process the hook
 * leaves running, and only for cgroups it created: it sleeps in inotify
 * on cgroup.events and exits as soon as the container is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "log.h"
#include "reaper.h"
#include "stage.h"

/* Returns when the cgroup is empty or gone. */
static void wait_until_empty(const char *abs)
{
	char events[PATH_MAX + 16], buf[4096];
	_cleanup_close_ int fd = inotify_init1(IN_CLOEXEC);
	bool populated = true;

	snprintf(events, sizeof(events), "%s/cgroup.events", abs);
	if (fd < 0 || inotify_add_watch(fd, events, IN_MODIFY) < 0)
		return;
	while (cg_populated(abs, &populated) == 0 && populated)
		if (read(fd, buf, sizeof(buf)) < 0 && errno != EINTR)
			return;
}

static void detach_stdio(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* The runtime waits for EOF on our stdout/stderr: let go at once. */
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	if (null > 2)
		close(null);
	close_range(3, UINT_MAX, 0);
}

static void reaper_main(const struct sh_record *rec)
{
	detach_stdio();
	setsid();
	if (chdir("/") < 0)
		return;
	prctl(PR_SET_NAME, "sockopt-reaper", 0, 0, 0);
	log_open(1);
	wait_until_empty(rec->cg.abs);
	if (stage_release(rec) == 0)
		log_info("reaper: released cgroup %s of container %s",
			 rec->cg.rel, rec->id);
}

int reaper_spawn(const struct sh_record *rec)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		log_error("cannot start the cgroup reaper: %s",
			  strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		/* Double fork: the reaper must not be the runtime's child. */
		if (fork() == 0)
			reaper_main(rec);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return 0;
}
