// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CDI spec (container.h): kind sockopt-hook.io/policy, a device per policy
 * in annotations.allow_policies and one for the bypass when
 * annotations.allow_bypass_prot_mem, each device's edits only the hook's
 * createRuntime and poststop entries naming that device. cdiVersion is
 * the lowest that takes every device name (CDI's MinimumRequiredVersion,
 * specs-go/version.go: 0.5.0 for a name that starts with a digit, else
 * 0.3.0), so that podman 4.3's CDI 0.5 reads it as well as Docker 28's
 * and containerd 2.1's. The hook's path is the one runtime configure
 * takes: the installed binary, never a versioned directory; nothing else
 * in the spec names a file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "config/config.h"
#include "input/container.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "wiring/wiring.h"
#include "wiring/wiring_cdi.h"
#include "wiring/wiring_spec.h"

int wiring_cdi_devices(const struct sh_config *cfg,
		       void (*fn)(const char *name, void *arg),
		       void (*skipped)(const char *policy, const char *why,
				       void *arg),
		       void *arg)
{
	int n = 0;

	for (size_t i = 0; i < cfg->nr_allowed; i++) {
		const char *name = cfg->allowed_policies[i];
		const char *why = container_cdi_policy_problem(name);

		if (why) {
			if (skipped)
				skipped(name, why, arg);
			continue;
		}
		if (fn)
			fn(name, arg);
		n++;
	}
	if (cfg->allow_bypass) {
		if (fn)
			fn(SH_CDI_BYPASS, arg);
		n++;
	}
	return n;
}

/* One hooks entry: the stage's, with --cdi-device NAME. */
static struct json_object *hook_entry(const struct wiring_hook *hook,
				      const char *stage, const char *device)
{
	_cleanup_json_ struct json_object *h = wiring_spec_hook(hook, stage);
	struct json_object *entry = json_object_new_object();
	struct json_object *args = NULL;

	if (!h || !entry) {
		json_object_put(entry);
		return NULL;
	}
	json_object_object_get_ex(h, "args", &args);
	json_object_array_add(args, json_object_new_string("--" SH_CDI_OPTION));
	json_object_array_add(args, json_object_new_string(device));
	/* CDI's order: hookName first */
	json_object_object_add(entry, "hookName",
			       json_object_new_string(stage));
	json_object_object_foreach(h, key, val)
		json_object_object_add(entry, key, json_object_get(val));
	return entry;
}

struct spec_build {
	const struct wiring_hook *hook;
	struct json_object *devices;
	bool digit; /* a name starts with a digit: cdiVersion 0.5.0 */
	int r;
};

static void add_device(const char *name, void *arg)
{
	struct spec_build *b = arg;
	char device[SH_CDI_DEVICE_MAX];
	struct json_object *d = json_object_new_object();
	struct json_object *edits = json_object_new_object();
	struct json_object *hooks = json_object_new_array();
	struct json_object *pre, *post;

	snprintf(device, sizeof(device), SH_CDI_KIND "=%s", name);
	pre = hook_entry(b->hook, "createRuntime", device);
	post = hook_entry(b->hook, "poststop", device);
	if (!d || !edits || !hooks || !pre || !post) {
		json_object_put(d);
		json_object_put(edits);
		json_object_put(hooks);
		json_object_put(pre);
		json_object_put(post);
		b->r = -ENOMEM;
		return;
	}
	b->digit |= name[0] >= '0' && name[0] <= '9';
	json_object_array_add(hooks, pre);
	json_object_array_add(hooks, post);
	json_object_object_add(edits, "hooks", hooks);
	json_object_object_add(d, "name", json_object_new_string(name));
	json_object_object_add(d, "containerEdits", edits);
	json_object_array_add(b->devices, d);
}

int wiring_cdi_text(const struct sh_config *cfg, const struct wiring_hook *hook,
		    char **text, struct sh_error *err)
{
	_cleanup_json_ struct json_object *spec = json_object_new_object();
	struct spec_build b = { .hook = hook,
				.devices = json_object_new_array() };

	*text = NULL;
	if (!spec || !b.devices) {
		json_object_put(b.devices);
		return error_set(err, -ENOMEM, "cdi: out of memory");
	}
	if (!wiring_cdi_devices(cfg, add_device, NULL, &b)) {
		json_object_put(b.devices);
		return error_set(
			err, -ENOENT,
			"%s offers no CDI device: annotations.allow_policies names no policy that can be one, and annotations.allow_bypass_prot_mem is false",
			cfg->path);
	}
	json_object_object_add(spec, "cdiVersion",
			       json_object_new_string(b.digit ? "0.5.0" :
								"0.3.0"));
	json_object_object_add(spec, "kind",
			       json_object_new_string(SH_CDI_KIND));
	json_object_object_add(spec, "devices", b.devices);
	if (b.r)
		return error_set(err, b.r, "cdi: out of memory");
	if (asprintf(text, "%s\n",
		     json_object_to_json_string_ext(
			     spec,
			     JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
				     JSON_C_TO_STRING_NOSLASHESCAPE)) < 0) {
		*text = NULL;
		return error_set(err, -ENOMEM, "cdi: out of memory");
	}
	return 0;
}

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	return v;
}

bool wiring_cdi_is_ours(const char *text)
{
	_cleanup_json_ struct json_object *spec = json_tokener_parse(text);
	const char *kind = json_object_get_string(member(spec, "kind"));

	return kind && !strcmp(kind, SH_CDI_KIND);
}

int wiring_cdi_hook_of(const char *text, char **path, char **env, int max,
		       int *nr_env)
{
	_cleanup_json_ struct json_object *spec = json_tokener_parse(text);
	struct json_object *dev, *h, *e;
	size_t n;

	*path = NULL;
	*nr_env = 0;
	dev = json_object_array_get_idx(member(spec, "devices"), 0);
	h = json_object_array_get_idx(
		member(member(dev, "containerEdits"), "hooks"), 0);
	if (!json_object_get_string(member(h, "path")))
		return -ENOENT;
	*path = strdup(json_object_get_string(member(h, "path")));
	e = member(h, "env");
	n = json_object_is_type(e, json_type_array) ?
		    json_object_array_length(e) :
		    0;
	for (size_t i = 0; i < n && *nr_env < max; i++) {
		const char *v =
			json_object_get_string(json_object_array_get_idx(e, i));

		if (v)
			env[(*nr_env)++] = strdup(v);
	}
	return *path ? 0 : -ENOMEM;
}

struct same {
	struct json_object *names;
	size_t i;
	bool same;
};

static void compare(const char *name, void *arg)
{
	struct same *s = arg;
	struct json_object *d = json_object_array_get_idx(s->names, s->i++);
	const char *now = json_object_get_string(member(d, "name"));

	s->same &= now && !strcmp(now, name);
}

bool wiring_cdi_same_devices(const char *text, const struct sh_config *cfg)
{
	_cleanup_json_ struct json_object *spec = json_tokener_parse(text);
	struct same s = { .names = member(spec, "devices"), .same = true };

	wiring_cdi_devices(cfg, compare, NULL, &s);
	return s.same && json_object_is_type(s.names, json_type_array) &&
	       json_object_array_length(s.names) == s.i;
}

void wiring_cdi_path(const struct wiring_opts *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s/" SH_CDI_SPEC_NAME, o->cdi_dir ?: SH_CDI_ETC);
}

int wiring_cdi_configure(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 const struct sh_config *cfg, struct wiring_plan *plan,
			 struct sh_error *err)
{
	char path[PATH_MAX];
	char *text = NULL;
	int r = wiring_cdi_text(cfg, hook, &text, err);

	wiring_cdi_path(o, path, sizeof(path));
	if (r == -ENOENT) {
		/* nothing to offer: no spec, and one line why */
		wiring_plan_note(plan, "%s", err->msg);
		memset(err, 0, sizeof(*err));
		return wiring_plan_remove_ours(
			plan, path, wiring_cdi_is_ours,
			"is not a CDI spec of kind " SH_CDI_KIND, err);
	}
	if (r)
		return r;
	r = wiring_plan_write(plan, path, text, 0644, err);
	if (!r)
		wiring_plan_note(
			plan,
			"%s: runtimes that read CDI specs (podman --device, Docker 25+ --device, containerd's and CRI-O's CDIDevices) give the policy to a container that asks for " SH_CDI_KIND
			"=NAME",
			path);
	return r;
}

int wiring_cdi_unconfigure(const struct wiring_opts *o,
			   struct wiring_plan *plan, struct sh_error *err)
{
	char path[PATH_MAX];

	wiring_cdi_path(o, path, sizeof(path));
	return wiring_plan_remove_ours(plan, path, wiring_cdi_is_ours,
				       "is not a CDI spec of kind " SH_CDI_KIND,
				       err);
}
