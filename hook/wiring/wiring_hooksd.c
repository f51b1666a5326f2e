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
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "config/config.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "wiring/hooksd.h"
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
