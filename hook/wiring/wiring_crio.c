// SPDX-License-Identifier: GPL-2.0-only
/*
 * CRI-O's wiring (wiring_crio.h), read in cri-o pkg/config/config.go:
 * crio.conf, then every file under crio.conf.d decoded onto it in turn
 * (UpdateFromPath), so a drop-in adds runtime handlers key by key;
 * hooks_dir defaults to /usr/share/containers/oci/hooks.d only, and a
 * drop-in setting it would replace the node's list, so ours does not: the
 * hooks.d file goes into the first directory CRI-O reads. A handler
 * without runtime_path is looked up as a binary of its own name, so ours
 * are copies of the default handler (`crio config` prints the effective
 * config), each with default_annotations naming it in
 * SH_WIRING_HANDLER_KEY (CRI-O 1.32 and later; a pod's own value wins, so
 * the key is no proof of the handler on CRI-O).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "config/config.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "wiring/toml/toml.h"
#include "wiring/wiring.h"
#include "wiring/wiring_crio.h"
#include "wiring/wiring_hooksd.h"
#include "wiring/wiring_nri.h"

#define CRIO_DIR "/etc/crio/crio.conf.d"
#define CRIO_DROPIN "99-oci-sockopt-hook.conf"
/* The NRI fallback's hooks.d file, beside the handlers' one. */
#define CRIO_NRI_HOOKSD SH_IDENT "-nri.json"

static const char *const handlers[] = SH_WIRING_HANDLERS;

static int crio_config(const char *dir, const char *text,
		       struct json_object **ret, struct sh_error *err)
{
	char *argv[] = { "crio", "config", NULL };
	struct wiring_view view = { dir, CRIO_DROPIN, text };

	return wiring_exec_toml(argv, access(dir, F_OK) ? NULL : &view, ret,
				err);
}

static struct json_object *runtime_table(struct json_object *cfg)
{
	return toml_get(cfg, (const char *const[]){ "crio", "runtime", NULL });
}

/* The drop-in: each handler a copy of the default one, named. */
static int dropin(struct json_object *cfg, struct json_object **doc,
		  struct sh_error *err)
{
	struct json_object *rt = runtime_table(cfg), *def = NULL, *name = NULL;
	struct json_object *d = json_object_new_object();
	struct json_object *crio = json_object_new_object();
	struct json_object *runtime = json_object_new_object();
	struct json_object *runtimes = json_object_new_object();

	json_object_object_add(d, "crio", crio);
	json_object_object_add(crio, "runtime", runtime);
	json_object_object_add(runtime, "runtimes", runtimes);
	json_object_object_get_ex(rt, "default_runtime", &name);
	def = toml_get(rt, (const char *const[]){
				   "runtimes",
				   json_object_get_string(name) ?: "", NULL });
	if (!json_object_is_type(def, json_type_object)) {
		json_object_put(d);
		return error_set(
			err, -ENOENT,
			"`crio config` names no default runtime handler");
	}
	for (int i = 0; i < SH_WIRING_NR_HANDLERS; i++) {
		struct json_object *h = NULL, *ann = json_object_new_object();

		json_object_deep_copy(def, &h, NULL);
		json_object_object_add(ann, SH_WIRING_HANDLER_KEY,
				       json_object_new_string(handlers[i]));
		json_object_object_add(h, "default_annotations", ann);
		json_object_object_add(runtimes, handlers[i], h);
	}
	*doc = d;
	return 0;
}

static char *render(struct json_object *doc)
{
	return toml_write_text(
		SH_WIRING_MARK
		"\n"
		"# (`oci-sockopt-hook runtime unconfigure` removes it): the\n"
		"# runtime handlers sockopt and sockopt-bypass, copies of CRI-O's\n"
		"# default handler; the hooks.d file runs the hook.\n",
		doc);
}

/* The first hooks_dir CRI-O reads, for the hooks.d file. */
static void hooks_dir(struct json_object *cfg, struct wiring_opts *o, char *buf,
		      size_t len)
{
	struct json_object *dirs = NULL;

	json_object_object_get_ex(runtime_table(cfg), "hooks_dir", &dirs);
	if (o->hooks_dir || !json_object_is_type(dirs, json_type_array) ||
	    !json_object_array_length(dirs))
		return;
	snprintf(buf, len, "%s",
		 json_object_get_string(json_object_array_get_idx(dirs, 0)));
	o->hooks_dir = buf;
}

int wiring_crio_configure(const struct wiring_opts *opts,
			  const struct wiring_hook *hook,
			  const struct sh_config *cfg, struct wiring_plan *plan,
			  struct sh_error *err)
{
	const char *dir = opts->crio_dir ?: CRIO_DIR;
	_cleanup_json_ struct json_object *before = NULL, *doc = NULL;
	_cleanup_json_ struct json_object *after = NULL;
	struct wiring_opts o = *opts;
	char path[PATH_MAX], hdir[PATH_MAX];
	char *text = NULL;
	int r = crio_config(dir, NULL, &before, err) ?:
						       dropin(before, &doc, err);

	if (r)
		return r;
	hooks_dir(before, &o, hdir, sizeof(hdir));
	r = wiring_hooksd_configure(&o, hook, cfg, plan, err);
	text = r ? NULL : render(doc);
	if (!r && !access(dir, F_OK))
		r = crio_config(dir, text, &after, err);
	for (int i = 0; !r && after && i < SH_WIRING_NR_HANDLERS; i++)
		if (!toml_get(runtime_table(after),
			      (const char *const[]){ "runtimes", handlers[i],
						     NULL }))
			r = error_set(
				err, -EINVAL,
				"`crio config` does not show handler %s with %s/%s in place",
				handlers[i], dir, CRIO_DROPIN);
	snprintf(path, sizeof(path), "%s/%s", dir, CRIO_DROPIN);
	if (r) {
		free(text);
		return r;
	}
	return wiring_plan_write(plan, path, text, 0644, err);
}

int wiring_crio_unconfigure(const struct wiring_opts *o,
			    struct wiring_plan *plan, struct sh_error *err)
{
	const char *dir = o->crio_dir ?: CRIO_DIR;
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX];
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, CRIO_DROPIN);
	text = wiring_read(path, &r);
	if (text && strncmp(text, SH_WIRING_MARK, strlen(SH_WIRING_MARK)))
		return error_set(
			err, -EPERM,
			"%s was not written by runtime configure: left alone",
			path);
	return wiring_plan_remove(plan, path, err) ?:
		       wiring_hooksd_unconfigure(o, plan, err);
}

/*
 * CRI-O's NRI (internal/config/nri in cri-o: [crio.nri] enable_nri,
 * nri_listen, nri_plugin_dir, nri_disable_connections, and the default
 * validator's nri_validator_reject_oci_hook_adjustment), as `crio config`
 * prints the effective config.
 */
int wiring_crio_nri_settings(struct json_object *cfg, const char *dir,
			     struct wiring_nri *n, struct sh_error *err)
{
	struct json_object *nri =
		toml_get(cfg, (const char *const[]){ "crio", "nri", NULL });
	struct json_object *val = toml_get(
		nri, (const char *const[]){ "default_validator", NULL });

	snprintf(n->runtime, sizeof(n->runtime), "CRI-O");
	if (!toml_flag(nri, "enable_nri"))
		return error_set(
			err, -ENOTSUP,
			"NRI is off in CRI-O: set `enable_nri = true` under [crio.nri] in a file of %s, restart crio and run this again",
			dir);
	if (toml_flag(val, "nri_enable_default_validator") &&
	    toml_flag(val, "nri_validator_reject_oci_hook_adjustment"))
		return error_set(
			err, -EPERM,
			"CRI-O's NRI default validator rejects OCI hooks from plugins (nri_validator_reject_oci_hook_adjustment = true under [crio.nri.default_validator]): it would fail every container the plugin gives the hook");
	n->connections = !toml_flag(nri, "nri_disable_connections");
	snprintf(
		n->connect_fix, sizeof(n->connect_fix),
		"set `nri_disable_connections = false` under [crio.nri] in a file of %.120s, or use --nri plugin",
		dir);
	toml_text(nri, "nri_listen", SH_WIRING_NRI_SOCKET, n->socket,
		  sizeof(n->socket));
	toml_text(nri, "nri_plugin_dir", SH_WIRING_NRI_PLUGIN_DIR,
		  n->plugin_dir, sizeof(n->plugin_dir));
	return 0;
}

int wiring_crio_nri_read(const struct wiring_opts *o, struct wiring_nri *n,
			 struct sh_error *err)
{
	const char *dir = o->crio_dir ?: CRIO_DIR;
	_cleanup_json_ struct json_object *cfg = NULL;

	return crio_config(dir, NULL, &cfg, err) ?:
		       wiring_crio_nri_settings(cfg, dir, n, err);
}

/* The fallback's hooks.d file: for every container, in the first
 * directory CRI-O reads. */
static int nri_hooksd_path(const struct wiring_opts *opts, char *path,
			   size_t len, struct sh_error *err)
{
	_cleanup_json_ struct json_object *cfg = NULL;
	struct wiring_opts o = *opts;
	char hdir[PATH_MAX];
	int r = crio_config(opts->crio_dir ?: CRIO_DIR, NULL, &cfg, err);

	if (r)
		return r;
	hooks_dir(cfg, &o, hdir, sizeof(hdir));
	snprintf(path, len, "%s/" CRIO_NRI_HOOKSD,
		 o.hooks_dir ?: SH_HOOKSD_SYSTEM);
	return 0;
}

int wiring_crio_nri_fallback(const struct wiring_opts *o,
			     const struct wiring_hook *hook,
			     struct wiring_plan *plan, struct sh_error *err)
{
	char path[PATH_MAX];

	return nri_hooksd_path(o, path, sizeof(path), err) ?:
		       wiring_hooksd_plan(path, hook, /* always= */ true, plan,
					  err);
}

int wiring_crio_nri_unfallback(const struct wiring_opts *o,
			       struct wiring_plan *plan, struct sh_error *err)
{
	char path[PATH_MAX];

	return nri_hooksd_path(o, path, sizeof(path), err) ?:
		       wiring_hooksd_remove(path, plan, err);
}
