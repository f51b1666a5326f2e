// SPDX-License-Identifier: GPL-2.0-only
/*
 * cg.c, the parts that need no root: the cgroup2 mount found as
 * mountinfo says, paths joined, a process's cgroup read and bad paths
 * refused, a cgroup opened by path and recognised by id, a process that
 * moved or a cgroup that was replaced noticed, cgroup.events read. A
 * process in the root cgroup (which has no cgroup.events) as root moves
 * itself into a cgroup of its own for those checks and back. cg.c's own
 * making, moving into and removing of cgroups is the suites' (12, 13,
 * 41).
 *
 * Modules: `cg.c`
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cg.h"
#include "helpers.h"
#include "tap.h"

/* The cgroup2 mount whose root is "/", from mountinfo, by hand. */
static bool mountinfo_cgroup2(char *mnt, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096], root[1024], point[1024], *sep;
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - cgroup2 ");
		if (sep &&
		    sscanf(line, "%*s %*s %*s %1023s %1023s", root, point) ==
			    2 &&
		    !strcmp(root, "/")) {
			snprintf(mnt, len, "%s", point);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* This process's cgroup v2 path, from /proc/self/cgroup, by hand. */
static bool own_cgroup(char *rel, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[4096];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(rel, len, "%s", line + 3);
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

static void test_paths(void)
{
	struct cg_root root = { .mount = "/sys/fs/cgroup" };
	char buf[64];

	ok(cg_path(&root, "/a/b", buf, sizeof(buf)) == 0 &&
		   !strcmp(buf, "/sys/fs/cgroup/a/b"),
	   "cg_path joins the mount and the cgroup");
	ok(cg_path(&root, "/", buf, sizeof(buf)) == 0 &&
		   !strcmp(buf, "/sys/fs/cgroup"),
	   "\"/\" is the mount itself, without a trailing slash");
	ok(cg_path(&root,
		   "/a-very-long-cgroup-name-that-does-not-fit-in-sixty-four-bytes",
		   buf, sizeof(buf)) == -ENAMETOOLONG,
	   "a path that does not fit: -ENAMETOOLONG");
}

static void test_events(void)
{
	bool populated = true;
	int dir;

	mkdir(TMP_PATH("cg"), 0700);
	dir = open(TMP_PATH("cg"), O_RDONLY | O_DIRECTORY);
	write_file(TMP_PATH("cg/cgroup.events"), "populated 0\nfrozen 0\n",
		   0600);
	ok(cg_populated_at(dir, &populated) == 0 && !populated,
	   "cgroup.events 'populated 0': empty");
	write_file(TMP_PATH("cg/cgroup.events"), "frozen 0\npopulated 1\n",
		   0600);
	ok(cg_populated(TMP_PATH("cg"), &populated) == 0 && populated,
	   "'populated 1' on any line: populated");
	write_file(TMP_PATH("cg/cgroup.events"), "frozen 0\n", 0600);
	ok(cg_populated_at(dir, &populated) == -EIO, "no populated line: -EIO");
	ok(cg_populated(TMP_PATH("nope"), &populated) == -ENOENT,
	   "a cgroup that is gone: -ENOENT");
	ok(cg_populated(TMP_PATH("cg/cgroup.events"), &populated) == -ENOENT,
	   "a path that is not a directory: -ENOENT");
	close(dir);
}

/* move_self CGROUP: this process into CGROUP (a directory); 0 or -errno. */
static int move_self(const char *cgroup)
{
	char procs[4096], pid[32];
	int fd, n, r = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
	n = snprintf(pid, sizeof(pid), "%d", (int)getpid());
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, pid, (size_t)n) != n)
		r = -errno;
	close(fd);
	return r;
}

/* A process in the root cgroup (a fresh machine's shell) finds no
 * cgroup.events there. As root, the checks that need a cgroup of its own
 * get one: the root's own checks first, then this process moves into
 * MNT/sockopt-unit-cg.PID (MADE, "" when none was made), and back at the
 * end (leave_own_cgroup). */
static void enter_own_cgroup(const char *mnt, char *rel, size_t rel_len,
			     char *made, size_t made_len)
{
	struct sh_error err = { 0 };
	struct cg_root root;
	struct cg_target t;
	bool dedicated = true;
	int fd;

	made[0] = '\0';
	if (strcmp(rel, "/") || geteuid() != 0)
		return;
	fd = cg_find_root(&root, &err) ?
		     -1 :
		     cg_locate(&root, getpid(), &t, &dedicated, &err);
	ok(fd >= 0 && !strcmp(t.rel, "/") && !dedicated,
	   "cg_locate: the root cgroup, never dedicated");
	if (fd >= 0)
		close(fd);
	snprintf(made, made_len, "%s/sockopt-unit-cg.%d", mnt, (int)getpid());
	if (mkdir(made, 0755) || move_self(made) || !own_cgroup(rel, rel_len)) {
		tap_diag("cannot move into a cgroup of its own (%s): %s", made,
			 strerror(errno));
		rmdir(made);
		made[0] = '\0';
		snprintf(rel, rel_len, "/");
	}
}

static void leave_own_cgroup(const char *mnt, const char *made)
{
	if (!made[0])
		return;
	if (move_self(mnt) || rmdir(made))
		tap_diag("cannot leave and remove %s: %s", made,
			 strerror(errno));
}

static void test_live(void)
{
	struct sh_error err = { 0 };
	struct cg_root root;
	struct cg_target t, moved;
	char mnt[1024], rel[4096], got[4096], made[4096];
	bool dedicated = true, populated = false;
	int fd;

	if (!mountinfo_cgroup2(mnt, sizeof(mnt)) ||
	    !own_cgroup(rel, sizeof(rel))) {
		tap_skip("the cgroup2 mount and this process's cgroup",
			 "no cgroup2 hierarchy here");
		return;
	}
	enter_own_cgroup(mnt, rel, sizeof(rel), made, sizeof(made));
	ok(cg_find_root(&root, &err) == 0 && !strcmp(root.mount, mnt),
	   "cg_find_root: the mount mountinfo names (%s)", mnt);
	ok(cg_pid_path(getpid(), got, sizeof(got), &err) == 0 &&
		   !strcmp(got, rel),
	   "cg_pid_path: this process's cgroup (%s)", rel);
	memset(&err, 0, sizeof(err));
	ok(cg_pid_path(0x3fffffff, got, sizeof(got), &err) == -ESRCH &&
		   strstr(err.msg, "no such process"),
	   "a pid that does not exist: -ESRCH");
	memset(&err, 0, sizeof(err));
	ok(cg_pid_path(getpid(), got, 2, &err) == -EINVAL || !strcmp(rel, "/"),
	   "a buffer too small for the path: refused, not cut");

	memset(&err, 0, sizeof(err));
	fd = cg_locate(&root, getpid(), &t, &dedicated, &err);
	ok(fd >= 0 && !strcmp(t.rel, rel) && t.id != 0,
	   "cg_locate: this process's cgroup, opened, with its id");
	ok(!dedicated || strcmp(rel, "/"),
	   "the root cgroup is never dedicated");
	if (strcmp(rel, "/"))
		ok(cg_populated_at(fd, &populated) == 0 && populated,
		   "our own cgroup is populated (we are in it)");
	else
		tap_skip(
			"our own cgroup is populated",
			"this process is in the root cgroup, which has no cgroup.events");
	if (fd >= 0)
		close(fd);

	fd = cg_open_attached(&t);
	ok(fd >= 0, "cg_open_attached: the same cgroup by path and id");
	if (fd >= 0)
		close(fd);
	moved = t;
	moved.id++;
	ok(cg_open_attached(&moved) == -ESTALE,
	   "another id at that path: -ESTALE (replaced)");
	snprintf(moved.abs, sizeof(moved.abs), "%s/no-such-cgroup-here", mnt);
	ok(cg_open_attached(&moved) == -ENOENT, "a path that is gone: -ENOENT");

	memset(&err, 0, sizeof(err));
	ok(cg_pid_inside(&root, getpid(), &t, &err) == 0,
	   "cg_pid_inside: still in it");
	moved = t;
	snprintf(moved.rel, sizeof(moved.rel), "/elsewhere");
	memset(&err, 0, sizeof(err));
	ok(cg_pid_inside(&root, getpid(), &moved, &err) == -EXDEV &&
		   strstr(err.msg, "left cgroup /elsewhere"),
	   "recorded elsewhere: -EXDEV, 'left cgroup'");
	moved = t;
	moved.id++;
	memset(&err, 0, sizeof(err));
	ok(cg_pid_inside(&root, getpid(), &moved, &err) == -EXDEV &&
		   strstr(err.msg, "was replaced"),
	   "same path, another id: -EXDEV, 'was replaced'");
	leave_own_cgroup(mnt, made);
}

int main(void)
{
	tmpdir_make();
	test_paths();
	test_events();
	test_live();
	return tap_done();
}
