// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pins are reached through the checked directory fd ("/proc/self/fd/N/"),
 * never by a path that could be swapped after the check.
 */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/context.h"
#include "lib/fileio.h"
#include "lib/kind.h"
#include "lib/log.h"
#include "lib/trust.h"
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
		r = pin_bpffs_ensure("pin directory", dir, err);
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

/*
 * A host without a BPF filesystem at /sys/fs/bpf (no systemd, a minimal
 * node image) is not an error: as bpftool does before it pins, the hook
 * mounts one there, with systemd's options (root only, nosuid, nodev,
 * noexec). Only at /sys/fs/bpf and only over sysfs's empty directory:
 * another filesystem mounted there, or a pin directory elsewhere, is the
 * operator's, and the hook says what to do instead. The mount is left in
 * place, as systemd's would be: the pins on it outlive the hook.
 */

#define BPFFS_PATH_MAX 4096
#define BPFFS_PROC_MAX (64 << 10)

/* dir without its last component ("." for a bare name). */
static void parent_of(const char *dir, char *buf, size_t len)
{
	const char *slash = strrchr(dir, '/');

	if (!slash)
		snprintf(buf, len, ".");
	else if (slash == dir)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "%.*s", (int)(slash - dir), dir);
}

static const char *fs_name(long type)
{
	switch (type) {
	case TMPFS_MAGIC:
		return "tmpfs";
	case SYSFS_MAGIC:
		return "sysfs";
	case PROC_SUPER_MAGIC:
		return "procfs";
	default:
		return "another filesystem";
	}
}

static bool kernel_has_bpffs(void)
{
	_cleanup_free_ char *text = NULL;
	size_t len;

	/* Unreadable: let the mount say. */
	if (fileio_read_at(AT_FDCWD, "/proc/filesystems", 0, BPFFS_PROC_MAX,
			   &text, &len))
		return true;
	return strstr(text, "\tbpf\n") != NULL;
}

/* What stands at /sys/fs/bpf when it is not a BPF filesystem. */
static enum bpffs_state check_default(char *why, size_t len)
{
	struct statfs fs;

	if (statfs(SH_BPFFS_DEFAULT, &fs) < 0) {
		snprintf(
			why, len,
			"%s: %s (is sysfs mounted at /sys? mount -t bpf bpf DIR and point OCI_SOCKOPT_HOOK_PIN_DIR into it)",
			SH_BPFFS_DEFAULT, strerror(errno));
		return BPFFS_UNUSABLE;
	}
	if (fs.f_type != SYSFS_MAGIC) {
		snprintf(
			why, len,
			"%s is a %s mount, not a BPF filesystem: unmount it, or mount -t bpf bpf %s",
			SH_BPFFS_DEFAULT, fs_name(fs.f_type), SH_BPFFS_DEFAULT);
		return BPFFS_UNUSABLE;
	}
	if (!kernel_has_bpffs()) {
		snprintf(
			why, len,
			"this kernel has no BPF filesystem (no 'bpf' in /proc/filesystems)");
		return BPFFS_UNUSABLE;
	}
	if (geteuid() != 0) {
		snprintf(
			why, len,
			"no BPF filesystem is mounted at %s, and mounting one needs root",
			SH_BPFFS_DEFAULT);
		return BPFFS_UNUSABLE;
	}
	return BPFFS_MOUNTABLE;
}

static bool on_bpffs(const char *path)
{
	struct statfs fs;

	return statfs(path, &fs) == 0 && fs.f_type == BPF_FS_MAGIC;
}

enum bpffs_state pin_bpffs_check(const char *dir, char *why, size_t len)
{
	char parent[BPFFS_PATH_MAX];

	parent_of(dir, parent, sizeof(parent));
	if (on_bpffs(dir) || on_bpffs(parent))
		return BPFFS_MOUNTED;
	if (!strcmp(parent, SH_BPFFS_DEFAULT))
		return check_default(why, len);
	snprintf(
		why, len,
		"%.256s is not on a BPF filesystem: mount one there (mount -t bpf bpf %.256s), or point OCI_SOCKOPT_HOOK_PIN_DIR into one",
		parent, parent);
	return BPFFS_UNUSABLE;
}

/* Under a lock on sysfs's directory, so that two hooks starting at once
 * on a bare host do not stack two BPF filesystems there. */
static int mount_default(struct sh_error *err)
{
	_cleanup_close_ int fd =
		open(SH_BPFFS_DEFAULT,
		     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0 || flock(fd, LOCK_EX) < 0)
		return error_errno(err, -errno, "cannot open %s",
				   SH_BPFFS_DEFAULT);
	if (on_bpffs(SH_BPFFS_DEFAULT))
		return 0; /* another hook was first */
	if (mount("bpf", SH_BPFFS_DEFAULT, "bpf",
		  MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") < 0)
		return error_errno(
			err, -errno,
			"no BPF filesystem is mounted at %s, and mounting one failed (mount -t bpf bpf %s)",
			SH_BPFFS_DEFAULT, SH_BPFFS_DEFAULT);
	log_info("mounted a BPF filesystem at %s: nothing was mounted there",
		 SH_BPFFS_DEFAULT);
	return 0;
}

int pin_bpffs_ensure(const char *what, const char *dir, struct sh_error *err)
{
	char why[SH_ERROR_MSG_MAX / 2];

	switch (pin_bpffs_check(dir, why, sizeof(why))) {
	case BPFFS_MOUNTED:
		return 0;
	case BPFFS_MOUNTABLE:
		return mount_default(err);
	default:
		return error_set(err, -ENOTSUP,
				 "%s %.256s is not on a BPF filesystem: %s",
				 what, dir, why);
	}
}
