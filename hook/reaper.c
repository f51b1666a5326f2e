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

static void detach_stdio(int keep)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* The runtime waits for EOF on our stdout/stderr: let go at once. */
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	if (null > 2)
		close(null);
	for (int fd = 3; fd < 1024; fd++)
		if (fd != keep)
			close(fd);
}

/*
 * Out of the runtime's cgroup, which may be shared or removed, into the
 * cgroup2 root, which nobody removes. Tells the hook when done.
 */
static void settle(int ready_fd)
{
	struct cg_root root;
	char path[PATH_MAX + 32];
	int fd;

	detach_stdio(ready_fd);
	setsid();
	if (chdir("/") < 0 || cg_find_root(&root))
		goto out;
	snprintf(path, sizeof(path), "%s/cgroup.procs", root.mount);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "0", 1) < 0)
			log_debug("reaper: stays in the runtime's cgroup");
		close(fd);
	}
out:
	if (write(ready_fd, "r", 1) < 0)
		log_debug("reaper: the hook is gone");
	close(ready_fd);
}

static void reaper_main(const struct sh_record *rec, int ready_fd)
{
	settle(ready_fd);
	prctl(PR_SET_NAME, "sockopt-reaper", 0, 0, 0);
	log_open(1);
	wait_until_empty(rec->cg.abs);
	if (stage_release(rec) == 0)
		log_info("reaper: released cgroup %s of container %s",
			 rec->cg.rel, rec->id);
	/* Drops the index of copies nobody uses any more. */
	stage_gc();
}

int reaper_spawn(const struct sh_record *rec)
{
	int pipefd[2], status;
	char byte;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		/* Double fork: the reaper must not be the runtime's child. */
		if (fork() == 0)
			reaper_main(rec, pipefd[1]);
		_exit(0);
	}
	close(pipefd[1]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 ||
	    read(pipefd[0], &byte, 1) != 1) {
		log_error("cannot start the cgroup reaper: %s",
			  pid < 0 ? strerror(errno) : "it died at birth");
		close(pipefd[0]);
		return -ECHILD;
	}
	close(pipefd[0]);
	return 0;
}
