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
#include <libcgroup.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup/cg.h"
#include "input/bundle.h"
#include "lib/cleanup.h"
#include "lib/log.h"
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

int cg_open_attached(const struct cg_target *t)
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

/*
 * Which cgroup the policy goes on: the container's own when the runtime
 * gave it one, else one the hook makes below the shared one and moves the
 * init into. A cgroup the hook makes is not the root of the container's
 * cgroup namespace (the runtime made that before prestart), so processes
 * the runtime starts later with exec join the shared cgroup, unpoliced:
 * the operator may refuse such containers instead (on_shared_cgroup). And
 * a container that can write to a cgroup mount could move itself out of
 * the policed cgroup: refused whenever it could reach one outside it,
 * through any mount of the hierarchy (bundle.c).
 */

/*
 * A container that can reach the host's cgroup2 tree through a bind sees
 * whatever the bind's source shows, whatever its cgroup namespace: the
 * namespace stops it moving itself out only where the kernel treats
 * namespaces as delegation boundaries, which nsdelegate turns on for the
 * whole hierarchy.
 */
static bool reach_contained(const struct bundle_cg_reach *r, bool own_ns,
			    struct mountinfo *mi)
{
	const char *text;

	if (!r->fresh && !r->bound)
		return true;
	if (!own_ns)
		return false;
	if (!r->bound)
		return true;
	text = mountinfo_text(mi);
	return text && mountinfo_cgroup2_nsdelegate(text);
}

int cg_choice_decide_in(const struct sh_config *cfg, const struct oci_state *st,
			const char *cg2_mount, struct mountinfo *mi,
			const char *rel, bool dedicated, struct sh_error *err)
{
	struct bundle_cg_reach r;
	bool own_ns;

	bundle_cgroup_reach(st, cg2_mount, mi, &r);
	own_ns = bundle_own_cgroupns(st);
	if (dedicated && reach_contained(&r, own_ns, mi))
		return CG_USE_OWN;
	if (dedicated && !own_ns) {
		error_reason(err, SH_REASON_CGROUP_WRITABLE);
		return error_set(
			err, -EPERM,
			"the bundle gives the container a writable cgroup mount (%s) and no cgroup namespace of its own: it could move itself out of its cgroup %s, unpoliced; refusing",
			r.why, rel);
	}
	if (dedicated) {
		error_reason(err, SH_REASON_CGROUP_WRITABLE);
		return error_set(
			err, -EPERM,
			"the bundle gives the container a writable view of the cgroup2 tree (%s), and its cgroup namespace is no boundary: the cgroup2 hierarchy has no nsdelegate (see probe); it could move itself out of its cgroup %s, unpoliced; refusing",
			r.why, rel);
	}
	if (cfg->on_shared_cgroup == ON_SHARED_CGROUP_REFUSE) {
		error_reason(err, SH_REASON_CGROUP_SHARED);
		error_cause(err, NULL, "on_shared_cgroup=refuse");
		return error_set(
			err, -EPERM,
			"cgroup %s is not the container's own (a runtime without a cgroup manager?), and in a cgroup made by the hook processes started with exec would not be policed: refusing because on_shared_cgroup is 'refuse' in %s",
			rel, cfg->path);
	}
	if (r.fresh || r.bound) {
		error_reason(err, SH_REASON_CGROUP_WRITABLE);
		return error_set(
			err, -EPERM,
			"cgroup %s is not the container's own and the bundle gives the container a writable cgroup mount (%s): it could move itself out of a cgroup made by the hook back into %s, unpoliced; refusing",
			rel, r.why, rel);
	}
	return CG_MAKE_OWN;
}

int cg_choice_decide(const struct sh_config *cfg, const struct oci_state *st,
		     const char *cg2_mount, const char *rel, bool dedicated,
		     struct sh_error *err)
{
	struct mountinfo mi = { 0 };
	int r = cg_choice_decide_in(cfg, st, cg2_mount, &mi, rel, dedicated,
				    err);

	mountinfo_done(&mi);
	return r;
}

int cg_choice_take(const struct sh_config *cfg, const struct oci_state *st,
		   const struct cg_root *root, struct cg_target *t,
		   struct sh_error *err)
{
	_cleanup_close_ int fd = -1;
	bool dedicated;
	int choice;

	fd = cg_locate(root, st->pid, t, &dedicated, err);
	if (fd < 0)
		return fd;
	choice = cg_choice_decide(cfg, st, root->mount, t->rel, dedicated, err);
	if (choice == CG_USE_OWN)
		return take_fd(&fd);
	if (choice < 0)
		return choice;
	log_info("cgroup %s is not the container's own: creating one", t->rel);
	return cg_make_own(root, st->pid, st->id, t, err);
}

/*
 * One interface over two mechanisms: libcgroup where it sees the v2
 * hierarchy (pure v2 hosts), plain mkdir/write/rmdir on hybrid hosts,
 * where libcgroup 2.0 does not find the unified mount at all.
 */

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
