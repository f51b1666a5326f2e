// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hooks.d file (wiring_hooksd.h) for podman and CRI-O, the same two
 * variants `make install` chooses from (examples/hooks.d-oci-sockopt-hook
 * .json and -always.json; 55-examples.sh checks they agree): the hook
 * for every container when the operator config has defaults or
 * require_annotations (an unannotated container must meet the hook), else
 * only for containers that carry one of our keys. podman and CRI-O need
 * every when.annotations pattern to match, hence one regex for all keys.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "wiring/wiring.h"
#include "wiring/wiring_hooksd.h"
#include "wiring/wiring_spec.h"

#define HOOKSD_NAME SH_IDENT ".json"
#define HOOKSD_KEYS \
	"^sockopt-hook\\.io/((policy|bypass-prot-mem|record)(\\.[A-Za-z0-9_.-]+)?|containers\\.(policy|bypass-prot-mem|record))$"

static struct json_object *when(bool always)
{
	struct json_object *w = json_object_new_object();
	struct json_object *ann = json_object_new_object();

	if (always) {
		json_object_put(ann);
		json_object_object_add(w, "always", json_object_new_boolean(1));
		return w;
	}
	json_object_object_add(ann, HOOKSD_KEYS,
			       json_object_new_string("^.*$"));
	json_object_object_add(w, "annotations", ann);
	return w;
}

/* The file's text: version, hook, when, stages (as the examples). */
char *wiring_hooksd_text(const struct wiring_hook *hook, bool always)
{
	_cleanup_json_ struct json_object *f = json_object_new_object();
	struct json_object *h = wiring_spec_hook(hook, "hook");
	struct json_object *stages = json_object_new_array();
	char *text = NULL;

	if (!f || !h || !stages) {
		json_object_put(h);
		json_object_put(stages);
		return NULL;
	}
	json_object_object_del(h, "timeout");
	json_object_array_add(stages, json_object_new_string("prestart"));
	json_object_array_add(stages, json_object_new_string("poststop"));
	json_object_object_add(f, "version", json_object_new_string("1.0.0"));
	json_object_object_add(f, "hook", h);
	json_object_object_add(f, "when", when(always));
	json_object_object_add(f, "stages", stages);
	if (asprintf(&text, "%s\n",
		     json_object_to_json_string_ext(
			     f, JSON_C_TO_STRING_PRETTY |
					JSON_C_TO_STRING_SPACED |
					JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
		return NULL;
	return text;
}

void wiring_hooksd_path(const struct wiring_opts *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s/" HOOKSD_NAME, o->hooks_dir ?: SH_HOOKSD_SYSTEM);
}

int wiring_hooksd_plan(const char *path, const struct wiring_hook *hook,
		       bool always, struct wiring_plan *plan,
		       struct sh_error *err)
{
	wiring_plan_note(
		plan, "%s runs the hook %s", path,
		always ?
			"for every container (the config has defaults or require_annotations)" :
			"for containers with sockopt-hook.io/ annotations");
	return wiring_plan_write(plan, path, wiring_hooksd_text(hook, always),
				 0644, err);
}

int wiring_hooksd_configure(const struct wiring_opts *o,
			    const struct wiring_hook *hook,
			    const struct sh_config *cfg,
			    struct wiring_plan *plan, struct sh_error *err)
{
	/* an unannotated container must meet the hook for these */
	bool always = config_has_defaults(cfg) || cfg->require.nr_handlers ||
		      cfg->require.nri;
	char path[PATH_MAX];

	wiring_hooksd_path(o, path, sizeof(path));
	return wiring_hooksd_plan(path, hook, always, plan, err);
}

/* A hooks.d file is ours if its hook.path names our binary. */
bool wiring_hooksd_is_ours(const char *text)
{
	_cleanup_json_ struct json_object *f = json_tokener_parse(text);
	struct json_object *h = NULL, *p = NULL;
	const char *path, *base;

	if (!json_object_object_get_ex(f, "hook", &h) ||
	    !json_object_object_get_ex(h, "path", &p))
		return false;
	path = json_object_get_string(p);
	base = path ? strrchr(path, '/') : NULL;
	return base && !strcmp(base + 1, SH_IDENT);
}

int wiring_hooksd_unconfigure(const struct wiring_opts *o,
			      struct wiring_plan *plan, struct sh_error *err)
{
	char path[PATH_MAX];

	wiring_hooksd_path(o, path, sizeof(path));
	return wiring_hooksd_remove(path, plan, err);
}

int wiring_hooksd_remove(const char *path, struct wiring_plan *plan,
			 struct sh_error *err)
{
	return wiring_plan_remove_ours(plan, path, wiring_hooksd_is_ours,
				       "does not run " SH_IDENT, err);
}

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

void wiring_hooksd_scan(const char *const *dirs, size_t nr,
			struct hooksd_report *rep)
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
