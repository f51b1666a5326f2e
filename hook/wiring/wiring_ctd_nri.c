// SPDX-License-Identifier: GPL-2.0-only
/*
 * containerd's part of `runtime configure --nri` (wiring_ctd_nri.h), read
 * in containerd's own config (`containerd config dump`, the plugin
 * io.containerd.nri.v1.nri: internal/nri/config.go in 2.x):
 *
 *  - 1.6 has no NRI; 1.7 has it off (disable = true), 2.x on. Off, the
 *    runtime starts containers without any plugin: configure says the
 *    one line to change instead of wiring a plugin nobody calls;
 *  - disable_connections = true admits pre-registered plugins only;
 *  - the default validator (2.2 and later) with reject_oci_hook_adjustment
 *    fails every container a plugin adds a hook to: ours would break
 *    every pod it serves.
 *
 * The fail-closed fallback (for require_annotations.nri): the default
 * handler runs the hook from a base runtime spec, so that a container the
 * plugin missed still meets the hook, which refuses it. A drop-in of its
 * own (99-oci-sockopt-hook-nri.toml beside the handlers' one) sets the
 * default handler's base_runtime_spec to a copy of what that handler's
 * containers get now (wiring_spec.c) plus the hooks, and nothing else:
 * checked with containerd's dump as the handlers' drop-in is. Only 2.x,
 * which merges a drop-in key by key (1.x would take the whole CRI section
 * from it).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "lib/cleanup.h"
#include "wiring/toml/toml.h"
#include "wiring/toml/toml_write.h"
#include "wiring/wiring.h"
#include "wiring/wiring_ctd.h"
#include "wiring/wiring_ctd_dropin.h"
#include "wiring/wiring_ctd_import.h"
#include "wiring/wiring_ctd_node.h"
#include "wiring/wiring_ctd_nri.h"
#include "wiring/wiring_nri.h"
#include "wiring/wiring_spec.h"

#define NRI_PLUGIN "io.containerd.nri.v1.nri"
#define FALLBACK_DROPIN SH_WIRING_CTD_FALLBACK_DROPIN
#define DIFF_PATH_MAX 256

int wiring_ctd_nri_settings(struct json_object *dump, const char *version,
			    const char *main_path, struct wiring_nri *n,
			    struct sh_error *err)
{
	struct json_object *nri = toml_get(
		dump, (const char *const[]){ "plugins", NRI_PLUGIN, NULL });
	struct json_object *val = toml_get(
		nri, (const char *const[]){ "default_validator", NULL });

	snprintf(n->runtime, sizeof(n->runtime), "containerd %s", version);
	if (!json_object_is_type(nri, json_type_object))
		return error_set(
			err, -ENOTSUP,
			"containerd %s has no NRI (it came in 1.7): wire the handlers instead (runtime configure without --nri)",
			version);
	if (toml_flag(nri, "disable"))
		return error_set(
			err, -ENOTSUP,
			"NRI is off in containerd %s: set `disable = false` under [plugins.'" NRI_PLUGIN
			"'] in %s (or a drop-in it imports), restart containerd and run this again",
			version, main_path);
	if (toml_flag(val, "enable") &&
	    toml_flag(val, "reject_oci_hook_adjustment"))
		return error_set(
			err, -EPERM,
			"containerd's NRI default validator rejects OCI hooks from plugins (reject_oci_hook_adjustment = true under [plugins.'" NRI_PLUGIN
			"'.default_validator] in %s): it would fail every container the plugin gives the hook",
			main_path);
	n->connections = !toml_flag(nri, "disable_connections");
	snprintf(n->connect_fix, sizeof(n->connect_fix),
		 "set `disable_connections = false` under [plugins.'" NRI_PLUGIN
		 "'] in %.120s, or use --nri plugin",
		 main_path);
	toml_text(nri, "socket_path", SH_WIRING_NRI_SOCKET, n->socket,
		  sizeof(n->socket));
	toml_text(nri, "plugin_path", SH_WIRING_NRI_PLUGIN_DIR, n->plugin_dir,
		  sizeof(n->plugin_dir));
	return 0;
}

int wiring_ctd_nri_read(const struct wiring_opts *o, struct wiring_nri *n,
			struct sh_error *err)
{
	_cleanup_json_ struct json_object *dump = NULL;
	struct ctd c = { 0 };
	int r = wiring_ctd_node_probe(&c, o, err) ?:
			wiring_ctd_node_dump(&c, NULL, &dump, err);

	if (r)
		goto out;
	r = wiring_ctd_nri_settings(dump, c.version, c.main_path, n, err);
out:
	wiring_ctd_node_close(&c);
	return r;
}

/* obj[key], made an empty object when missing; NULL on no memory. */
static struct json_object *at(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (!obj || json_object_object_get_ex(obj, key, &v))
		return v;
	v = json_object_new_object();
	if (v && json_object_object_add(obj, key, v)) {
		json_object_put(v);
		return NULL;
	}
	return v;
}

/* The drop-in: the default handler's base_runtime_spec, nothing else. */
static struct json_object *fallback_doc(const struct ctd *c, const char *spec)
{
	const char *plugin = c->main_version == 3 ?
				     "io.containerd.cri.v1.runtime" :
				     "io.containerd.grpc.v1.cri";
	struct json_object *d = json_object_new_object();
	struct json_object *h = at(
		at(at(at(at(d, "plugins"), plugin), "containerd"), "runtimes"),
		c->default_name);

	if (!h ||
	    json_object_object_add(d, "version",
				   json_object_new_int(c->main_version)) ||
	    json_object_object_add(h, "base_runtime_spec",
				   json_object_new_string(spec))) {
		json_object_put(d);
		return NULL;
	}
	return d;
}

/* Whether containerd loads exactly the default handler's new spec. */
static int check(const struct ctd *c, const char *spec,
		 struct json_object *after, struct sh_error *err)
{
	_cleanup_json_ struct json_object *want = NULL, *got = NULL;
	char path[DIFF_PATH_MAX] = "";
	struct json_object *h = NULL;

	if (json_object_deep_copy(c->before, &want, NULL) ||
	    json_object_deep_copy(after, &got, NULL))
		return error_set(err, -ENOMEM, "runtime: out of memory");
	json_object_object_del(want, "imports");
	json_object_object_del(got, "imports");
	json_object_object_get_ex(wiring_ctd_node_runtimes(want, c->major),
				  c->default_name, &h);
	json_object_object_add(h, "base_runtime_spec",
			       json_object_new_string(spec));
	if (wiring_ctd_node_differ(want, got, path, sizeof(path)))
		return error_set(
			err, -EINVAL,
			"containerd would load more than the default handler's base_runtime_spec from %s: '%s' changes (a file imported after it, or a setting of the same key elsewhere)",
			c->dropin, path);
	return 0;
}

static char *render(const struct ctd *c, struct json_object *doc)
{
	return wiring_toml_text(
		doc,
		"# (`oci-sockopt-hook runtime unconfigure --nri MODE` removes it).\n"
		"# The NRI plugin's fallback: the default handler '%s' runs the\n"
		"# hook from %s/, so that a container\n"
		"# the plugin missed meets require_annotations.nri.\n",
		c->default_name, c->spec_dir);
}

static int plan_fallback(struct ctd *c, const struct wiring_hook *hook,
			 struct wiring_plan *plan, struct sh_error *err)
{
	_cleanup_free_ char *source = NULL;
	_cleanup_json_ struct json_object *doc = NULL, *after = NULL;
	struct json_object *rt = NULL;
	char spec[PATH_MAX], *spec_text = NULL, *text;
	bool generated;
	int r = wiring_ctd_default(c, &rt, err) ?:
			wiring_ctd_spec_source(c, rt, &source, &generated, err);

	if (r)
		return r;
	/* the default handler's own capabilities stay: its pods asked for
	 * nothing of ours */
	r = wiring_spec_build(source, generated, NULL, hook, true, &spec_text,
			      err);
	if (r)
		return r;
	wiring_ctd_node_spec_path(c, c->default_name, spec, sizeof(spec));
	r = wiring_plan_write(plan, spec, spec_text, 0644, err);
	if (r)
		return r;
	doc = fallback_doc(c, spec);
	text = doc ? render(c, doc) : NULL;
	if (!text)
		return error_set(err, -ENOMEM, "runtime: out of memory");
	r = wiring_ctd_dropin_try(c, text, plan, &after, err);
	if (r)
		goto fail;
	if (after) {
		r = check(c, spec, after, err);
		if (r)
			goto fail;
	}
	return wiring_plan_write(plan, c->dropin, text, 0644, err);
fail:
	free(text);
	return r;
}

int wiring_ctd_nri_fallback(const struct wiring_opts *o,
			    const struct wiring_hook *hook,
			    struct wiring_plan *plan, struct sh_error *err)
{
	struct ctd c = { .name = FALLBACK_DROPIN };
	int r = wiring_ctd_import_open(&c, o, err);

	if (r)
		goto out;
	if (c.major == 1) {
		r = error_set(
			err, -ENOTSUP,
			"containerd %s takes a drop-in's whole CRI section: the NRI fallback needs containerd 2.x",
			c.version);
		goto out;
	}
	r = plan_fallback(&c, hook, plan, err) ?:
		    wiring_ctd_import_plan(&c, plan, err);
	if (r)
		goto out;
	wiring_plan_note(
		plan,
		"fallback: containerd's default handler '%s' runs the hook, for require_annotations.nri",
		c.default_name);
out:
	wiring_ctd_node_close(&c);
	return r;
}

int wiring_ctd_nri_unfallback(const struct wiring_opts *o,
			      struct wiring_plan *plan, struct sh_error *err)
{
	struct ctd c = { .name = FALLBACK_DROPIN };
	_cleanup_free_ char *text = NULL;
	struct json_object *rt = NULL;
	struct sh_error ignored = { 0 };
	char spec[PATH_MAX], path[PATH_MAX];
	int r;

	/* the default handler's name is in the dump; without it, the
	 * drop-in names nothing more to remove */
	if (wiring_ctd_node_open(&c, o, &ignored) && !c.dropin[0]) {
		if (!c.main_dir[0])
			return error_set(err, ignored.code ?: -EINVAL, "%s",
					 ignored.msg);
		snprintf(path, sizeof(path), "%s/conf.d/" FALLBACK_DROPIN,
			 c.main_dir);
		wiring_ctd_node_set_dropin(&c, o->drop_in ?: path);
	}
	text = wiring_read(c.dropin, &r);
	if (text && strncmp(text, SH_WIRING_MARK, strlen(SH_WIRING_MARK))) {
		wiring_ctd_node_close(&c);
		return error_set(
			err, -EPERM,
			"%s was not written by runtime configure: left alone",
			c.dropin);
	}
	r = wiring_plan_remove(plan, c.dropin, err) ?:
		    wiring_ctd_import_undo(&c, SH_WIRING_CTD_DROPIN, plan, err);
	if (!r && !wiring_ctd_default(&c, &rt, &ignored)) {
		wiring_ctd_node_spec_path(&c, c.default_name, spec,
					  sizeof(spec));
		r = wiring_plan_remove(plan, spec, err);
	}
	wiring_plan_prune(plan, c.spec_dir);
	wiring_ctd_node_close(&c);
	return r;
}
