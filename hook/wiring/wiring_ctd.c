// SPDX-License-Identifier: GPL-2.0-only
/*
 * containerd's wiring (wiring_ctd.h): the handlers sockopt and
 * sockopt-bypass in a drop-in that the main config imports, each with a
 * base runtime spec that carries the hook. How containerd loads its
 * config decides the drop-in's shape (cmd/containerd/server/config,
 * LoadConfig, mergeConfig, resolveImports):
 *
 *  - the main config first, then its imports in order (a glob's matches
 *    sorted); an import is globbed only if it holds '*';
 *  - 1.x replaces a whole plugin section with an imported file's
 *    (mergeConfig: `to.Plugins[k] = v`), so a drop-in holding only the
 *    handlers would drop the node's runc handler, sandbox image and CNI
 *    settings: ours carries the node's whole CRI section as containerd
 *    resolves it, less nothing, plus the handlers (config version 2);
 *  - 2.x merges imported files key by key (mergo), then migrates the
 *    merged config once, by its version, which the last file to set one
 *    decides: a version 3 drop-in under Debian's version 2 config.toml
 *    would leave the node's own CRI settings unmigrated and unused. Ours
 *    has the main config's version and only the handlers.
 *
 * Whatever the drop-in holds, `containerd config dump` is asked twice,
 * in a view of the drop-in's directory without it and with it as planned
 * (wiring_exec.c): the configs must differ in our handlers and nothing
 * else before anything is written.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "lib/cleanup.h"
#include "wiring/toml/toml.h"
#include "wiring/wiring.h"
#include "wiring/wiring_ctd.h"
#include "wiring/wiring_ctd_dropin.h"
#include "wiring/wiring_ctd_import.h"
#include "wiring/wiring_ctd_node.h"
#include "wiring/wiring_exec.h"
#include "wiring/wiring_spec.h"

static const char *const handlers[] = SH_WIRING_HANDLERS;

int wiring_ctd_default(struct ctd *c, struct json_object **rt,
		       struct sh_error *err)
{
	const char *const name_key[] = { "default_runtime_name", NULL };
	const char *name;
	int r = wiring_ctd_node_dump(c, NULL, &c->before, err);

	if (r)
		return r;
	name = json_object_get_string(toml_get(
		toml_get(c->before, c->major == 1 ? wiring_ctd_node_cri_v2 :
						    wiring_ctd_node_cri_v3),
		name_key));
	if (!name ||
	    !json_object_object_get_ex(
		    wiring_ctd_node_runtimes(c->before, c->major), name, rt) ||
	    !json_object_is_type(*rt, json_type_object))
		return error_set(
			err, -ENOENT,
			"containerd's config has no default runtime handler (%s)",
			name ?: "default_runtime_name unset");
	for (int i = 0; i < SH_WIRING_NR_HANDLERS; i++)
		if (!strcmp(name, handlers[i]))
			return error_set(
				err, -EINVAL,
				"containerd's default runtime is '%s': the handlers of the hook copy the default one, choose another default",
				name);
	snprintf(c->default_name, sizeof(c->default_name), "%s", name);
	return 0;
}

int wiring_ctd_spec_source(struct ctd *c, struct json_object *rt, char **text,
			   bool *generated, struct sh_error *err)
{
	struct json_object *base = NULL;
	char *argv[] = { "ctr", "oci", "spec", NULL };
	const char *file;
	int r;

	json_object_object_get_ex(rt, "base_runtime_spec", &base);
	file = json_object_get_string(base);
	*generated = !file || !*file;
	if (*generated)
		return wiring_exec_run(argv, NULL, text, err);
	*text = wiring_read(file, &r);
	if (r)
		return error_errno(
			err, r,
			"cannot read the base_runtime_spec %.200s of handler %s",
			file, c->default_name);
	return 0;
}

int wiring_ctd_build(struct ctd *c, const struct wiring_hook *hook,
		     struct wiring_plan *plan, struct sh_error *err)
{
	struct json_object *rt = NULL;
	_cleanup_free_ char *source = NULL;
	_cleanup_json_ struct json_object *doc = NULL;
	char path[PATH_MAX];
	bool generated;
	int r = wiring_ctd_default(c, &rt, err) ?:
			wiring_ctd_spec_source(c, rt, &source, &generated, err);

	if (r)
		return r;
	for (int i = 0; i < SH_WIRING_NR_HANDLERS; i++) {
		char *text = NULL;

		r = wiring_spec_build(source, generated, handlers[i], hook,
				      c->o->keep_net_raw, &text, err);
		if (r)
			return r;
		wiring_ctd_node_spec_path(c, handlers[i], path, sizeof(path));
		r = wiring_plan_write(plan, path, text, 0644, err);
		if (r)
			return r;
	}
	r = wiring_ctd_dropin_build(c, rt, &doc, err);
	if (r)
		return r;
	return wiring_ctd_dropin_plan(c, doc, plan, err) ?:
		       wiring_ctd_import_plan(c, plan, err);
}

int wiring_ctd_configure(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 struct wiring_plan *plan, struct sh_error *err)
{
	struct ctd c = { 0 };
	int r = wiring_ctd_import_open(&c, o, err) ?:
			wiring_ctd_build(&c, hook, plan, err);

	if (r)
		goto out;
	wiring_plan_note(plan,
			 "containerd %d.x, %s (config version %d) imports %s",
			 c.major, c.main_path, c.main_version, c.dropin);
out:
	wiring_ctd_node_close(&c);
	return r;
}

/* Ours to remove: a drop-in that starts with our mark. */
static int remove_dropin(const struct ctd *c, struct wiring_plan *plan,
			 struct sh_error *err)
{
	_cleanup_free_ char *text = wiring_read(c->dropin, &(int){ 0 });

	if (text && strncmp(text, SH_WIRING_MARK, strlen(SH_WIRING_MARK)))
		return error_set(
			err, -EPERM,
			"%s was not written by runtime configure: left alone",
			c->dropin);
	return wiring_plan_remove(plan, c->dropin, err);
}

int wiring_ctd_unconfigure(const struct wiring_opts *o,
			   struct wiring_plan *plan, struct sh_error *err)
{
	struct ctd c = { 0 };
	struct sh_error ignored = { 0 };
	char path[PATH_MAX];
	int r;

	/* Whatever the main config says now, the files of ours go. */
	if (wiring_ctd_node_open(&c, o, &ignored) && !c.dropin[0]) {
		if (!c.main_dir[0])
			return error_set(err, ignored.code ?: -EINVAL, "%s",
					 ignored.msg);
		snprintf(path, sizeof(path), "%s/conf.d/" SH_WIRING_CTD_DROPIN,
			 c.main_dir);
		wiring_ctd_node_set_dropin(&c, o->drop_in ?: path);
	}
	r = remove_dropin(&c, plan, err) ?:
		    wiring_ctd_import_undo(&c, SH_WIRING_CTD_FALLBACK_DROPIN,
					   plan, err);
	wiring_plan_prune(plan, c.spec_dir);
	for (int i = 0; !r && i < SH_WIRING_NR_HANDLERS; i++) {
		wiring_ctd_node_spec_path(&c, handlers[i], path, sizeof(path));
		r = wiring_plan_remove(plan, path, err);
	}
	wiring_ctd_node_close(&c);
	return r;
}
