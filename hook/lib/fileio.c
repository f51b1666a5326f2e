// SPDX-License-Identifier: GPL-2.0-only
/* Bounded whole-file reads and atomic writes, by directory fd. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"

/* What the usual state, config and attachment fit in: from the heap, where a
 * buffer of the maximum size would cost an mmap, page faults and munmap on
 * every hook run. */
#define FILEIO_FIRST_CHUNK 16384
/* What an attachment takes as an attribute, with room to spare. */
#define FILEIO_XATTR_CHUNK 4096

/* Doubles *cap up to max + 1 bytes. */
static int grow(char **buf, size_t *cap, size_t max)
{
	size_t want = *cap * 2 > max + 1 ? max + 1 : *cap * 2;
	char *bigger = realloc(*buf, want);

	if (!bigger)
		return -ENOMEM;
	*buf = bigger;
	*cap = want;
	return 0;
}

int fileio_read_fd(int fd, size_t max, char **ret_text, size_t *ret_len)
{
	size_t used = 0, cap = max + 1 < FILEIO_FIRST_CHUNK ?
				       max + 1 :
				       FILEIO_FIRST_CHUNK;
	_cleanup_free_ char *buf = malloc(cap);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (used == cap && grow(&buf, &cap, max))
			return -ENOMEM;
		n = read(fd, buf + used, cap - used);
		if (n <= 0)
			break;
		used += n;
		if (used > max)
			return -EFBIG;
	}
	if (n < 0)
		return -errno;
	if (used == cap && grow(&buf, &cap, max))
		return -ENOMEM;
	buf[used] = '\0';
	*ret_text = TAKE_PTR(buf);
	*ret_len = used;
	return 0;
}

/* Regular files only: a FIFO or a device must not make the hook wait. */
int fileio_read_at(int dir, const char *name, int nofollow, size_t max,
		   char **ret_text, size_t *ret_len)
{
	_cleanup_close_ int fd = openat(dir, name,
					O_RDONLY | O_CLOEXEC | O_NONBLOCK |
						(nofollow ? O_NOFOLLOW : 0));
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return fileio_read_fd(fd, max, ret_text, ret_len);
}

int fileio_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

int fileio_commit_temp(int dir, const char *tmp, const char *name, int r)
{
	if (!r && renameat(dir, tmp, dir, name) < 0)
		r = -errno;
	if (r)
		unlinkat(dir, tmp, 0);
	return r;
}

/* An attribute the file system refuses: none there, not allowed (trusted.*
 * outside the initial user namespace), or too big for it. */
static bool xattr_refused(int code)
{
	return code == EOPNOTSUPP || code == EPERM || code == ENOSPC ||
	       code == E2BIG || code == ERANGE;
}

/* The temp file, its text written as attr (when set: an error when it is
 * not taken) or as its content, renamed to name. */
static int replace_at(int dir, const char *name, const char *attr,
		      const char *text, size_t len)
{
	_cleanup_close_ int fd = -1;
	char tmp[32];
	int r;

	/* One writer per process at a time: the pid keeps temp names apart,
	 * and the leading dot keeps them out of every listing. */
	snprintf(tmp, sizeof(tmp), ".tmp.%d", getpid());
	fd = openat(dir, tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	r = fd < 0 ? -errno : 1;
	if (r == 1 && attr && !len)
		r = -EINVAL;
	else if (r == 1 && attr)
		r = fsetxattr(fd, attr, text, len, 0) < 0 ? -errno : 0;
	if (r == 1)
		r = fileio_write_all(fd, text, len);
	return fileio_commit_temp(dir, tmp, name, r);
}

int fileio_create_at(int dir, const char *name, const char *text, size_t len,
		     mode_t mode)
{
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
	_cleanup_close_ int fd = -1;
	char tmp[32];
	int r;

	snprintf(tmp, sizeof(tmp), ".tmp.%d", getpid());
	fd = openat(dir, tmp, flags, mode);
	if (fd < 0 && errno == EEXIST && unlinkat(dir, tmp, 0) == 0)
		fd = openat(dir, tmp, flags, mode);
	if (fd < 0)
		return -errno;
	r = fileio_write_all(fd, text, len);
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (!r && renameat2(dir, tmp, dir, name, RENAME_NOREPLACE) < 0)
		r = -errno;
	if (r)
		unlinkat(dir, tmp, 0);
	return r;
}

int fileio_replace_at(int dir, const char *name, const char *text, size_t len)
{
	return replace_at(dir, name, NULL, text, len);
}

int fileio_replace_xattr_at(int dir, const char *name, const char *attr,
			    const char *text, size_t len)
{
	return replace_at(dir, name, attr, text, len);
}

/* The attribute attr of fd, at most max bytes, NUL-terminated: one call
 * for what fits in the first chunk (an attachment does), -ENODATA for none. */
static int read_xattr(int fd, const char *attr, size_t max, char **ret,
		      size_t *len)
{
	size_t cap = max < FILEIO_XATTR_CHUNK ? max : FILEIO_XATTR_CHUNK;
	_cleanup_free_ char *buf = malloc(cap + 1);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	n = fgetxattr(fd, attr, buf, cap);
	if (n < 0 && errno == ERANGE) {
		n = fgetxattr(fd, attr, NULL, 0);
		if (n >= 0 && (size_t)n > max)
			return -EFBIG;
		free(buf);
		cap = n < 0 ? 0 : (size_t)n;
		buf = malloc(cap + 1);
		if (!buf)
			return -ENOMEM;
		/* Grown in between: only by hand (a rename replaces the
		 * file, never the attribute of an open one). */
		if (n >= 0)
			n = fgetxattr(fd, attr, buf, cap);
	}
	if (n < 0)
		return errno == ENODATA || xattr_refused(errno) ? -ENODATA :
		       errno == ERANGE				? -EFBIG :
								  -errno;
	buf[n] = '\0';
	*ret = TAKE_PTR(buf);
	*len = (size_t)n;
	return 0;
}

int fileio_read_xattr_at(int dir, const char *name, const char *attr,
			 size_t max, char **ret, size_t *len, ino_t *ino)
{
	_cleanup_close_ int fd = openat(
		dir, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (ino)
		*ino = st.st_ino;
	return read_xattr(fd, attr, max, ret, len);
}
