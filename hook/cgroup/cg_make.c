// SPDX-License-Identifier: GPL-2.0-only
/*
 * One interface over two mechanisms: libcgroup where it sees the v2
 * hierarchy (pure v2 hosts), plain mkdir/write/rmdir on hybrid hosts,
 * where libcgroup 2.0 does not find the unified mount at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <libcgroup.h>

#include "cgroup/cg_make.h"
#include "lib/cleanup.h"
#include "lib/log.h"

/* rmdir gives EBUSY while exiting tasks still hold the cgroup: retry this
 * often, this many times (a second in all). */
#define REMOVE_PAUSE_NS (10 * 1000 * 1000)
#define REMOVE_TRIES 100

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

/* libcgroup names cgroups relative to the mount, without a leading '/'.
 * Its failure only sends us to mkdir: a debug line. */
static int lcg_create(const char *rel)
{
	struct cgroup *cg;
	int r;

	r = cgroup_init();
	if (r)
		goto fail;
	cg = cgroup_new_cgroup(rel + 1);
	if (!cg)
		return -ENOMEM;
	/* add_controller(NULL) crashes in 2.0.2; pids always exists. */
	r = cgroup_add_controller(cg, "pids") ? cgroup_create_cgroup(cg, 0) :
						ECGFAIL;
	cgroup_free(&cg);
	if (r)
		goto fail;
	return 0;
fail:
	log_debug("libcgroup cannot create %s: %s", rel, cgroup_strerror(r));
	return -EIO;
}

static int make_dir(const struct cg_root *root, const char *rel)
{
	char abs[PATH_MAX];

	if (!root->hybrid && lcg_create(rel) == 0)
		return 0;
	if (cg_path(root, rel, abs, sizeof(abs)))
		return -ENAMETOOLONG;
	return mkdir(abs, 0755) < 0 ? -errno : 0;
}

int cg_make_move_pid(const struct cg_root *root, const char *rel, pid_t pid,
		     struct sh_error *err)
{
	char abs[PATH_MAX];
	_cleanup_close_ int fd = -1;
	int r = cg_path(root, rel, abs, sizeof(abs));

	if (r)
		goto fail;
	fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = fd < 0 ? -errno : write_pid_at(fd, pid);
	if (r)
		goto fail;
	return 0;
fail:
	return error_errno(err, r, "cannot move pid %d into cgroup %s", pid,
			   rel);
}

/* A cgroup of ours left by a crash may be reused, but never one in use. */
static int make_or_reuse(const struct cg_root *root, const char *rel,
			 struct sh_error *err)
{
	char abs[PATH_MAX];
	bool populated = true;
	int r = make_dir(root, rel);

	if (r == -EEXIST && cg_path(root, rel, abs, sizeof(abs)) == 0) {
		r = cg_populated(abs, &populated);
		if (!r && populated)
			return error_set(err, -EBUSY,
					 "cgroup %s exists and holds processes",
					 rel);
	}
	if (r)
		return error_errno(err, r, "cannot create cgroup %s", rel);
	return 0;
}

int cg_make_own(const struct cg_root *root, pid_t pid, const char *id,
		struct cg_target *t, struct sh_error *err)
{
	char rel[PATH_MAX];
	_cleanup_close_ int fd = -1;
	int r;

	if (snprintf(rel, sizeof(rel), "%s/%s%s",
		     strcmp(t->rel, "/") ? t->rel : "", SH_CGROUP_PREFIX,
		     id) >= (int)sizeof(rel))
		return error_set(err, -ENAMETOOLONG,
				 "cgroup path %.128s... is too long", t->rel);
	r = make_or_reuse(root, rel, err);
	if (r)
		return r;
	snprintf(t->parent_rel, sizeof(t->parent_rel), "%s", t->rel);
	snprintf(t->rel, sizeof(t->rel), "%s", rel);
	fd = cg_open_target(root, t, err);
	r = fd < 0 ? fd : write_pid_at(fd, pid);
	if (r && fd >= 0)
		error_errno(err, r, "cannot move pid %d into cgroup %s", pid,
			    rel);
	if (r) {
		if (cg_make_remove(root, rel, err))
			error_note(err, "cgroup %s stays", rel);
		return r;
	}
	t->created = true;
	return take_fd(&fd);
}

int cg_make_remove(const struct cg_root *root, const char *rel,
		   struct sh_error *err)
{
	struct timespec pause = { 0, REMOVE_PAUSE_NS };
	char abs[PATH_MAX];

	if (cg_path(root, rel, abs, sizeof(abs)))
		return error_set(err, -ENAMETOOLONG,
				 "cgroup path %.128s... is too long", rel);
	for (int i = 0; i < REMOVE_TRIES; i++) {
		if (rmdir(abs) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			break;
		nanosleep(&pause, NULL);
	}
	return error_errno(err, -errno, "cannot remove cgroup %s", rel);
}

int cg_make_undo(const struct cg_root *root, struct cg_target *t, pid_t pid,
		 struct sh_error *err)
{
	int r;

	if (!t->created)
		return 0;
	/* Undone once, whether or not it went. */
	t->created = false;
	r = cg_make_move_pid(root, t->parent_rel, pid, err);
	if (r)
		return r;
	return cg_make_remove(root, t->rel, err);
}
