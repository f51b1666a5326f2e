// SPDX-License-Identifier: GPL-2.0-only
/*
 * fileio.c: bounded whole-file reads (regular files only, never waiting
 * on a FIFO, -EFBIG past the bound, a symbolic link refused on request)
 * and atomic replacement (a reader sees the old text or the new, and no
 * temporary file stays behind); attachments as attributes: written as the
 * attribute of an empty file where the file system takes one (tmpfs:
 * /dev/shm; this machine's /run or /tmp may be a disk), read back from it,
 * or from the content of a file written the old way or by hand; the bounds
 * hold. trusted.* attributes need root: those checks skip without it.
 *
 * Modules: `fileio.c`
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "helpers.h"
#include "tap.h"

#define ATTR "trusted.oci-sockopt-hook.record"

static int dir_fd;

static void test_read(void)
{
	char *text = NULL, *big;
	size_t len = 0;

	write_file(TMP_PATH("small"), "hello\n", 0600);
	ok(fileio_read_at(dir_fd, "small", 1, 100, &text, &len) == 0 &&
		   len == 6 && !strcmp(text, "hello\n"),
	   "a small file, NUL-terminated, its length");
	free(text);
	text = NULL;
	ok(fileio_read_at(dir_fd, "small", 0, 6, &text, &len) == 0 && len == 6,
	   "exactly max bytes is read");
	free(text);
	text = NULL;
	ok(fileio_read_at(dir_fd, "small", 0, 5, &text, &len) == -EFBIG &&
		   !text,
	   "one byte more than max: -EFBIG, nothing returned");
	write_file(TMP_PATH("empty"), "", 0600);
	ok(fileio_read_at(dir_fd, "empty", 0, 10, &text, &len) == 0 &&
		   len == 0 && text && !text[0],
	   "an empty file: \"\"");
	free(text);
	text = NULL;

	/* Past the first 16 KiB chunk: the buffer grows. */
	big = malloc(100001);
	memset(big, 'b', 100000);
	big[100000] = '\0';
	write_file(TMP_PATH("big"), big, 0600);
	ok(fileio_read_at(dir_fd, "big", 0, 1 << 20, &text, &len) == 0 &&
		   len == 100000 && !memcmp(text, big, len) && !text[len],
	   "100000 bytes, past the first chunk, read whole");
	free(text);
	text = NULL;
	ok(fileio_read_at(dir_fd, "big", 0, 99999, &text, &len) == -EFBIG,
	   "... and refused with max one short");
	free(big);

	ok(fileio_read_at(dir_fd, "missing", 0, 10, &text, &len) == -ENOENT,
	   "a missing file: -ENOENT");
	mkdir(TMP_PATH("sub"), 0700);
	ok(fileio_read_at(dir_fd, "sub", 0, 10, &text, &len) == -EINVAL,
	   "a directory: -EINVAL");
	mkfifo(TMP_PATH("fifo"), 0600);
	ok(fileio_read_at(dir_fd, "fifo", 0, 10, &text, &len) == -EINVAL,
	   "a FIFO: -EINVAL at once, no wait for a writer");
	symlink("small", TMP_PATH("link"));
	ok(fileio_read_at(dir_fd, "link", 1, 10, &text, &len) == -ELOOP,
	   "a symbolic link with nofollow: -ELOOP");
	ok(fileio_read_at(dir_fd, "link", 0, 10, &text, &len) == 0 &&
		   !strcmp(text, "hello\n"),
	   "... and followed without");
	free(text);
}

static bool only(const char *name)
{
	DIR *d = opendir(unit_dir);
	struct dirent *de;
	int others = 0;

	while (d && (de = readdir(d)))
		others += !!strncmp(de->d_name, ".tmp", 4) ? 0 : 1;
	if (d)
		closedir(d);
	(void)name;
	return others == 0;
}

static void test_replace(void)
{
	char *text;
	struct stat st;
	int fd;

	ok(fileio_replace_at(dir_fd, "state", "one", 3) == 0,
	   "replace: a new file");
	text = read_file(TMP_PATH("state"));
	is_str(text, "one", "it holds the text");
	free(text);
	fd = open(TMP_PATH("state"), O_RDONLY);
	ok(fileio_replace_at(dir_fd, "state", "two!", 4) == 0,
	   "replace: an existing file");
	text = read_file(TMP_PATH("state"));
	is_str(text, "two!", "the new text");
	free(text);
	text = calloc(1, 8);
	ok(fd >= 0 && read(fd, text, 7) == 3 && !strcmp(text, "one"),
	   "a reader that had it open still reads the old text whole (rename)");
	free(text);
	close(fd);
	ok(stat(TMP_PATH("state"), &st) == 0 && (st.st_mode & 07777) == 0600,
	   "the file is 0600");
	ok(only("state"), "no temporary file left");

	/* The target is a directory: the rename fails and the temp goes. */
	mkdir(TMP_PATH("adir"), 0700);
	ok(fileio_replace_at(dir_fd, "adir", "x", 1) == -EISDIR,
	   "replacing a directory: -EISDIR");
	ok(only("state"), "... and its temporary file removed");

	symlink("state", TMP_PATH("slink"));
	ok(fileio_replace_at(dir_fd, "slink", "new", 3) == 0,
	   "replacing a link replaces the link, not its target");
	text = read_file(TMP_PATH("state"));
	ok(text && !strcmp(text, "two!") &&
		   lstat(TMP_PATH("slink"), &st) == 0 && S_ISREG(st.st_mode),
	   "... the target is untouched");
	free(text);
}

static void test_write_all(void)
{
	int p[2];
	char buf[8] = "";

	ok(pipe(p) == 0 && fileio_write_all(p[1], "abcdef", 6) == 0 &&
		   read(p[0], buf, 7) == 6 && !strcmp(buf, "abcdef"),
	   "write_all writes every byte");
	close(p[0]);
	ok(fileio_write_all(p[1], "x", 1) == -EPIPE,
	   "a write to a closed pipe: -EPIPE (SIGPIPE ignored)");
	close(p[1]);
	ok(fileio_write_all(-1, "x", 1) == -EBADF, "a bad fd: -EBADF");
}

/* How many file systems took and read back the 5000-byte attribute. */
static int big_read;

static void test_dir(const char *base)
{
	char tmpl[64], big[5000];
	char *out = NULL;
	size_t len = 0;
	struct stat st;
	ino_t ino = 0, ino2 = 0;
	int dir, r;

	snprintf(tmpl, sizeof(tmpl), "%s/test-fileio-XXXXXX", base);
	if (!mkdtemp(tmpl)) {
		tap_diag("cannot make a directory in %s: skipped", base);
		return;
	}
	dir = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok(fileio_replace_xattr_at(dir, "r.json", ATTR, "{\"a\":1}", 7) == 0,
	   "%s: a record written as an attribute", base);
	ok(fstatat(dir, "r.json", &st, 0) == 0 && st.st_size == 0,
	   "%s: its file is empty (no data page on tmpfs)", base);
	ok(fileio_read_xattr_at(dir, "r.json", ATTR, 1024, &out, &len, &ino) ==
			   0 &&
		   len == 7 && !strcmp(out, "{\"a\":1}") && ino == st.st_ino,
	   "%s: read back, with its inode", base);
	free(out);
	out = NULL;
	ok(fileio_replace_xattr_at(dir, "r.json", ATTR, "{\"a\":2}", 7) == 0 &&
		   fileio_read_xattr_at(dir, "r.json", ATTR, 1024, &out, &len,
					&ino2) == 0 &&
		   !strcmp(out, "{\"a\":2}") && ino2 != ino,
	   "%s: replaced: the new text, a new inode", base);
	free(out);
	out = NULL;
	ok(fileio_replace_at(dir, "c.json", "{\"c\":3}", 7) == 0 &&
		   fileio_read_xattr_at(dir, "c.json", ATTR, 1024, &out, &len,
					NULL) == -ENODATA &&
		   !out,
	   "%s: a record in the file's content (planted by anyone who may write the file) is never read: ENODATA",
	   base);
	free(out);
	out = NULL;
	ok(fileio_replace_at(dir, "e.json", "", 0) == 0 &&
		   fileio_read_xattr_at(dir, "e.json", ATTR, 1024, &out, &len,
					NULL) == -ENODATA,
	   "%s: an empty file without the attribute: ENODATA", base);
	ok(fileio_replace_xattr_at(dir, "z.json", ATTR, "", 0) == -EINVAL,
	   "%s: an empty text is no attribute: EINVAL", base);
	free(out);
	out = NULL;
	memset(big, 'x', sizeof(big));
	r = fileio_replace_xattr_at(dir, "b.json", ATTR, big, sizeof(big));
	if (r == -E2BIG || r == -ENOSPC) {
		ok(fstatat(dir, "b.json", &st, AT_SYMLINK_NOFOLLOW) < 0 &&
			   errno == ENOENT,
		   "%s: an attribute of 5000 bytes the file system does not take: %s, and no file (never the content)",
		   base, strerror(-r));
	} else {
		big_read++;
		ok(r == 0 &&
			   fileio_read_xattr_at(dir, "b.json", ATTR, 8192, &out,
						&len, NULL) == 0 &&
			   len == sizeof(big) && !memcmp(out, big, len),
		   "%s: an attribute bigger than the first read (5000 bytes)",
		   base);
		free(out);
		out = NULL;
		ok(fileio_read_xattr_at(dir, "b.json", ATTR, 4000, &out, &len,
					NULL) == -EFBIG,
		   "%s: beyond max: EFBIG", base);
	}
	ok(symlinkat("r.json", dir, "l.json") == 0 &&
		   fileio_read_xattr_at(dir, "l.json", ATTR, 1024, &out, &len,
					NULL) == -ELOOP,
	   "%s: a symlink is not followed", base);
	for (const char *const *n =
		     (const char *const[]){ "r.json", "c.json", "e.json",
					    "b.json", "l.json", "z.json",
					    NULL };
	     *n; n++)
		unlinkat(dir, *n, 0);
	close(dir);
	rmdir(tmpl);
}

int main(void)
{
	tmpdir_make();
	signal(SIGPIPE, SIG_IGN);
	dir_fd = open(unit_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	test_read();
	test_replace();
	test_write_all();
	close(dir_fd);
	if (geteuid() != 0) {
		tap_skip("records as trusted.* attributes",
			 "trusted.* attributes need root");
		return tap_done();
	}
	test_dir("/dev/shm");
	test_dir("/run");
	test_dir("/tmp");
	/* An ext4 of 4 KiB blocks takes no 5000-byte attribute (ENOSPC,
	 * checked above); tmpfs does, so the bigger-than-the-first-read path
	 * ran on one of them at least. */
	ok(big_read > 0,
	   "an attribute bigger than the first read: read back on %d of the 3 file systems",
	   big_read);
	return tap_done();
}
