// SPDX-License-Identifier: GPL-2.0-only
/*
 * version.c: --version names every library with how it is linked, as the
 * loader actually mapped it (checked here against /proc/self/maps: the
 * unit tests link glibc shared and the rest static), its run-time version
 * where the library has one, and what it was built against.
 *
 * Modules: `version.c`
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "tap.h"
#include "lib/version.h"

/* What version_print() writes on stdout (free it). */
static char *printed(bool json)
{
	FILE *f = tmpfile();
	int saved = dup(STDOUT_FILENO);
	char *text = calloc(1, 16384);

	fflush(stdout);
	dup2(fileno(f), STDOUT_FILENO);
	version_print("9.8.7", json);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(f);
	(void)!fread(text, 1, 16383, f);
	fclose(f);
	return text;
}

/* Whether a file named prefix* is mapped into this process. */
static bool mapped(const char *prefix)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096], *base;
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		base = strrchr(line, '/');
		found = base && !strncmp(base + 1, prefix, strlen(prefix));
	}
	if (f)
		fclose(f);
	return found;
}

static size_t count_rows(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* A row that starts with the library's name, then how it is linked. */
static bool row_says(const char *text, const char *name, const char *linked)
{
	char want[64];
	const char *p;
	size_t len = strlen(name);

	for (p = text; (p = strstr(p, name)); p++) {
		if ((p == text || p[-1] == '\n') && p[len] == ' ') {
			snprintf(want, sizeof(want), " %s ", linked);
			p += len + strspn(p + len, " ") - 1;
			return !strncmp(p, want, strlen(want));
		}
	}
	return false;
}

int main(void)
{
	static const char *const names[][2] = {
		{ "libbpf", "libbpf.so" },
		{ "libelf", "libelf.so" },
		{ "zlib", "libz.so" },
		{ "json-c", "libjson-c.so" },
		{ "libcgroup", "libcgroup.so" },
		{ "libprotobuf-c", "libprotobuf-c.so" },
		{ "glibc", "libc.so" },
	};
	const size_t nr = sizeof(names) / sizeof(names[0]);
	struct json_object *o, *libs, *lib, *v;
	char *text = printed(true);

	o = json_tokener_parse(text);
	ok(o != NULL, "--version --json is JSON");
	ok(json_object_object_get_ex(o, "version", &v) &&
		   !strcmp(json_object_get_string(v), "9.8.7"),
	   "the hook's version");
	ok(json_object_object_get_ex(o, "libraries", &libs) &&
		   json_object_array_length(libs) == nr,
	   "%zu libraries", nr);
	for (size_t i = 0; i < nr; i++) {
		const char *linked, *file;
		bool shared = mapped(names[i][1]);

		lib = json_object_array_get_idx(libs, i);
		json_object_object_get_ex(lib, "name", &v);
		is_str(json_object_get_string(v), names[i][0],
		       "library %zu is %s", i, names[i][0]);
		json_object_object_get_ex(lib, "linked", &v);
		linked = json_object_get_string(v);
		json_object_object_get_ex(lib, "file", &v);
		file = json_object_get_string(v);
		ok(linked && !strcmp(linked, shared ? "shared" : "static") &&
			   (shared ? file && strstr(file, names[i][1]) != NULL :
				     file == NULL),
		   "%s: %s as the loader mapped it, file %s", names[i][0],
		   linked, file ? file : "null");
		json_object_object_get_ex(lib, "built_against", &v);
		ok(json_object_get_string(v) && *json_object_get_string(v),
		   "%s: built against %s", names[i][0],
		   json_object_get_string(v));
	}
	json_object_object_get_ex(json_object_array_get_idx(libs, 3), "version",
				  &v);
	ok(v && !strcmp(json_object_get_string(v), json_c_version()),
	   "json-c's run-time version is json_c_version()");
	json_object_put(o);
	free(text);

	text = printed(false);
	ok(!strncmp(text, "oci-sockopt-hook 9.8.7\nlibrary ", 31) &&
		   count_rows(text) == nr + 2,
	   "the text form: the version, a header, one row per library");
	for (size_t i = 0; i < nr; i++) {
		bool shared = mapped(names[i][1]);

		ok(row_says(text, names[i][0], shared ? "shared" : "static"),
		   "the text row of %s says %s", names[i][0],
		   shared ? "shared" : "static");
	}
	free(text);
	return tap_done();
}
