/* SPDX-License-Identifier: GPL-2.0-only */
/* Reading and writing whole files, bounded, never blocking on a FIFO. */
#ifndef SH_FILEIO_H
#define SH_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* All of fd, at most max bytes (-EFBIG beyond), NUL-terminated. */
int fileio_read_fd(int fd, size_t max, char **ret_text, size_t *ret_len);
/* The same for a regular file (-EINVAL for anything else), opened in dir
 * (AT_FDCWD for a path) without following a final symlink when nofollow. */
int fileio_read_at(int dir, const char *name, int nofollow, size_t max,
		   char **ret_text, size_t *ret_len);
int fileio_write_all(int fd, const char *buf, size_t len);
/* A temp file in dir written (r, 0 or a negative errno, says whether it
 * was): renamed to name, else removed; 0 or the error. */
int fileio_commit_temp(int dir, const char *tmp, const char *name, int r);
/*
 * Writes name in dir atomically: a temp file beside it, then rename, so a
 * reader sees the old content or the new one, never half of it. Names
 * that start with '.' are the temp files'.
 */
int fileio_replace_at(int dir, const char *name, const char *text, size_t len);
/*
 * The same, the text kept in the extended attribute attr of an empty file
 * (on tmpfs a file's content takes a whole page of memory, an attribute
 * only its size). Nowhere else: a file system that takes no such
 * attribute, or does not let us set it, is an error (-EOPNOTSUPP, or the
 * errno), never the file's content, which anyone who may write the file
 * can forge, where a trusted.* attribute takes CAP_SYS_ADMIN.
 */
int fileio_replace_xattr_at(int dir, const char *name, const char *attr,
			    const char *text, size_t len);
/* What fileio_replace_xattr_at() wrote: the attribute attr of the file
 * name (not followed), never its content; -ENODATA when it has none. The
 * file's inode number in *ino (unless NULL): a replaced file has another. */
int fileio_read_xattr_at(int dir, const char *name, const char *attr,
			 size_t max, char **ret, size_t *len, ino_t *ino);
/*
 * Writes name in dir once, never over anything: a temp file made with
 * O_EXCL, synced, then renamed with RENAME_NOREPLACE. -EEXIST when name
 * exists. For a directory only its owner writes (a stale temp file is a
 * dead writer's, with this pid).
 */
int fileio_create_at(int dir, const char *name, const char *text, size_t len,
		     mode_t mode);

#endif /* SH_FILEIO_H */
