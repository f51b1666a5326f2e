// SPDX-License-Identifier: GPL-2.0-only
/*
 * wiring_hooksd.c: what podman's and CRI-O's hooks.d files for this hook would
 * do, as validate reports it: files for this hook counted, those that
 * skip some containers named with why, handler files counted, other
 * hooks' files and non-JSON names ignored, missing directories empty.
 * (Masking of /usr/share by /etc needs those real directories: the
 * suites 52-explain-validate.sh and 50-podman.sh cover it.)
 *
 * Modules: `wiring_hooksd.c`
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "wiring/wiring_hooksd.h"
#include "tap.h"

#define HOOK_PATH \
	"\"path\": \"/usr/local/libexec/oci/hooks.d/oci-sockopt-hook\""

/* A hooks.d file for our hook with this "when" and these stages. */
static void put(const char *dir, const char *name, const char *when,
		const char *stages)
{
	char path[512], text[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(text, sizeof(text),
		 "{\"version\": \"1.0.0\", \"hook\": {" HOOK_PATH
		 "}, \"when\": %s, \"stages\": %s}",
		 when, stages);
	if (write_file(path, text, 0644))
		tap_diag("cannot write %s", path);
}

/* How many files the report names ("FILE (why)"). */
static int named(const char *narrow)
{
	int n = 0;

	for (const char *p = narrow; (p = strstr(p, ".json (")); p++)
		n++;
	return n;
}

static void scan(const char *dir, struct hooksd_report *rep)
{
	const char *dirs[] = { dir };

	wiring_hooksd_scan(dirs, 1, rep);
}

static void test_examples(void)
{
	const char *dirs[] = { EXAMPLES };
	struct hooksd_report rep;

	wiring_hooksd_scan(dirs, 1, &rep);
	ok(rep.found == 3, "examples/: three hooks.d files for this hook (%d)",
	   rep.found);
	ok(rep.nr_narrow == 2 && rep.nr_handler == 1,
	   "two narrow (annotations, handler), one of them the handler's (%d, %d)",
	   rep.nr_narrow, rep.nr_handler);
	ok(strstr(rep.narrow, "(when.annotations)") != NULL,
	   "the narrow ones are named with why: %s", rep.narrow);
	ok(!strstr(rep.narrow, "always.json"), "the always file is not narrow");
}

static void test_dir(void)
{
	char dir[512], other[1024];
	struct hooksd_report rep;

	snprintf(dir, sizeof(dir), "%s/hooks.d", unit_dir);
	mkdir(dir, 0755);
	scan(dir, &rep);
	ok(rep.found == 0 && rep.nr_narrow == 0 && !rep.narrow[0],
	   "an empty directory: nothing found");
	scan("/nonexistent/hooks.d", &rep);
	ok(rep.found == 0, "a missing directory is empty");

	put(dir, "10-always.json", "{\"always\": true}",
	    "[\"prestart\", \"poststop\"]");
	scan(dir, &rep);
	ok(rep.found == 1 && rep.nr_narrow == 0,
	   "always: true with prestart: found, runs for every container");

	put(dir, "20-create.json", "{\"always\": true}", "[\"createRuntime\"]");
	scan(dir, &rep);
	ok(rep.found == 2 && rep.nr_narrow == 0,
	   "createRuntime is an attach stage too");

	put(dir, "30-poststop.json", "{\"always\": true}", "[\"poststop\"]");
	scan(dir, &rep);
	ok(rep.found == 3 && rep.nr_narrow == 1 &&
		   strstr(rep.narrow,
			  "30-poststop.json (no prestart or createRuntime stage)"),
	   "no attach stage: narrow, and said why (%s)", rep.narrow);

	put(dir, "40-commands.json",
	    "{\"always\": true, \"commands\": [\"^/bin/sh$\"]}",
	    "[\"prestart\"]");
	put(dir, "50-notalways.json", "{}", "[\"prestart\"]");
	put(dir, "60-bind.json", "{\"always\": true, \"hasBindMounts\": false}",
	    "[\"prestart\"]");
	scan(dir, &rep);
	ok(rep.found == 6 && rep.nr_narrow == 4,
	   "always narrowed again by commands or hasBindMounts, or no always: narrow (%d, %d)",
	   rep.found, rep.nr_narrow);
	ok(count_lines(rep.narrow) == 0 && named(rep.narrow) == 2,
	   "the report names two of the four narrow files, in readdir order: %s",
	   rep.narrow);

	put(dir, "70-empty-ann.json", "{\"always\": true, \"annotations\": {}}",
	    "[\"prestart\"]");
	put(dir, "71-empty-cmd.json", "{\"always\": true, \"commands\": []}",
	    "[\"prestart\"]");
	scan(dir, &rep);
	ok(rep.found == 8 && rep.nr_narrow == 4,
	   "empty annotations or commands narrow nothing (the matcher ignores them)");

	put(dir, "80-handler.json",
	    "{\"annotations\": {\"^node\\\\.sockopt-hook\\\\.io/runtime-handler$\": \"^x$\"}}",
	    "[\"prestart\"]");
	scan(dir, &rep);
	ok(rep.found == 9 && rep.nr_narrow == 5 && rep.nr_handler == 1,
	   "a file on the runtime handler key: narrow and a handler file");

	/* Not for us, or not a hooks.d file at all. */
	snprintf(other, sizeof(other), "%s/90-other.json", dir);
	write_file(
		other,
		"{\"version\": \"1.0.0\", \"hook\": {\"path\": \"/usr/bin/other-hook\"}, \"when\": {}, \"stages\": [\"prestart\"]}",
		0644);
	snprintf(other, sizeof(other), "%s/91-suffix.json", dir);
	write_file(
		other,
		"{\"version\": \"1.0.0\", \"hook\": {\"path\": \"/usr/bin/oci-sockopt-hook-old\"}, \"when\": {}, \"stages\": [\"prestart\"]}",
		0644);
	snprintf(other, sizeof(other), "%s/92-version.json", dir);
	write_file(other,
		   "{\"version\": \"2.0.0\", "
		   "\"hook\": {" HOOK_PATH
		   "}, \"when\": {}, \"stages\": [\"prestart\"]}",
		   0644);
	snprintf(other, sizeof(other), "%s/93-broken.json", dir);
	write_file(other, "{\"version\": \"1.0.0\", \"hook\": ", 0644);
	put(dir, "94-not-json.txt", "{}", "[\"prestart\"]");
	put(dir, ".95-hidden.json", "{}", "[\"prestart\"]");
	put(dir, ".json", "{}", "[\"prestart\"]");
	snprintf(other, sizeof(other), "%s/96-dir.json", dir);
	mkdir(other, 0755);
	scan(dir, &rep);
	ok(rep.found == 9 && rep.nr_narrow == 5,
	   "other hooks, another version, broken JSON, other names, hidden files and directories are ignored (%d, %d)",
	   rep.found, rep.nr_narrow);
}

static void test_two_dirs(void)
{
	char a[512], b[512];
	const char *dirs[2] = { a, b };
	struct hooksd_report rep;

	snprintf(a, sizeof(a), "%s/a", unit_dir);
	snprintf(b, sizeof(b), "%s/b", unit_dir);
	mkdir(a, 0755);
	mkdir(b, 0755);
	put(a, "x.json", "{\"always\": true}", "[\"prestart\"]");
	put(b, "x.json", "{}", "[\"prestart\"]");
	wiring_hooksd_scan(dirs, 2, &rep);
	ok(rep.found == 2 && rep.nr_narrow == 1 &&
		   strstr(rep.narrow, "/b/x.json"),
	   "two directories: both scanned, each file by its path");
}

int main(void)
{
	tmpdir_make();
	test_examples();
	test_dir();
	test_two_dirs();
	return tap_done();
}
