// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pins are reached through the checked directory fd ("/proc/self/fd/N/"),
 * never by a path that could be swapped after the check.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/magic.h>

#include "lib/cleanup.h"
#include "lib/context.h"
#include "lib/kind.h"
#include "lib/trust.h"
#include "prog/bpffs.h"
#include "prog/pin.h"

/* bpffs refuses names with dots. */
#define PIN_TMP_PREFIX "tmp-"
/* "/proc/self/fd/<int>/" and a pin or temp name. */
#define PIN_FD_PATH_MAX (32 + SH_PIN_NAME_MAX)
#define PIN_HASH_DIGITS 16

const char *pin_dir(void)
{
	const char *env = context_value(context_get()->pin_dir);

	return env ? env : SH_PIN_DIR;
}

static int check_bpffs(int fd, const char *dir, struct sh_error *err)
{
	struct statfs fs;

	if (fstatfs(fd, &fs) < 0)
		return error_errno(err, -errno, "cannot stat pin directory %s",
				   dir);
	if (fs.f_type != BPF_FS_MAGIC)
		return error_set(
			err, -ENOTSUP,
			"pin directory %.128s is not on a BPF filesystem (mount one: mount -t bpf bpf /sys/fs/bpf; or set OCI_SOCKOPT_HOOK_PIN_DIR)",
			dir);
	return 0;
}

/* 1 when it made the directory, 0 when it was there. */
static int make_dir(const char *dir, struct sh_error *err)
{
	if (mkdir(dir, 0700) == 0)
		return 1;
	if (errno == EEXIST)
		return 0;
	if (errno == ENOENT || errno == EPERM || errno == EACCES)
		return error_errno(
			err, -errno,
			"cannot create pin directory %.128s (is its parent a mounted BPF filesystem? mount -t bpf bpf /sys/fs/bpf)",
			dir);
	return error_errno(err, -errno, "cannot create pin directory %.128s",
			   dir);
}

int pin_dir_open(bool create, struct sh_error *err)
{
	const char *dir = pin_dir();
	_cleanup_close_ int fd = -1;
	int made = 0, r;

	if (create) {
		r = bpffs_ensure("pin directory", dir, err);
		if (r)
			return r;
		made = make_dir(dir, err);
		if (made < 0)
			return made;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return error_errno(err, -errno,
				   "cannot open pin directory %.128s", dir);
	r = check_bpffs(fd, dir, err);
	if (r)
		goto fail;
	r = trust_check_dir(fd, "pin directory", dir, err);
	if (r)
		goto fail;
	return take_fd(&fd);
fail:
	/* A directory made on the wrong filesystem is not left behind. */
	if (made)
		rmdir(dir);
	return r;
}

int pin_dir_lock(int dir, struct sh_error *err)
{
	if (flock(dir, LOCK_EX) < 0)
		return error_errno(err, -errno, "cannot lock pin directory %s",
				   pin_dir());
	return 0;
}

void pin_name(char *buf, size_t len, const char *type, uint64_t hash)
{
	snprintf(buf, len, "%s-%016" PRIx64, type, hash);
}

static void fd_path(char *buf, size_t len, int dir, const char *name)
{
	snprintf(buf, len, "/proc/self/fd/%d/%s", dir, name);
}

int pin_get(int dir, const char *type, uint64_t hash)
{
	char name[SH_PIN_NAME_MAX], path[PIN_FD_PATH_MAX];
	int fd;

	pin_name(name, sizeof(name), type, hash);
	fd_path(path, sizeof(path), dir, name);
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int pin_add(int dir, const char *type, uint64_t hash, int prog_fd,
	    struct sh_error *err)
{
	char name[SH_PIN_NAME_MAX], tmp[SH_PIN_NAME_MAX], path[PIN_FD_PATH_MAX];

	pin_name(name, sizeof(name), type, hash);
	snprintf(tmp, sizeof(tmp), PIN_TMP_PREFIX "%d", (int)getpid());
	fd_path(path, sizeof(path), dir, tmp);
	unlinkat(dir, tmp, 0);
	if (bpf_obj_pin(prog_fd, path))
		return error_errno(err, -errno, "cannot pin %s in %s", name,
				   pin_dir());
	if (renameat(dir, tmp, dir, name) < 0) {
		int r = -errno;

		unlinkat(dir, tmp, 0);
		return error_errno(err, r, "cannot pin %s in %s", name,
				   pin_dir());
	}
	return 0;
}

/* (type, hash) of a pin of ours; -EINVAL for any other name. */
static int parse_pin_name(const char *name, char *type, size_t len,
			  uint64_t *hash)
{
	const char *dash = strrchr(name, '-');
	char *end;

	if (!dash || strlen(dash + 1) != PIN_HASH_DIGITS ||
	    (size_t)(dash - name) >= len)
		return -EINVAL;
	snprintf(type, len, "%.*s", (int)(dash - name), name);
	if (!kind_by_name(type))
		return -EINVAL;
	errno = 0;
	*hash = strtoull(dash + 1, &end, 16);
	return errno || *end ? -EINVAL : 0;
}

int pin_foreach(int dir, pin_visit_fn fn, void *data, struct sh_error *err)
{
	_cleanup_closedir_ DIR *d = NULL;
	int again = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	int r = 0;

	if (again < 0 || !(d = fdopendir(again))) {
		r = -errno;
		if (again >= 0)
			close(again);
		return error_errno(err, r, "cannot list pin directory %s",
				   pin_dir());
	}
	while (!r && (de = readdir(d))) {
		char type[SH_PIN_NAME_MAX];
		uint64_t hash = 0;
		bool ours;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		ours = !parse_pin_name(de->d_name, type, sizeof(type), &hash);
		r = fn(dir, de->d_name, ours ? type : NULL, hash, data);
	}
	return r;
}

int pin_remove(int dir, const char *name, struct sh_error *err)
{
	if (unlinkat(dir, name, 0) < 0 && errno != ENOENT)
		return error_errno(err, -errno, "cannot unpin %s in %s", name,
				   pin_dir());
	return 0;
}

bool pin_is_temp(const char *name)
{
	return !strncmp(name, PIN_TMP_PREFIX, strlen(PIN_TMP_PREFIX));
}
