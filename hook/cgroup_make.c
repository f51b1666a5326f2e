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

int cg_children_idle(const char *abs, bool *idle)
{
	_cleanup_closedir_ DIR *dir = opendir(abs);
	struct dirent *de;
	char child[PATH_MAX];
	bool populated;

	*idle = false;
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(child, sizeof(child), "%s/%s", abs, de->d_name);
		if (cg_populated(child, &populated) || populated)
			return 0;
	}
	*idle = true;
	return 0;
}

static int write_pid(const char *abs, pid_t pid)
{
	_cleanup_close_ int fd = -1;
	char path[PATH_MAX + 16], buf[32];
	int len = snprintf(buf, sizeof(buf), "%d\n", pid);

	snprintf(path, sizeof(path), "%s/cgroup.procs", abs);
	fd = open(path, O_WRONLY | O_CLOEXEC);
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
	int r;

	snprintf(abs, sizeof(abs), "%s%s", root->mount,
		 strcmp(rel, "/") ? rel : "");
	r = write_pid(abs, pid);
	if (r)
		log_error("cannot move pid %d into cgroup %s: %s", pid, rel,
			  strerror(-r));
	return r;
}

int cg_make_child(const struct cg_root *root, pid_t pid, const char *id,
		  struct cg_target *target)
{
	char rel[PATH_MAX];
	const char *parent = target->parent_rel;
	int r;

	if (snprintf(rel, sizeof(rel), "%s/%s%s",
		     strcmp(parent, "/") ? parent : "", SH_CGROUP_PREFIX,
		     id) >= (int)sizeof(rel))
		return -ENAMETOOLONG;
	r = make_dir(root, rel);
	if (r && r != -EEXIST) {
		log_error("cannot create cgroup %s: %s", rel, strerror(-r));
		return r;
	}
	r = cg_move_pid(root, rel, pid);
	if (r) {
		cg_remove(root, rel);
		return r;
	}
	snprintf(target->rel, sizeof(target->rel), "%s", rel);
	target->created = true;
	return 0;
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
