// SPDX-License-Identifier: GPL-2.0-only
/*
 * What root trusts: a root hook that followed a file anyone could write
 * would run anyone's policy (or none), and one that removed what a
 * writable state directory names would remove anyone's files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "lib/cleanup.h"
#include "lib/error.h"
#include "lib/trust.h"

#define WRITABLE_BY_OTHERS (S_IWGRP | S_IWOTH)

/* NULL when st may hold what root trusts, else why not. */
static const char *untrusted(const struct stat *st, bool root_may_own,
			     bool sticky_ok)
{
	bool owner_ok = st->st_uid == geteuid() ||
			(root_may_own && st->st_uid == 0);

	if (!owner_ok)
		return root_may_own ?
			       "is owned by neither root nor the caller" :
			       "is not owned by the caller";
	if (!(st->st_mode & WRITABLE_BY_OTHERS))
		return NULL;
	if (sticky_ok && (st->st_mode & S_ISVTX) && st->st_uid == 0)
		return NULL;
	return sticky_ok ? "is writable by group or others and not sticky" :
			   "is writable by group or others";
}

static int refuse_config(const char *path, const char *dir,
			 const struct stat *st, const char *why,
			 struct sh_error *err)
{
	error_reason(err, SH_REASON_CONFIG_UNTRUSTED);
	return error_set(
		err, -EPERM,
		"operator config %s%s%s (owner uid %u, mode %04o) %s: refusing it",
		path, dir ? ": its directory " : "", dir ? dir : "",
		(unsigned)st->st_uid, (unsigned)(st->st_mode & 07777), why);
}

static int config_errno(const char *path, int code, struct sh_error *err)
{
	return error_set(
		err, -code, "cannot read operator config %.128s: %s", path,
		code == EINVAL ? "not a regular file" : strerror(code));
}

/* Splits an absolute path into its directory and last component. */
static void split_path(char *real, const char **dir, const char **name)
{
	char *slash = strrchr(real, '/');

	*slash = '\0';
	*dir = real[0] ? real : "/";
	*name = slash[1] ? slash + 1 : ".";
}

int trust_open_config(const char *path, int *ret, struct sh_error *err)
{
	_cleanup_free_ char *real = realpath(path, NULL);
	_cleanup_close_ int dir = -1, fd = -1;
	const char *dir_path, *name, *why;
	struct stat dst, fst;

	if (!real)
		return config_errno(path, errno, err);
	split_path(real, &dir_path, &name);
	/* The file is opened in the directory that is checked, so neither
	 * can be swapped between the check and the read. */
	dir = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0 || fstat(dir, &dst) < 0)
		return config_errno(path, errno, err);
	fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &fst) < 0)
		return config_errno(path, errno, err);
	if (!S_ISREG(fst.st_mode))
		return config_errno(path, EINVAL, err);
	why = untrusted(&fst, /* root_may_own= */ true, /* sticky_ok= */ false);
	if (why)
		return refuse_config(path, NULL, &fst, why, err);
	why = untrusted(&dst, /* root_may_own= */ true, /* sticky_ok= */ true);
	if (why)
		return refuse_config(path, dir_path, &dst, why, err);
	*ret = take_fd(&fd);
	return 0;
}

int trust_check_dir(int fd, const char *what, const char *path,
		    struct sh_error *err)
{
	struct stat st;
	const char *why;

	if (fstat(fd, &st) < 0)
		return error_errno(err, -errno, "cannot stat %s %.128s", what,
				   path);
	why = S_ISDIR(st.st_mode) ? untrusted(&st, /* root_may_own= */ false,
					      /* sticky_ok= */ false) :
				    "is not a directory";
	if (!why)
		return 0;
	return error_set(err, -EPERM,
			 "%s %.128s (owner uid %u, mode %04o) %s: refusing it",
			 what, path, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777), why);
}

/* The link (lst) at path: root's or the caller's, in a directory that only
 * they write (or sticky and root's). */
static const char *untrusted_link(const char *path, const struct stat *lst)
{
	_cleanup_free_ char *copy = strdup(path);
	const char *dir, *name;
	struct stat dst;

	if (!copy)
		return "cannot be checked (out of memory)";
	struct statfs fs;

	if (lst->st_uid != 0 && lst->st_uid != geteuid())
		return "is owned by neither root nor the caller";
	split_path(copy, &dir, &name);
	if (stat(dir, &dst) < 0 || statfs(dir, &fs) < 0)
		return "is in a directory that cannot be checked";
	/* /proc/PID/root and the like lead into another process's view. */
	if (fs.f_type == PROC_SUPER_MAGIC)
		return "is a /proc link";
	return untrusted(&dst, /* root_may_own= */ true,
			 /* sticky_ok= */ true) ?
		       "is in a directory others may write" :
		       NULL;
}

int trust_check_links(const char *path, const char *what, struct sh_error *err)
{
	char prefix[PATH_MAX];
	size_t len = strlen(path);

	if (path[0] != '/' || len >= sizeof(prefix))
		return error_set(err, -EINVAL,
				 "%s %.128s is not an absolute path", what,
				 path);
	for (size_t i = 1; i <= len; i++) {
		struct stat lst;
		const char *why;

		if (path[i] != '/' && path[i] != '\0')
			continue;
		snprintf(prefix, sizeof(prefix), "%.*s", (int)i, path);
		if (lstat(prefix, &lst) < 0 || !S_ISLNK(lst.st_mode))
			continue;
		why = untrusted_link(prefix, &lst);
		if (why)
			return error_set(
				err, -EPERM,
				"%s %.128s: the link %.128s (owner uid %u) %s: refusing it",
				what, path, prefix, (unsigned)lst.st_uid, why);
	}
	return 0;
}

/* Opens name below dir without following it, making it when asked. */
static int open_component(int dir, const char *name, bool create, mode_t mode)
{
	int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int fd = openat(dir, name, flags);

	if (fd >= 0 || errno != ENOENT || !create)
		return fd < 0 ? -errno : fd;
	if (mkdirat(dir, name, mode) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(dir, name, flags);
	return fd < 0 ? -errno : fd;
}

/* One component; on_the_way: not the last, where a sticky directory of
 * root's will do. */
static int open_checked(int dir, const char *name, const char *what,
			const char *path, bool create, mode_t mode,
			bool on_the_way, struct sh_error *err)
{
	_cleanup_close_ int fd = -1;
	const char *why;
	struct stat st;

	if (!strcmp(name, ".."))
		return error_set(err, -EPERM, "%s %.256s has a '..' in it",
				 what, path);
	fd = open_component(dir, name, create, mode);
	if (fd == -ELOOP || fd == -ENOTDIR)
		return error_set(
			err, -EPERM,
			"%s: %.256s is a symbolic link or not a directory: refusing it",
			what, path);
	if (fd < 0)
		return error_errno(err, fd, "%s: cannot open %.256s", what,
				   path);
	if (fstat(fd, &st) < 0)
		return error_errno(err, -errno, "%s: cannot stat %.256s", what,
				   path);
	why = untrusted(&st, /* root_may_own= */ true, on_the_way);
	if (why)
		return error_set(
			err, -EPERM,
			"%s: %.256s (owner uid %u, mode %04o) %s: refusing it",
			what, path, (unsigned)st.st_uid,
			(unsigned)(st.st_mode & 07777), why);
	return take_fd(&fd);
}

int trust_open_dir_at(int dir, const char *name, const char *what,
		      const char *path, bool create, mode_t mode,
		      struct sh_error *err)
{
	return open_checked(dir, name, what, path, create, mode,
			    /* on_the_way= */ false, err);
}

int trust_open_dir_path(const char *what, const char *path, bool create,
			mode_t mode, struct sh_error *err)
{
	_cleanup_close_ int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char prefix[PATH_MAX], name[NAME_MAX + 1];
	const char *p = path;
	struct stat st;
	int next;

	if (path[0] != '/' || strlen(path) >= sizeof(prefix) || fd < 0)
		return error_set(err, -EINVAL,
				 "%s %.256s is not an absolute path", what,
				 path);
	if (fstat(fd, &st) < 0 ||
	    untrusted(&st, /* root_may_own= */ true, /* sticky_ok= */ true))
		return error_set(err, -EPERM, "%s: / is not root's alone",
				 what);
	for (;;) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (!n)
			break;
		if (n > NAME_MAX)
			return error_set(err, -ENAMETOOLONG,
					 "%s %.256s has a name too long", what,
					 path);
		snprintf(name, sizeof(name), "%.*s", (int)n, p);
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(p + n - path),
			 path);
		p += n;
		if (!strcmp(name, "."))
			continue;
		next = open_checked(fd, name, what, prefix, create,
				    p[strspn(p, "/")] ? 0755 : mode,
				    p[strspn(p, "/")] != '\0', err);
		if (next < 0)
			return next;
		close(fd);
		fd = next;
	}
	return take_fd(&fd);
}
