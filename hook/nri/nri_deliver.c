// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NRI plugin's adjustment of a container being created (nri_deliver.h).
 *
 * What the runtimes hand the plugin (containerd 2.1 internal/cri/nri/
 * nri_api_linux.go): the pod's annotations are the CRI sandbox config's
 * (every pod annotation, the pod author's) overlaid with the sandbox
 * spec's; the container's name is containerd's own
 * io.kubernetes.cri.container-name key. The adjustment's annotations are
 * written into the container's OCI spec (containerd/nri pkg/adaptation/
 * result.go: adjustAnnotations), its hooks appended to the spec's
 * (adjustHooks). So the hook reads the pod's keys exactly as it does when
 * a runtime handler's pod_annotations passes them, and keeps deciding
 * what they may do.
 *
 * Only sockopt-hook.io/ keys are copied: node.sockopt-hook.io/ keys are
 * the operator's (a handler's base spec), and a pod must never set them.
 * KEY.<name> goes to container <name> only, as the hook would read it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "input/oci.h"
#include "lib/cleanup.h"
#include "nri/nri_deliver.h"

#define POD_PREFIX "sockopt-hook.io/"

/* The keys that have a KEY.<container name> form (policy.c). */
static const char *const scoped_keys[] = {
	SH_ANNOTATION_POLICY,
	SH_ANNOTATION_BYPASS,
	SH_ANNOTATION_RECORD,
	SH_ANNOTATION_MODE,
};

bool nri_deliver_applies(const char *key, const char *name)
{
	if (strncmp(key, POD_PREFIX, strlen(POD_PREFIX)))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(scoped_keys); i++) {
		size_t len = strlen(scoped_keys[i]);

		if (!strncmp(key, scoped_keys[i], len) && key[len] == '.')
			return name && !strcmp(key + len + 1, name);
	}
	return true;
}

/* Whether the container already runs the hook at that stage, as a
 * handler's base spec or a hooks.d file may have arranged. */
static bool has_hook(nri_hook **hooks, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (hooks[i]->path && !strcmp(hooks[i]->path, path))
			return true;
	return false;
}

static void set_hook(struct nri_delivery *d, int i,
		     const struct nri_deliver_config *cfg, const char *stage)
{
	nri_hook *h = &d->stage_hooks[i];
	size_t n = 0;

	nri__pkg__api__v1alpha1__hook__init(h);
	h->path = (char *)cfg->hook_path;
	d->args[i][n++] = "oci-sockopt-hook";
	if (cfg->config_arg) {
		d->args[i][n++] = "--config";
		d->args[i][n++] = (char *)cfg->config_arg;
	}
	d->args[i][n++] = (char *)stage;
	h->args = d->args[i];
	h->n_args = n;
	h->env = (char **)cfg->hook_env;
	h->n_env = cfg->n_hook_env;
}

static void add_hooks(struct nri_delivery *d,
		      const struct nri_deliver_config *cfg,
		      const nri_container *ctr)
{
	const nri_hooks *have = ctr->hooks;
	/* prestart and createRuntime both attach (the hook treats them
	 * alike): either one already there is enough */
	bool create =
		!cfg->plugin_attaches &&
		(!have ||
		 (!has_hook(have->create_runtime, have->n_create_runtime,
			    cfg->hook_path) &&
		  !has_hook(have->prestart, have->n_prestart, cfg->hook_path)));
	bool stop = !have ||
		    !has_hook(have->poststop, have->n_poststop, cfg->hook_path);

	d->hooked = true;
	if (!create && !stop)
		return;
	nri__pkg__api__v1alpha1__hooks__init(&d->hooks);
	if (create) {
		set_hook(d, 0, cfg, "createRuntime");
		d->create_runtime[0] = &d->stage_hooks[0];
		d->hooks.create_runtime = d->create_runtime;
		d->hooks.n_create_runtime = 1;
	}
	if (stop) {
		set_hook(d, 1, cfg, "poststop");
		d->poststop[0] = &d->stage_hooks[1];
		d->hooks.poststop = d->poststop;
		d->hooks.n_poststop = 1;
	}
	d->adjust.hooks = &d->hooks;
}

static void add_entry(struct nri_delivery *d, const char *key,
		      const char *value)
{
	nri_adjustment_annotation *e = &d->entries[d->adjust.n_annotations];

	nri__pkg__api__v1alpha1__container_adjustment__annotations_entry__init(
		e);
	e->key = (char *)key;
	e->value = (char *)value;
	d->entry_ptrs[d->adjust.n_annotations++] = e;
}

int nri_deliver_container(const struct nri_deliver_config *cfg,
			  const nri_pod *pod, const nri_container *ctr,
			  struct nri_delivery *d)
{
	size_t n = pod ? pod->n_annotations : 0;
	const char *name = ctr->name && ctr->name[0] ? ctr->name : NULL;

	memset(d, 0, sizeof(*d));
	nri__pkg__api__v1alpha1__container_adjustment__init(&d->adjust);
	/* the pod's keys that apply, and the mark */
	d->entries = calloc(n + 1, sizeof(*d->entries));
	d->entry_ptrs = calloc(n + 1, sizeof(*d->entry_ptrs));
	if (!d->entries || !d->entry_ptrs) {
		nri_deliver_free(d);
		return -ENOMEM;
	}
	d->adjust.annotations = d->entry_ptrs;
	for (size_t i = 0; i < n; i++) {
		const nri_pod_annotation *a = pod->annotations[i];

		if (!a->key || !a->value || !nri_deliver_applies(a->key, name))
			continue;
		add_entry(d, a->key, a->value);
		d->nr_copied++;
	}
	add_entry(d, SH_ANNOTATION_NRI, NRI_DELIVER_MARK_VALUE);
	if (d->nr_copied || cfg->every_container)
		add_hooks(d, cfg, ctr);
	return 0;
}

void nri_deliver_free(struct nri_delivery *d)
{
	free(d->entries);
	free(d->entry_ptrs);
	memset(d, 0, sizeof(*d));
}
