// SPDX-License-Identifier: GPL-2.0-only
/*
 * trust.c: what a root hook trusts. The operator config must be a regular
 * file of root's or the caller's that neither group nor others may write,
 * in a directory they cannot write either (unless sticky and root's); the
 * state and pin directories must be the caller's alone; no link on the way
 * to a path may be one that someone else could have planted. Each refusal
 * is -EPERM with one line naming the path, owner and mode. Cases that need
 * a file of another user run only as root (chown); the rest run as anyone.
 *
 * Modules: `trust.c`
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "lib/trust.h"
#include "tap.h"

#define NOBODY 65534

static int open_config(const char *path, const char **said, int *fd)
{
	struct sh_error err = { 0 };
	int r;

	*fd = -1;
	capture_start();
	r = reported(trust_open_config(path, fd, &err), &err);
	*said = capture_end();
	return r;
}

static void trusted(const char *path, const char *what)
{
	const char *said;
	char buf[16] = "";
	int fd, r = open_config(path, &said, &fd);

	ok(r == 0 && fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 &&
		   !strncmp(buf, "{}", 2) && (fcntl(fd, F_GETFD) & FD_CLOEXEC),
	   "%s: accepted, the fd reads the file, close-on-exec", what);
	if (r)
		tap_diag("  said: %s", said);
	if (fd >= 0)
		close(fd);
}

static void untrusted(const char *path, int want, const char *words,
		      const char *what)
{
	const char *said;
	int fd, r = open_config(path, &said, &fd);

	ok(r == want && fd < 0 && count_lines(said) == 1 && strstr(said, words),
	   "%s: %d, one line with '%s'", what, want, words);
	if (r != want || !strstr(said, words))
		tap_diag("  got %d: %s", r, said);
	if (fd >= 0)
		close(fd);
}

/* A directory under the test's with this mode, and a config in it. */
static const char *config_in(const char *dir, mode_t dir_mode, mode_t file_mode,
			     char *path, size_t len)
{
	char d[512];

	snprintf(d, sizeof(d), "%s/%s", unit_dir, dir);
	mkdir(d, 0700);
	snprintf(path, len, "%s/config.json", d);
	write_file(path, "{}\n", file_mode);
	chmod(d, dir_mode);
	return path;
}

static void test_open_config(void)
{
	char p[512], link[512], dir[512];
	bool root = geteuid() == 0;

	trusted(config_in("good", 0755, 0644, p, sizeof(p)),
		"0644 in a 0755 directory");
	trusted(config_in("private", 0700, 0600, p, sizeof(p)),
		"0600 in a 0700 directory");
	untrusted(config_in("gw", 0755, 0664, p, sizeof(p)), -EPERM,
		  "(owner uid", "a group-writable config");
	untrusted(p, -EPERM, "mode 0664) is writable by group or others",
		  "... the line says the mode and why");
	untrusted(config_in("ow", 0755, 0646, p, sizeof(p)), -EPERM,
		  "is writable by group or others: refusing it",
		  "an others-writable config");
	untrusted(config_in("dirw", 0777, 0644, p, sizeof(p)), -EPERM,
		  "its directory", "a config in a world-writable directory");
	untrusted(p, -EPERM,
		  "mode 0777) is writable by group or others and not sticky",
		  "... the directory's mode and why");
	config_in("sticky", 01777, 0644, p, sizeof(p));
	if (root)
		trusted(p, "in a sticky directory of root's (as /tmp)");
	else
		untrusted(p, -EPERM, "its directory",
			  "in a sticky directory that is not root's");

	/* A link is followed, and the directory that is checked is the
	 * target's: a safe-looking path cannot hide an unsafe file. */
	config_in("dirw2", 0777, 0644, p, sizeof(p));
	snprintf(link, sizeof(link), "%s/good/link.json", unit_dir);
	chmod(TMP_PATH("good"), 0755);
	ok(symlink(p, link) == 0,
	   "a link in a safe directory to a config in an unsafe one");
	snprintf(dir, sizeof(dir), "its directory %s/dirw2", unit_dir);
	untrusted(link, -EPERM, dir,
		  "... is refused, naming the unsafe directory");

	untrusted(TMP_PATH("good/missing.json"), -ENOENT,
		  "cannot read operator config", "a missing config");
	untrusted(TMP_PATH("good"), -EINVAL, "not a regular file",
		  "a directory as config");
	mkfifo(TMP_PATH("good/fifo.json"), 0644);
	untrusted(TMP_PATH("good/fifo.json"), -EINVAL, "not a regular file",
		  "a FIFO as config, without waiting");

	if (!root) {
		tap_skip("a config owned by another user",
			 "needs root (chown)");
		return;
	}
	config_in("nobody", 0755, 0644, p, sizeof(p));
	ok(chown(p, NOBODY, NOBODY) == 0, "a config owned by nobody");
	untrusted(p, -EPERM, "is owned by neither root nor the caller",
		  "... is refused");
	ok(chown(p, 0, 0) == 0 &&
		   chown(TMP_PATH("nobody"), NOBODY, NOBODY) == 0,
	   "root's config in nobody's directory");
	untrusted(p, -EPERM, "its directory",
		  "... is refused: nobody could swap it");
}

static int check_dir(const char *path, const char **said)
{
	struct sh_error err = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	capture_start();
	r = reported(trust_check_dir(fd, "state directory", path, &err), &err);
	*said = capture_end();
	if (fd >= 0)
		close(fd);
	return r;
}

static void test_check_dir(void)
{
	const char *said;
	char d[512];

	snprintf(d, sizeof(d), "%s/state", unit_dir);
	mkdir(d, 0700);
	ok(check_dir(d, &said) == 0 && !*said, "a 0700 directory of ours");
	chmod(d, 0755);
	ok(check_dir(d, &said) == 0, "0755 is ours alone too");
	chmod(d, 0770);
	ok(check_dir(d, &said) == -EPERM && strstr(said, "state directory") &&
		   strstr(said, "mode 0770) is writable by group or others"),
	   "a group-writable state directory: -EPERM, named, with its mode");
	chmod(d, 01777);
	ok(check_dir(d, &said) == -EPERM,
	   "sticky does not help a state directory");
	chmod(d, 0700);
	write_file(TMP_PATH("state/file"), "x", 0600);
	ok(check_dir(TMP_PATH("state/file"), &said) == -EPERM &&
		   strstr(said, "is not a directory"),
	   "a file is not a directory");
	if (geteuid() == 0) {
		ok(chown(d, NOBODY, NOBODY) == 0 &&
			   check_dir(d, &said) == -EPERM &&
			   strstr(said, "is not owned by the caller"),
		   "nobody's 0700 directory is not root's: refused");
	} else {
		ok(check_dir("/", &said) == -EPERM &&
			   strstr(said, "is not owned by the caller"),
		   "root's / is not the caller's: refused");
	}
}

static int check_links(const char *path, const char **said)
{
	struct sh_error err = { 0 };
	int r;

	capture_start();
	r = reported(trust_check_links(path, "log file", &err), &err);
	*said = capture_end();
	return r;
}

static void test_check_links(void)
{
	const char *said;
	char p[512];

	ok(check_links("relative/path", &said) == -EINVAL &&
		   strstr(said, "is not an absolute path"),
	   "a relative path: -EINVAL");
	mkdir(TMP_PATH("safe"), 0755);
	mkdir(TMP_PATH("open"), 0777);
	chmod(TMP_PATH("open"), 0777);
	ok(check_links(TMP_PATH("safe/x.log"), &said) == 0,
	   "no link on the way: 0");
	ok(symlink(TMP_PATH("safe"), TMP_PATH("safe/self")) == 0 &&
		   check_links(TMP_PATH("safe/self/x.log"), &said) == 0,
	   "our link in a directory only we write: 0");
	ok(symlink(TMP_PATH("safe"), TMP_PATH("open/planted")) == 0,
	   "a link in a world-writable directory");
	snprintf(p, sizeof(p), "%s/open/planted/x.log", unit_dir);
	ok(check_links(p, &said) == -EPERM &&
		   strstr(said, "open/planted (owner uid") &&
		   strstr(said, "is in a directory others may write") &&
		   count_lines(said) == 1,
	   "... is refused, naming the link");
	ok(check_links("/proc/self/root/tmp/x.log", &said) == -EPERM &&
		   strstr(said, "is a /proc link"),
	   "a path through /proc/self/root: refused");
	if (geteuid() == 0) {
		ok(lchown(TMP_PATH("safe/self"), NOBODY, NOBODY) == 0 &&
			   check_links(TMP_PATH("safe/self/x.log"), &said) ==
				   -EPERM &&
			   strstr(said,
				  "is owned by neither root nor the caller"),
		   "nobody's link: refused");
	} else {
		tap_skip("a link owned by another user", "needs root (lchown)");
	}
}

int main(void)
{
	tmpdir_make();
	/* The test's directory is 0700: what is checked is below it. */
	umask(0);
	test_open_config();
	test_check_dir();
	test_check_links();
	return tap_done();
}
