// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding the container's cgroup v2 directory, and making one when the
 * runtime left the container without its own (hybrid hosts, crun with
 * --cgroup-manager=disabled). We never attach to the root cgroup or to a
 * cgroup that holds anything but the container's init.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_make.h"
#include "cleanup.h"
#include "log.h"

static int parse_mountinfo_line(char *line, char **mnt, char **root,
				char **fstype)
{
	char *sep = strstr(line, " - ");
	char *save = NULL, *tok;
	int field = 0;

	if (!sep)
		return -EINVAL;
	*sep = '\0';
	for (tok = strtok_r(line, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 3)
			*root = tok;
		else if (field == 4)
			*mnt = tok;
	}
	*fstype = strtok_r(sep + 3, " ", &save);
	return field > 4 && *fstype ? 0 : -EINVAL;
}

int cg_find_root(struct cg_root *root)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	bool found = false;

	memset(root, 0, sizeof(*root));
	if (!f) {
		log_error("cannot read /proc/self/mountinfo: %s",
			  strerror(errno));
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		char *mnt = NULL, *mroot = NULL, *fstype = NULL;

		if (parse_mountinfo_line(line, &mnt, &mroot, &fstype))
			continue;
		if (!strcmp(fstype, "cgroup"))
			root->hybrid = true;
		else if (!strcmp(fstype, "cgroup2") && !found &&
			 !strcmp(mroot, "/")) {
			snprintf(root->mount, sizeof(root->mount), "%s", mnt);
			found = true;
		}
	}
	if (!found) {
		log_error(
			"no cgroup2 hierarchy is mounted (cgroup BPF needs cgroup v2)");
		return -ENOENT;
	}
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

int cg_pid_path(pid_t pid, char *rel, size_t len)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	char path[64];
	size_t cap = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f) {
		log_error("container init pid %d: %s", pid,
			  errno == ENOENT ? "no such process" :
					    strerror(errno));
		return errno == ENOENT ? -ESRCH : -errno;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		if (strncmp(line, "0::", 3))
			continue;
		line[n - 1] = line[n - 1] == '\n' ? '\0' : line[n - 1];
		if (!rel_path_ok(line + 3) || strlen(line + 3) >= len) {
			log_error("pid %d: refusing cgroup path '%.128s'", pid,
				  line + 3);
			return -EINVAL;
		}
		snprintf(rel, len, "%s", line + 3);
		return 0;
	}
	log_error("pid %d has no cgroup v2 membership", pid);
	return -ENOENT;
}

int cg_open_target(const struct cg_root *root, struct cg_target *t)
{
	struct stat st;
	int fd;

	if (snprintf(t->abs, sizeof(t->abs), "%s%s", root->mount,
		     strcmp(t->rel, "/") ? t->rel : "") >= (int)sizeof(t->abs))
		return -ENAMETOOLONG;
	fd = open(t->abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		log_error("cannot open cgroup %s: %s", t->abs, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	t->id = st.st_ino;
	return fd;
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

/* Only the container's init in it, and no populated child cgroups. */
static int cg_is_dedicated(int cg_fd, const char *rel, pid_t pid,
			   bool *dedicated)
{
	_cleanup_free_ char *line = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	size_t cap = 0;
	int fd = openat(cg_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);

	*dedicated = false;
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		log_error("cannot read %s/cgroup.procs: %s", rel,
			  strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		long long other = strtoll(line, NULL, 10);

		if (other != pid)
			return 0;
	}
	return cg_children_idle(cg_fd, dedicated);
}

int cg_locate(const struct cg_root *root, pid_t pid, struct cg_target *t,
	      bool *dedicated)
{
	int fd, r;

	memset(t, 0, sizeof(*t));
	*dedicated = false;
	r = cg_pid_path(pid, t->rel, sizeof(t->rel));
	if (r)
		return r;
	fd = cg_open_target(root, t);
	if (fd < 0 || !strcmp(t->rel, "/"))
		return fd;
	r = cg_is_dedicated(fd, t->rel, pid, dedicated);
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

int cg_pid_inside(const struct cg_root *root, pid_t pid,
		  const struct cg_target *t)
{
	struct cg_target now = { 0 };
	_cleanup_close_ int fd = -1;

	if (cg_pid_path(pid, now.rel, sizeof(now.rel)))
		return -ESRCH;
	if (strcmp(now.rel, t->rel)) {
		log_error(
			"container init pid %d left cgroup %s while the policy was being attached (it is now in %s)",
			pid, t->rel, now.rel);
		return -EXDEV;
	}
	fd = cg_open_target(root, &now);
	if (fd >= 0 && now.id != t->id) {
		log_error(
			"cgroup %s was replaced while the policy was being attached (id %llu, now %llu)",
			t->rel, (unsigned long long)t->id,
			(unsigned long long)now.id);
		return -EXDEV;
	}
	return fd < 0 ? fd : 0;
}

int cg_undo(const struct cg_root *root, struct cg_target *target, pid_t pid)
{
	int r;

	if (!target->created)
		return 0;
	r = cg_move_pid(root, target->parent_rel, pid);
	if (!r)
		r = cg_remove(root, target->rel);
	target->created = false;
	return r;
}
