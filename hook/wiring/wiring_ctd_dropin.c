// SPDX-License-Identifier: GPL-2.0-only
/*
 * containerd's drop-in (wiring_ctd_dropin.h): the handlers sockopt and
 * sockopt-bypass, each a copy of the node's default handler (runtime
 * type, binary, cgroup driver and every other option, so their pods run
 * as the node's other pods do) with our base runtime spec and
 * pod_annotations that let sockopt-hook.io/ keys through. A glob of the
 * default handler that would let a pod set SH_WIRING_HANDLER_KEY, which
 * only the base spec may, is left out.
 *
 * Before the plan takes the file, containerd's own loader reads the
 * node's config with it (wiring_ctd_node_dump): the result must be the config
 * without it plus exactly our two handlers. A file imported after ours
 * that replaces the CRI section (1.x), a handler of the same name
 * configured elsewhere (2.x merges it with ours), or a drop-in that
 * containerd reads differently than we wrote it: each stops configure
 * with the first difference.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>

#include "lib/cleanup.h"
#include "wiring/toml/toml.h"
#include "wiring/toml/toml_write.h"
#include "wiring/wiring.h"
#include "wiring/wiring_ctd_dropin.h"
#include "wiring/wiring_ctd_node.h"

#define POD_ANNOTATIONS "sockopt-hook.io/*"
#define DIFF_PATH_MAX 256

static const char *const handlers[] = SH_WIRING_HANDLERS;

/* The default's pod_annotations, less a glob that passes our node key,
 * with ours added. */
static struct json_object *pod_annotations(struct json_object *old)
{
	struct json_object *list = json_object_new_array();

	for (size_t i = 0; list && json_object_is_type(old, json_type_array) &&
			   i < json_object_array_length(old);
	     i++) {
		const char *g = json_object_get_string(
			json_object_array_get_idx(old, i));

		if (g && strcmp(g, POD_ANNOTATIONS) &&
		    fnmatch(g, SH_WIRING_HANDLER_KEY, FNM_PATHNAME))
			json_object_array_add(list, json_object_new_string(g));
	}
	if (list)
		json_object_array_add(list,
				      json_object_new_string(POD_ANNOTATIONS));
	return list;
}

static struct json_object *handler_section(const struct ctd *c,
					   struct json_object *rt,
					   const char *handler)
{
	struct json_object *h = NULL, *old = NULL;
	char spec[PATH_MAX];

	if (json_object_deep_copy(rt, &h, NULL))
		return NULL;
	wiring_ctd_node_spec_path(c, handler, spec, sizeof(spec));
	json_object_object_get_ex(h, "pod_annotations", &old);
	if (json_object_object_add(h, "base_runtime_spec",
				   json_object_new_string(spec)) ||
	    json_object_object_add(h, "pod_annotations",
				   pod_annotations(old))) {
		json_object_put(h);
		return NULL;
	}
	return h;
}

/* obj[key], made an empty object when missing. */
static struct json_object *sub(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (obj && json_object_object_get_ex(obj, key, &v))
		return v;
	v = json_object_new_object();
	if (!v || !obj || json_object_object_add(obj, key, v)) {
		json_object_put(v);
		return NULL;
	}
	return v;
}

int wiring_ctd_dropin_build(const struct ctd *c, struct json_object *rt,
			    struct json_object **doc, struct sh_error *err)
{
	const char *plugin = c->major == 2 && c->main_version == 3 ?
				     "io.containerd.cri.v1.runtime" :
				     "io.containerd.grpc.v1.cri";
	struct json_object *d = json_object_new_object();
	struct json_object *cri = NULL, *runtimes;

	json_object_object_add(d, "version",
			       json_object_new_int(c->main_version));
	/* 1.x: the node's whole CRI section, which ours replaces. */
	if (c->major == 1 &&
	    json_object_deep_copy(
		    toml_get(c->before,
			     (const char *const[]){ "plugins", plugin, NULL }),
		    &cri, NULL) == 0)
		json_object_object_add(sub(d, "plugins"), plugin, cri);
	runtimes = sub(sub(sub(sub(d, "plugins"), plugin), "containerd"),
		       "runtimes");
	for (int i = 0; runtimes && i < SH_WIRING_NR_HANDLERS; i++) {
		struct json_object *h = handler_section(c, rt, handlers[i]);

		if (!h || json_object_object_add(runtimes, handlers[i], h)) {
			json_object_put(h);
			runtimes = NULL;
		}
	}
	if (!runtimes || (c->major == 1 && !cri)) {
		json_object_put(d);
		return error_set(err, -ENOMEM,
				 "runtime: cannot make the containerd drop-in");
	}
	*doc = d;
	return 0;
}

static char *render(const struct ctd *c, struct json_object *doc)
{
	return wiring_toml_text(
		doc,
		"# (`oci-sockopt-hook runtime unconfigure` removes it).\n"
		"# The runtime handlers sockopt and sockopt-bypass: copies of\n"
		"# the default handler '%s' whose base runtime specs in\n"
		"# %s/ carry the hook.\n%s",
		c->default_name, c->spec_dir,
		c->major == 1 ?
			"# containerd 1.x replaces a whole plugin section with an\n"
			"# imported file's: this one holds the node's CRI section as\n"
			"# containerd resolved it at configure time. Change CRI\n"
			"# settings in the main config, then run configure again.\n" :
			"");
}

/* A dump less what the drop-in may change: our handlers, the list of
 * files loaded. */
static struct json_object *comparable(const struct ctd *c,
				      struct json_object *dump)
{
	struct json_object *copy = NULL;

	if (json_object_deep_copy(dump, &copy, NULL))
		return NULL;
	json_object_object_del(copy, "imports");
	for (int i = 0; i < SH_WIRING_NR_HANDLERS; i++)
		json_object_object_del(wiring_ctd_node_runtimes(copy, c->major),
				       handlers[i]);
	return copy;
}

static int compare(const struct ctd *c, struct json_object *doc,
		   struct json_object *after, struct sh_error *err)
{
	_cleanup_json_ struct json_object *a = comparable(c, c->before);
	_cleanup_json_ struct json_object *b = comparable(c, after);
	struct json_object *want = wiring_ctd_node_runtimes(
		doc, c->major == 2 && c->main_version == 3 ? 2 : 1);
	char path[DIFF_PATH_MAX] = "";

	if (!a || !b)
		return error_set(err, -ENOMEM, "runtime: out of memory");
	if (wiring_ctd_node_differ(a, b, path, sizeof(path)))
		return error_set(
			err, -EINVAL,
			"containerd would load more than the handlers from %s: '%s' changes (a handler of that name configured elsewhere, or a file imported after it)",
			c->dropin, path);
	for (int i = 0; i < SH_WIRING_NR_HANDLERS; i++) {
		struct json_object *got = NULL, *exp = NULL;

		json_object_object_get_ex(wiring_ctd_node_runtimes(after,
								   c->major),
					  handlers[i], &got);
		json_object_object_get_ex(want, handlers[i], &exp);
		path[0] = '\0';
		if (!got ||
		    wiring_ctd_node_differ(exp, got, path, sizeof(path)))
			return error_set(
				err, -EINVAL,
				"containerd does not load handler %s as %s has it ('%s' differs): another file of its config sets it too, or one imported later replaces the CRI section",
				handlers[i], c->dropin, got ? path : "missing");
	}
	return 0;
}

int wiring_ctd_dropin_try(const struct ctd *c, const char *text,
			  struct wiring_plan *plan, struct json_object **after,
			  struct sh_error *err)
{
	bool made = false;
	int r;

	*after = NULL;
	if (access(c->dropin_dir, F_OK) && c->o->dry_run) {
		wiring_plan_note(
			plan,
			"not checked with `containerd config dump`: %s does not exist yet",
			c->dropin_dir);
		return 0;
	}
	/* The view needs the directory: it is ours to make now. */
	if (access(c->dropin_dir, F_OK)) {
		if (mkdir(c->dropin_dir, 0755) < 0)
			return error_errno(err, -errno, "cannot make %s",
					   c->dropin_dir);
		made = true;
	}
	r = wiring_ctd_node_dump(c, text, after, err);
	if (r && made)
		rmdir(c->dropin_dir);
	return r;
}

int wiring_ctd_dropin_plan(const struct ctd *c, struct json_object *doc,
			   struct wiring_plan *plan, struct sh_error *err)
{
	_cleanup_json_ struct json_object *after = NULL;
	char *text = render(c, doc);
	int r;

	if (!text)
		return error_set(
			err, -ENOMEM,
			"runtime: cannot write the containerd drop-in");
	r = wiring_ctd_dropin_try(c, text, plan, &after, err);
	if (!r && after)
		r = compare(c, doc, after, err);
	if (r) {
		free(text);
		return r;
	}
	return wiring_plan_write(plan, c->dropin, text, 0644, err);
}
