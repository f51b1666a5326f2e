// SPDX-License-Identifier: GPL-2.0-only
/*
 * One interface over two mechanisms: libcgroup where it sees the v2
 * hierarchy (pure v2 hosts), plain mkdir/write/rmdir on hybrid hosts,
 * where libcgroup 2.0 does not find the unified mount at all.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <libcgroup.h>

#include "cgroup_make.h"
#include "cleanup.h"
#include "log.h"

int cg_children_idle(int cg_fd, bool *idle)
{
	_cleanup_closedir_ DIR *dir = NULL;
	struct dirent *de;
	char events[NAME_MAX + 32];
	int fd = openat(cg_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*idle = false;
	dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(dir))) {
		_cleanup_close_ int child = -1;
		bool populated;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(events, sizeof(events), "%s", de->d_name);
		child = openat(dirfd(dir), events,
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (child < 0 || cg_populated_at(child, &populated) ||
		    populated)
			return 0;
	}
	*idle = true;
	return 0;
}

static int write_pid_at(int cg_fd, pid_t pid)
{
	_cleanup_close_ int fd =
		openat(cg_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%d\n", pid);

	if (fd < 0 || write(fd, buf, len) != len)
		return -errno;
	return 0;
}

static int lcg_error(const char *what, const char *rel, int code)
{
	log_debug("libcgroup %s %s: %s", what, rel, cgroup_strerror(code));
	return -EIO;
}

/* libcgroup names cgroups relative to the mount, without a leading '/'. */
static int lcg_create(const char *rel)
{
	struct cgroup *cg;
	int r;

	r = cgroup_init();
	if (r)
		return lcg_error("init", rel, r);
	cg = cgroup_new_cgroup(rel + 1);
	if (!cg)
		return -ENOMEM;
	/* add_controller(NULL) crashes in 2.0.2; pids always exists. */
	if (!cgroup_add_controller(cg, "pids")) {
		cgroup_free(&cg);
		return -EIO;
	}
	r = cgroup_create_cgroup(cg, 0);
	cgroup_free(&cg);
	return r ? lcg_error("create", rel, r) : 0;
}

static int make_dir(const struct cg_root *root, const char *rel)
{
	char abs[PATH_MAX * 2];

	if (!root->hybrid && lcg_create(rel) == 0)
		return 0;
	snprintf(abs, sizeof(abs), "%s%s", root->mount, rel);
	if (mkdir(abs, 0755) < 0)
		return -errno;
	return 0;
}

int cg_move_pid(const struct cg_root *root, const char *rel, pid_t pid)
{
	char abs[PATH_MAX * 2];
	_cleanup_close_ int fd = -1;
	int r;

	snprintf(abs, sizeof(abs), "%s%s", root->mount,
		 strcmp(rel, "/") ? rel : "");
	fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = fd < 0 ? -errno : write_pid_at(fd, pid);
	if (r)
		log_error("cannot move pid %d into cgroup %s: %s", pid, rel,
			  strerror(-r));
	return r;
}

/* A cgroup of ours left by a crash may be reused, but never one in use. */
static int make_or_reuse(const struct cg_root *root, const char *rel)
{
	char abs[PATH_MAX * 2];
	bool populated = true;
	int r = make_dir(root, rel);

	if (r == -EEXIST) {
		snprintf(abs, sizeof(abs), "%s%s", root->mount, rel);
		r = cg_populated(abs, &populated);
		if (!r && populated) {
			log_error("cgroup %s exists and holds processes", rel);
			return -EBUSY;
		}
	}
	if (r)
		log_error("cannot create cgroup %s: %s", rel, strerror(-r));
	return r;
}

int cg_make_own(const struct cg_root *root, pid_t pid, const char *id,
		struct cg_target *t)
{
	char rel[PATH_MAX];
	int fd, r;

	if (snprintf(rel, sizeof(rel), "%s/%s%s",
		     strcmp(t->rel, "/") ? t->rel : "", SH_CGROUP_PREFIX,
		     id) >= (int)sizeof(rel))
		return -ENAMETOOLONG;
	r = make_or_reuse(root, rel);
	if (r)
		return r;
	snprintf(t->parent_rel, sizeof(t->parent_rel), "%s", t->rel);
	snprintf(t->rel, sizeof(t->rel), "%s", rel);
	fd = cg_open_target(root, t);
	r = fd < 0 ? fd : write_pid_at(fd, pid);
	if (r && fd >= 0) {
		log_error("cannot move pid %d into cgroup %s: %s", pid, rel,
			  strerror(-r));
		close(fd);
	}
	if (r) {
		cg_remove(root, rel);
		return r;
	}
	t->created = true;
	return fd;
}

/* rmdir fails with EBUSY while exiting tasks still hold the cgroup. */
int cg_remove(const struct cg_root *root, const char *rel)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	char abs[PATH_MAX * 2];

	snprintf(abs, sizeof(abs), "%s%s", root->mount, rel);
	for (int i = 0; i < 100; i++) {
		if (rmdir(abs) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			break;
		nanosleep(&pause, NULL);
	}
	log_warn("cannot remove cgroup %s: %s", rel, strerror(errno));
	return -errno;
}
