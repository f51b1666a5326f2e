// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgroup v2 has no release agent, and a cgroup the runtime does not know
 * about is removed by nobody. This reaper is the one process the hook
 * leaves running, and only for cgroups it created: it sleeps in inotify
 * on cgroup.events and exits as soon as the container is gone. It never
 * detaches the policy from a cgroup that still holds a process.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cg.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "stage/reaper.h"
#include "stage/teardown.h"
#include "state/stats.h"

/*
 * Without inotify the reaper reads cgroup.events this often. The limit of
 * inotify instances is per user, and root in a container without a user
 * namespace is the host's root: a container can use them all up, and then
 * a reaper that gave up waiting would release a running container. One
 * small read a second per such container costs nothing measurable, and a
 * container's cgroup is still released within a second of its end.
 */
#define REAPER_POLL_SECONDS 1

struct watch {
	int fd; /* inotify, or -1: poll */
	int err; /* why not inotify */
};

/* Set up before the hook returns, so no change to cgroup.events is missed. */
static void watch_start(struct watch *w, const char *abs)
{
	char events[PATH_MAX + sizeof("/cgroup.events")];

	snprintf(events, sizeof(events), "%s/cgroup.events", abs);
	w->err = 0;
	w->fd = inotify_init1(IN_CLOEXEC);
	if (w->fd >= 0 && inotify_add_watch(w->fd, events, IN_MODIFY) >= 0)
		return;
	w->err = errno;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

static void watch_next(struct watch *w)
{
	struct timespec pause = { REAPER_POLL_SECONDS, 0 };
	char buf[4096];

	if (w->fd < 0) {
		nanosleep(&pause, NULL);
		return;
	}
	if (read(w->fd, buf, sizeof(buf)) < 0 && errno != EINTR) {
		log_warn("reaper: inotify failed (%s): polling",
			 strerror(errno));
		close(w->fd);
		w->fd = -1;
	}
}

/* Returns when the cgroup is empty or gone; waits while it cannot tell. */
static void wait_until_empty(struct watch *w, const char *abs)
{
	bool populated = true;
	int r;

	while ((r = cg_populated(abs, &populated)) != -ENOENT &&
	       (r || populated))
		watch_next(w);
}

/* Closes every fd from 3 up but keep_a and keep_b (-1: none). */
static void close_all_but(int keep_a, int keep_b)
{
	int keep[2] = { keep_a < keep_b ? keep_a : keep_b,
			keep_a < keep_b ? keep_b : keep_a };
	int from = 3;

	for (int k = 0; k < 2; k++) {
		if (keep[k] < from)
			continue;
		if (keep[k] > from)
			close_range(from, keep[k] - 1, 0);
		from = keep[k] + 1;
	}
	close_range(from, ~0U, 0);
}

/*
 * The runtime waits for EOF on our stdout/stderr: let go at once. Keep the
 * pipe to the hook and the log file; syslog reconnects (a stale syslog fd
 * number would be written to after it is reused).
 */
static void detach_stdio(int keep)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	if (null > 2)
		close(null);
	close_all_but(keep, log_detach());
	log_open(1);
}

/*
 * Out of the runtime's cgroup, which may be shared or removed, into the
 * cgroup2 root, which nobody removes; then the watch. Tells the hook when
 * done: from then on nothing the container does goes unseen.
 */
static void settle(int ready_fd, struct watch *w, const char *abs)
{
	struct sh_error err = { 0 };
	struct cg_root root;
	char path[PATH_MAX];
	int fd;

	detach_stdio(ready_fd);
	setsid();
	if (chdir("/") == 0 && cg_find_root(&root, &err) == 0 &&
	    cg_path(&root, "/cgroup.procs", path, sizeof(path)) == 0) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) < 0)
			log_debug("reaper: stays in the runtime's cgroup");
		if (fd >= 0)
			close(fd);
	}
	watch_start(w, abs);
	if (w->fd < 0)
		log_warn(
			"reaper: cannot watch %s/cgroup.events (%s): polling it every %d s",
			abs, strerror(w->err), REAPER_POLL_SECONDS);
	if (write(ready_fd, "r", 1) < 0)
		log_debug("reaper: the hook is gone");
	close(ready_fd);
}

static void reaper_main(const struct sh_record *rec, int ready_fd)
{
	struct sh_error err = { 0 };
	struct watch w;
	int r;

	settle(ready_fd, &w, rec->cg.abs);
	prctl(PR_SET_NAME, "sockopt-reaper", 0, 0, 0);
	/* The last check is in the release itself, which refuses while the
	 * cgroup holds a process: then wait again. */
	do {
		wait_until_empty(&w, rec->cg.abs);
		r = teardown_release_empty(rec);
	} while (r == -EBUSY);
	if (r == 0) {
		log_info("reaper: released cgroup %s of container %s",
			 rec->cg.rel, rec->id);
		stats_log_add(STATS_POSTSTOP, STATS_RELEASED, NULL, -1);
	} else if (r == 1)
		log_debug("reaper: cgroup %s was already released",
			  rec->cg.rel);
	/* Drops the index of copies nobody uses any more. */
	teardown_gc(&err);
}

int reaper_spawn(const struct sh_record *rec, struct sh_error *err)
{
	int pipefd[2], status;
	char byte;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return error_errno(err, -errno,
				   "cannot start the cgroup reaper");
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
		error_set(err, -ECHILD, "cannot start the cgroup reaper: %s",
			  pid < 0 ? strerror(errno) : "it died at birth");
		close(pipefd[0]);
		return -ECHILD;
	}
	close(pipefd[0]);
	return 0;
}
