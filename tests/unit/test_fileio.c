// SPDX-License-Identifier: GPL-2.0-only
/*
 * fileio.c's records as attributes: written as the attribute of an empty
 * file where the file system takes one (tmpfs: /dev/shm; this machine's
 * /run or /tmp may be a disk), read back from it, or from the content of
 * a file written the old way or by hand; the bounds hold. Needs root for
 * trusted.* attributes: skipped otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fileio.h"
#include "tap.h"

#define ATTR "trusted.oci-sockopt-hook.record"

static void test_dir(const char *base)
{
	char tmpl[64], big[5000];
	char *out = NULL;
	size_t len = 0;
	struct stat st;
	ino_t ino = 0, ino2 = 0;
	int dir;

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
					NULL) == 0 &&
		   !strcmp(out, "{\"c\":3}"),
	   "%s: a record in the file's content (older versions, by hand) reads as before",
	   base);
	free(out);
	out = NULL;
	ok(fileio_replace_at(dir, "e.json", "", 0) == 0 &&
		   fileio_read_xattr_at(dir, "e.json", ATTR, 1024, &out, &len,
					NULL) == 0 &&
		   len == 0,
	   "%s: an empty file without the attribute reads as empty", base);
	free(out);
	out = NULL;
	memset(big, 'x', sizeof(big));
	ok(fileio_replace_xattr_at(dir, "b.json", ATTR, big, sizeof(big)) ==
			   0 &&
		   fileio_read_xattr_at(dir, "b.json", ATTR, 8192, &out, &len,
					NULL) == 0 &&
		   len == sizeof(big) && !memcmp(out, big, len),
	   "%s: an attribute bigger than the first read (5000 bytes)", base);
	free(out);
	out = NULL;
	ok(fileio_read_xattr_at(dir, "b.json", ATTR, 4000, &out, &len, NULL) ==
		   -EFBIG,
	   "%s: beyond max: EFBIG", base);
	ok(symlinkat("r.json", dir, "l.json") == 0 &&
		   fileio_read_xattr_at(dir, "l.json", ATTR, 1024, &out, &len,
					NULL) == -ELOOP,
	   "%s: a symlink is not followed", base);
	for (const char *const *n =
		     (const char *const[]){ "r.json", "c.json", "e.json",
					    "b.json", "l.json", NULL };
	     *n; n++)
		unlinkat(dir, *n, 0);
	close(dir);
	rmdir(tmpl);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("1..0 # SKIP trusted.* attributes need root\n");
		return 77;
	}
	test_dir("/dev/shm");
	test_dir("/run");
	test_dir("/tmp");
	return tap_done();
}
