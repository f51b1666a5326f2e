// SPDX-License-Identifier: GPL-2.0-only
/*
 * --version: the hook's version, then every library it links with its
 * version and whether it is inside this binary (the default STATIC=1
 * build) or loaded from a shared object (STATIC=0, for distribution
 * packages). An operator checks a node's binary for a library CVE with
 * this: a static copy is fixed only by a rebuild of the hook, a shared one
 * by the distribution's update of that library.
 *
 * "version" is what the library itself reports at run time; libelf and
 * libcgroup have no call for that, and libbpf reports only major.minor, so
 * "built against" adds what pkg-config said at build time. Whether a
 * library is shared is read from the objects the dynamic loader mapped,
 * not from a build flag.
 */
#include <bpf/libbpf.h>
#include <gnu/libc-version.h>
#include <json-c/json.h>
#include <limits.h>
#include <link.h>
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "lib/version.h"

/* Set by the Makefile from pkg-config --modversion. */
#ifndef SH_BUILT_LIBBPF
#define SH_BUILT_LIBBPF "unknown"
#endif
#ifndef SH_BUILT_LIBELF
#define SH_BUILT_LIBELF "unknown"
#endif
#ifndef SH_BUILT_ZLIB
#define SH_BUILT_ZLIB ZLIB_VERSION
#endif
#ifndef SH_BUILT_JSON_C
#define SH_BUILT_JSON_C JSON_C_VERSION
#endif
#ifndef SH_BUILT_PROTOBUF_C
#define SH_BUILT_PROTOBUF_C PROTOBUF_C_VERSION
#endif
#ifndef SH_BUILT_LIBCGROUP
#define SH_BUILT_LIBCGROUP "unknown"
#endif
#define STR_(x) #x
#define STR(x) STR_(x)
#define SH_BUILT_GLIBC STR(__GLIBC__) "." STR(__GLIBC_MINOR__)

struct library {
	const char *name;
	const char *file_prefix; /* of its shared object: "libz.so" */
	const char *(*runtime_version)(void); /* NULL: it has none */
	const char *built_against;
};

static const struct library libraries[] = {
	{ "libbpf", "libbpf.so", libbpf_version_string, SH_BUILT_LIBBPF },
	{ "libelf", "libelf.so", NULL, SH_BUILT_LIBELF },
	{ "zlib", "libz.so", zlibVersion, SH_BUILT_ZLIB },
	{ "json-c", "libjson-c.so", json_c_version, SH_BUILT_JSON_C },
	{ "libcgroup", "libcgroup.so", NULL, SH_BUILT_LIBCGROUP },
	{ "libprotobuf-c", "libprotobuf-c.so", protobuf_c_version,
	  SH_BUILT_PROTOBUF_C },
	{ "glibc", "libc.so", gnu_get_libc_version, SH_BUILT_GLIBC },
};

struct shared_object {
	const char *prefix;
	char path[PATH_MAX];
};

static int match_object(struct dl_phdr_info *info,
			size_t size __attribute__((unused)), void *data)
{
	struct shared_object *so = data;
	const char *base = strrchr(info->dlpi_name, '/');

	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, so->prefix, strlen(so->prefix)))
		return 0;
	/* libelf.so.1 -> libelf-0.188.so: the file names the release. */
	if (!realpath(info->dlpi_name, so->path))
		snprintf(so->path, sizeof(so->path), "%s", info->dlpi_name);
	return 1;
}

/* The file the library was loaded from, or NULL if it is linked in. */
static const char *shared_file(const struct library *lib,
			       struct shared_object *so)
{
	so->prefix = lib->file_prefix;
	so->path[0] = '\0';
	return dl_iterate_phdr(match_object, so) ? so->path : NULL;
}

static void print_text(const char *hook_version)
{
	struct shared_object so;

	printf("%s %s\n", SH_IDENT, hook_version);
	printf("%-13s %-7s %-8s %-14s %s\n", "library", "linked", "version",
	       "built against", "file");
	for (size_t i = 0; i < ARRAY_SIZE(libraries); i++) {
		const struct library *lib = &libraries[i];
		const char *file = shared_file(lib, &so);

		printf("%-13s %-7s %-8s %-14s %s\n", lib->name,
		       file ? "shared" : "static",
		       lib->runtime_version ? lib->runtime_version() : "-",
		       lib->built_against, file ? file : "-");
	}
}

static struct json_object *string_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *library_json(const struct library *lib)
{
	struct json_object *o = json_object_new_object();
	struct shared_object so;
	const char *file = shared_file(lib, &so);
	const char *linked = file ? "shared" : "static";
	const char *version = lib->runtime_version ? lib->runtime_version() :
						     NULL;

	jsonw_str(o, "name", lib->name);
	jsonw_str(o, "linked", linked);
	json_object_object_add(o, "version", string_or_null(version));
	jsonw_str(o, "built_against", lib->built_against);
	json_object_object_add(o, "file", string_or_null(file));
	return o;
}

static void print_json(const char *hook_version)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	struct json_object *libs = json_object_new_array();

	jsonw_str(o, "name", SH_IDENT);
	jsonw_str(o, "version", hook_version);
	for (size_t i = 0; i < ARRAY_SIZE(libraries); i++)
		json_object_array_add(libs, library_json(&libraries[i]));
	json_object_object_add(o, "libraries", libs);
	puts(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}

int version_print(const char *hook_version, bool json)
{
	if (json)
		print_json(hook_version);
	else
		print_text(hook_version);
	return 0;
}
