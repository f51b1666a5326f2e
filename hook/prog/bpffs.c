// SPDX-License-Identifier: GPL-2.0-only
/*
 * A host without a BPF filesystem at /sys/fs/bpf (no systemd, a minimal
 * node image) is not an error: as bpftool does before it pins, the hook
 * mounts one there, with systemd's options (root only, nosuid, nodev,
 * noexec). Only at /sys/fs/bpf and only over sysfs's empty directory:
 * another filesystem mounted there, or a pin directory elsewhere, is the
 * operator's, and the hook says what to do instead. The mount is left in
 * place, as systemd's would be: the pins on it outlive the hook.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "prog/bpffs.h"

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

enum bpffs_state bpffs_check(const char *dir, char *why, size_t len)
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

int bpffs_ensure(const char *what, const char *dir, struct sh_error *err)
{
	char why[SH_ERROR_MSG_MAX / 2];

	switch (bpffs_check(dir, why, sizeof(why))) {
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
