// SPDX-License-Identifier: GPL-2.0-only
/*
 * The operator's defaults reach a container only if the runtime runs the
 * hook for it. podman and CRI-O decide that from hooks.d files; their
 * matcher (containers/common pkg/hooks/1.0.0/when.go, When.Match) needs
 * every condition that is set to match: "always": true alone runs a hook
 * for every container, while "annotations", "commands" or
 * "hasBindMounts" next to it narrow it again. A file in
 * /etc/containers/oci/hooks.d masks one of the same name in
 * /usr/share/containers/oci/hooks.d.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "wiring/hooksd.h"

#define HOOK_NAME "/" SH_IDENT
#define HOOKSD_FILE_MAX (1 << 20) /* larger is not a hooks.d file */

static struct json_object *member(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(obj, key, &v);
	return v;
}

static bool nonempty(struct json_object *v)
{
	if (json_object_is_type(v, json_type_object))
		return json_object_object_length(v) > 0;
	if (json_object_is_type(v, json_type_array))
		return json_object_array_length(v) > 0;
	return v != NULL;
}

static bool for_this_hook(struct json_object *root)
{
	struct json_object *path = member(member(root, "hook"), "path");
	const char *p = json_object_get_string(path);
	size_t len = p ? strlen(p) : 0, n = strlen(HOOK_NAME);

	return json_object_is_type(path, json_type_string) && len >= n &&
	       !strcmp(p + len - n, HOOK_NAME);
}

static bool has_attach_stage(struct json_object *stages)
{
	size_t n = json_object_is_type(stages, json_type_array) ?
			   json_object_array_length(stages) :
			   0;

	for (size_t i = 0; i < n; i++) {
		const char *s = json_object_get_string(
			json_object_array_get_idx(stages, i));

		if (s &&
		    (!strcmp(s, "prestart") || !strcmp(s, "createRuntime")))
			return true;
	}
	return false;
}

/* NULL when the file runs the hook for every container, else why not. */
static const char *narrowed_by(struct json_object *root)
{
	struct json_object *when = member(root, "when");

	if (!has_attach_stage(member(root, "stages")))
		return "no prestart or createRuntime stage";
	if (nonempty(member(when, "annotations")))
		return "when.annotations";
	if (nonempty(member(when, "commands")))
		return "when.commands";
	if (member(when, "hasBindMounts"))
		return "when.hasBindMounts";
	if (!json_object_get_boolean(member(when, "always")))
		return "no when.always";
	return NULL;
}

/* A when.annotations key pattern naming the runtime handler key
 * (require.h), as examples/hooks.d-oci-sockopt-hook-handler.json does:
 * it runs the hook for a handler's containers, annotated or not. */
static bool matches_handler(struct json_object *root)
{
	struct json_object *ann = member(member(root, "when"), "annotations");

	if (!json_object_is_type(ann, json_type_object))
		return false;
	json_object_object_foreach(ann, key, val) {
		(void)val;
		if (strstr(key, "runtime-handler"))
			return true;
	}
	return false;
}

static bool masked(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (strcmp(dir, SH_HOOKSD_SYSTEM))
		return false;
	snprintf(path, sizeof(path), "%s/%s", SH_HOOKSD_ETC, name);
	return access(path, F_OK) == 0;
}

static void note_narrow(struct hooksd_report *rep, const char *path,
			const char *why)
{
	size_t used = strlen(rep->narrow);

	if (rep->nr_narrow++ < 2)
		snprintf(rep->narrow + used, sizeof(rep->narrow) - used,
			 "%s%s (%s)", used ? ", " : "", path, why);
}

static void scan_file(const char *dir, const char *name,
		      struct hooksd_report *rep)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ struct json_object *root = NULL;
	char path[PATH_MAX];
	const char *why;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (masked(dir, name) ||
	    fileio_read_at(AT_FDCWD, path, 0, HOOKSD_FILE_MAX, &text, &len))
		return;
	root = json_tokener_parse(text);
	if (!root ||
	    strcmp(json_object_get_string(member(root, "version")) ?: "",
		   "1.0.0") ||
	    !for_this_hook(root))
		return;
	rep->found++;
	why = narrowed_by(root);
	if (why)
		note_narrow(rep, path, why);
	if (why && matches_handler(root))
		rep->nr_handler++;
}

static bool is_json_name(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && name[0] != '.' && !strcmp(name + len - 5, ".json");
}

void hooksd_scan(const char *const *dirs, size_t nr, struct hooksd_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	for (size_t i = 0; i < nr; i++) {
		_cleanup_closedir_ DIR *d = opendir(dirs[i]);
		struct dirent *de;

		while (d && (de = readdir(d)))
			if (is_json_name(de->d_name))
				scan_file(dirs[i], de->d_name, rep);
	}
}
