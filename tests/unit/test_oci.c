// SPDX-License-Identifier: GPL-2.0-only
/*
 * oci.c, reading what the runtime hands over: the OCI state from a file
 * descriptor (empty, too large, not JSON) and the bundle's config.json
 * from a bundle directory of the test's own: annotations merged (the
 * state's win), a bundle path that is not canonical refused, a link on
 * the way that someone else could have planted refused, config.json a
 * link or not a regular file refused. Each refusal is one line.
 * (State parsing itself: test_oci_policy.c.)
 *
 * Modules: `oci.c`
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "input/oci.h"
#include "tap.h"

/* oci_read_state() on a pipe holding text (len bytes). */
static int read_state(const char *text, size_t len, struct oci_state *st,
		      const char **said)
{
	struct sh_error err = { 0 };
	int p[2], r;

	memset(st, 0, sizeof(*st));
	if (pipe(p))
		return -999;
	if (fork() == 0) {
		close(p[0]);
		(void)!write(p[1], text, len);
		_exit(0);
	}
	close(p[1]);
	capture_start();
	r = reported(oci_read_state(p[0], st, &err), &err);
	*said = capture_end();
	close(p[0]);
	return r;
}

static void test_read_state(void)
{
	struct oci_state st;
	const char *said;
	const char *good =
		"{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\",\"pid\":42,\"bundle\":\"/b\"}";
	size_t big = (1 << 20) + 16;
	char *huge = malloc(big);

	ok(read_state(good, strlen(good), &st, &said) == 0 &&
		   !strcmp(st.id, "c1") && st.pid == 42 &&
		   !strcmp(st.bundle, "/b") && !strcmp(st.status, "creating"),
	   "a state on a pipe: id, pid, bundle, status");
	oci_state_free(&st);
	ok(read_state("", 0, &st, &said) == -EINVAL &&
		   strstr(said,
			  "no OCI state on stdin (is this run as an OCI hook?)") &&
		   count_lines(said) == 1,
	   "nothing on stdin: one line asking whether this is a hook");
	memset(huge, ' ', big);
	ok(read_state(huge, big, &st, &said) == -EFBIG &&
		   strstr(said, "larger than"),
	   "more than the state's bound: -EFBIG, one line");
	free(huge);
	ok(read_state("{\"id\":", 6, &st, &said) == -EINVAL &&
		   strstr(said, "invalid JSON"),
	   "a cut state: invalid JSON");
	oci_state_free(&st);
}

/* A bundle directory under the test's with this config.json text. */
static const char *bundle(const char *name, const char *config)
{
	static char dir[512];
	char path[600];

	snprintf(dir, sizeof(dir), "%s/%s", unit_dir, name);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	if (config)
		write_file(path, config, 0644);
	return dir;
}

/* The state's annotations and bundle, then oci_load_bundle(). */
static int load(const char *bundle_path, const char *state_ann,
		struct oci_state *st, const char **said)
{
	struct sh_error err = { 0 };
	char text[2048];
	int r;

	snprintf(
		text, sizeof(text),
		"{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\",\"pid\":1,\"bundle\":\"%s\",\"annotations\":%s}",
		bundle_path, state_ann);
	if (reported(oci_parse_state(text, strlen(text), st, &err), &err))
		return -999;
	capture_start();
	r = reported(oci_load_bundle(st, &err), &err);
	*said = capture_end();
	return r;
}

static void test_bundle(void)
{
	const char *cfg =
		"{\"ociVersion\":\"1.0.2\",\"annotations\":{\"a\":\"from-config\",\"b\":\"only-config\"}}";
	struct oci_state st;
	const char *said, *b;
	char path[600], link[600];

	b = bundle("good", cfg);
	ok(load(b, "{\"a\":\"from-state\"}", &st, &said) == 0 && !*said,
	   "a bundle with a config.json loads");
	is_str(oci_annotation(&st, "b"), "only-config",
	       "the config's annotations are read");
	is_str(oci_annotation(&st, "a"), "from-state",
	       "the state's annotation wins over the config's");
	ok(oci_annotation(&st, "c") == NULL, "an absent key is NULL");
	oci_state_free(&st);

	snprintf(path, sizeof(path), "%s/good/", unit_dir);
	ok(load(path, "{}", &st, &said) == -EINVAL &&
		   strstr(said, "is not a canonical path") &&
		   count_lines(said) == 1,
	   "a trailing '/': not canonical, refused");
	oci_state_free(&st);
	snprintf(path, sizeof(path), "%s/good/../good", unit_dir);
	ok(load(path, "{}", &st, &said) == -EINVAL &&
		   strstr(said, "is not a canonical path"),
	   "a '..' part: refused");
	oci_state_free(&st);
	snprintf(path, sizeof(path), "%s/missing", unit_dir);
	ok(load(path, "{}", &st, &said) == -ENOENT &&
		   strstr(said, "No such file or directory"),
	   "a missing bundle: -ENOENT");
	oci_state_free(&st);

	/* A link the caller owns in a directory only it writes: followed. */
	snprintf(link, sizeof(link), "%s/safe-link", unit_dir);
	symlink(b, link);
	ok(load(link, "{}", &st, &said) == 0 &&
		   !strcmp(oci_annotation(&st, "b"), "only-config"),
	   "a bundle through a trusted link is read");
	oci_state_free(&st);

	/* The same link in a world-writable directory: refused. */
	snprintf(path, sizeof(path), "%s/open", unit_dir);
	mkdir(path, 0777);
	chmod(path, 0777);
	snprintf(link, sizeof(link), "%s/open/planted", unit_dir);
	symlink(b, link);
	ok(load(link, "{}", &st, &said) == -EPERM &&
		   strstr(said, "is in a directory others may write"),
	   "a bundle through a link anyone could plant: refused");
	oci_state_free(&st);

	b = bundle("cfglink", NULL);
	snprintf(path, sizeof(path), "%s/config.json", b);
	snprintf(link, sizeof(link), "%s/good/config.json", unit_dir);
	symlink(link, path);
	ok(load(b, "{}", &st, &said) == -ELOOP && strstr(said, "cannot open") &&
		   strstr(said, "config.json"),
	   "config.json a symbolic link: refused (-ELOOP)");
	oci_state_free(&st);

	b = bundle("cfgdir", NULL);
	snprintf(path, sizeof(path), "%s/config.json", b);
	mkdir(path, 0755);
	ok(load(b, "{}", &st, &said) == -EINVAL &&
		   strstr(said, "not a regular file"),
	   "config.json a directory: not a regular file");
	oci_state_free(&st);

	b = bundle("nocfg", NULL);
	ok(load(b, "{}", &st, &said) == -ENOENT && strstr(said, "cannot open"),
	   "no config.json: -ENOENT");
	oci_state_free(&st);

	b = bundle("badcfg", "{\"annotations\": [1]}");
	ok(load(b, "{}", &st, &said) < 0 && count_lines(said) == 1,
	   "annotations that are not an object: refused, one line (%s)", said);
	oci_state_free(&st);
}

int main(void)
{
	tmpdir_make();
	test_read_state();
	test_bundle();
	return tap_done();
}
