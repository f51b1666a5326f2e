// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding the container's cgroup v2 directory, and making one when the
 * runtime left the container without its own (hybrid hosts, crun with
 * --cgroup-manager=disabled). We never attach to the root cgroup or to a
 * cgroup that holds anything but the container's init.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup/cg.h"
#include "lib/cleanup.h"
#include "lib/mountinfo.h"

/* The initial cgroup namespace's inode (PROC_CGROUP_INIT_INO). */
#define CG_INIT_NS_INO 0xEFFFFFFBU
/* A cgroup2 directory's inode is its cgroup id; the root's is 1. */
#define CG_ROOT_INO 1

static bool is_root_cgroup(const char *path)
{
	struct stat st;

	return !stat(path, &st) && st.st_ino == CG_ROOT_INO;
}

static bool is_cgroup2(const char *path)
{
	struct statfs fs;

	return !statfs(path, &fs) && fs.f_type == CGROUP2_SUPER_MAGIC;
}

/*
 * The two usual layouts, without reading mountinfo, which grows with every
 * container's mounts: cgroup2 at /sys/fs/cgroup (unified) or under it at
 * unified/ (hybrid), showing the whole hierarchy to a hook in the initial
 * cgroup namespace, where the paths in /proc/PID/cgroup start at its root.
 */
static bool find_root_fast(struct cg_root *root)
{
	struct statfs fs;
	struct stat ns;

	if (stat("/proc/self/ns/cgroup", &ns) || ns.st_ino != CG_INIT_NS_INO ||
	    statfs("/sys/fs/cgroup", &fs))
		return false;
	/* /sys/fs/cgroup's statfs is taken once, for both layouts. */
	if (fs.f_type == CGROUP2_SUPER_MAGIC &&
	    is_root_cgroup("/sys/fs/cgroup")) {
		snprintf(root->mount, sizeof(root->mount), "/sys/fs/cgroup");
		return true;
	}
	if (fs.f_type == TMPFS_MAGIC && is_cgroup2("/sys/fs/cgroup/unified") &&
	    is_root_cgroup("/sys/fs/cgroup/unified")) {
		snprintf(root->mount, sizeof(root->mount),
			 "/sys/fs/cgroup/unified");
		root->hybrid = true;
		return true;
	}
	return false;
}

int cg_find_root(struct cg_root *root, struct sh_error *err)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	bool found = false;

	memset(root, 0, sizeof(*root));
	if (find_root_fast(root))
		return 0;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return error_errno(err, -errno,
				   "cannot read /proc/self/mountinfo");
	while (getline(&line, &cap, f) > 0) {
		struct mountinfo_entry e;

		if (mountinfo_parse_line(line, &e))
			continue;
		if (!strcmp(e.fstype, "cgroup"))
			root->hybrid = true;
		else if (!strcmp(e.fstype, "cgroup2") && !found &&
			 !strcmp(e.root, "/")) {
			snprintf(root->mount, sizeof(root->mount), "%s", e.mnt);
			found = true;
		}
	}
	if (!found)
		return error_set(
			err, -ENOENT,
			"no cgroup2 hierarchy is mounted (cgroup BPF needs cgroup v2)");
	return 0;
}

int cg_path(const struct cg_root *root, const char *rel, char *buf, size_t len)
{
	if (snprintf(buf, len, "%s%s", root->mount,
		     strcmp(rel, "/") ? rel : "") >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

static bool rel_path_ok(const char *rel)
{
	if (rel[0] != '/')
		return false;
	for (const char *p = rel; *p; p++) {
		if (p[0] != '/' || p[1] != '.')
			continue;
		if (p[2] == '/' || p[2] == '\0' ||
		    (p[2] == '.' && (p[3] == '/' || p[3] == '\0')))
			return false;
	}
	return true;
}

int cg_pid_path(pid_t pid, char *rel, size_t len, struct sh_error *err)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	char path[64];
	size_t cap = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return error_set(err, errno == ENOENT ? -ESRCH : -errno,
				 "container init pid %d: %s", pid,
				 errno == ENOENT ? "no such process" :
						   strerror(errno));
	while ((n = getline(&line, &cap, f)) > 0) {
		if (strncmp(line, "0::", 3))
			continue;
		line[n - 1] = line[n - 1] == '\n' ? '\0' : line[n - 1];
		if (!rel_path_ok(line + 3) || strlen(line + 3) >= len)
			return error_set(
				err, -EINVAL,
				"pid %d: refusing cgroup path '%.128s'", pid,
				line + 3);
		snprintf(rel, len, "%s", line + 3);
		return 0;
	}
	return error_set(err, -ENOENT, "pid %d has no cgroup v2 membership",
			 pid);
}

int cg_open_target(const struct cg_root *root, struct cg_target *t,
		   struct sh_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (cg_path(root, t->rel, t->abs, sizeof(t->abs)))
		return error_set(err, -ENAMETOOLONG,
				 "cgroup path %.128s... is too long", t->rel);
	fd = open(t->abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return error_errno(err, -errno, "cannot open cgroup %s",
				   t->abs);
	t->id = st.st_ino;
	return take_fd(&fd);
}

int cg_open_recorded(const struct cg_target *t)
{
	struct stat st;
	int fd = open(t->abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	if (fstat(fd, &st) < 0 || st.st_ino != t->id) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int cg_populated_at(int cg_fd, bool *populated)
{
	_cleanup_free_ char *line = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	size_t cap = 0;
	int fd = openat(cg_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "populated ", 10)) {
			*populated = line[10] == '1';
			return 0;
		}
	}
	return -EIO;
}

int cg_populated(const char *abs, bool *populated)
{
	_cleanup_close_ int fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	return cg_populated_at(fd, populated);
}

/* No child cgroup of this one holds a process. */
static int children_idle(int cg_fd, bool *idle)
{
	_cleanup_closedir_ DIR *dir = NULL;
	struct dirent *de;
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
		child = openat(dirfd(dir), de->d_name,
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (child < 0 || cg_populated_at(child, &populated) ||
		    populated)
			return 0;
	}
	*idle = true;
	return 0;
}

/* Only the container's init in it, and no populated child cgroups. */
static int is_dedicated(int cg_fd, const char *rel, pid_t pid, bool *dedicated,
			struct sh_error *err)
{
	_cleanup_free_ char *line = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	size_t cap = 0;
	int fd = openat(cg_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC), r;

	*dedicated = false;
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return error_errno(err, r, "cannot read %s/cgroup.procs", rel);
	}
	while (getline(&line, &cap, f) > 0) {
		long long other = strtoll(line, NULL, 10);

		if (other != pid)
			return 0;
	}
	r = children_idle(cg_fd, dedicated);
	if (r)
		return error_errno(err, r, "cannot read the cgroups below %s",
				   rel);
	return 0;
}

int cg_locate(const struct cg_root *root, pid_t pid, struct cg_target *t,
	      bool *dedicated, struct sh_error *err)
{
	_cleanup_close_ int fd = -1;
	int r;

	memset(t, 0, sizeof(*t));
	*dedicated = false;
	r = cg_pid_path(pid, t->rel, sizeof(t->rel), err);
	if (r)
		return r;
	fd = cg_open_target(root, t, err);
	if (fd < 0 || !strcmp(t->rel, "/"))
		return take_fd(&fd);
	r = is_dedicated(fd, t->rel, pid, dedicated, err);
	return r ? r : take_fd(&fd);
}

int cg_pid_inside(const struct cg_root *root, pid_t pid,
		  const struct cg_target *t, struct sh_error *err)
{
	struct cg_target now = { 0 };
	_cleanup_close_ int fd = -1;
	int r = cg_pid_path(pid, now.rel, sizeof(now.rel), err);

	if (r)
		return r;
	if (strcmp(now.rel, t->rel))
		return error_set(
			err, -EXDEV,
			"container init pid %d left cgroup %s while the policy was being attached (it is now in %s)",
			pid, t->rel, now.rel);
	fd = cg_open_target(root, &now, err);
	if (fd >= 0 && now.id != t->id)
		return error_set(
			err, -EXDEV,
			"cgroup %s was replaced while the policy was being attached (id %llu, now %llu)",
			t->rel, (unsigned long long)t->id,
			(unsigned long long)now.id);
	return fd < 0 ? fd : 0;
}
