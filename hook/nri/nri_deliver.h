/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the NRI plugin does to a container being created: the pod's
 * sockopt-hook.io/ keys that apply to it become its annotations, and the
 * hook joins its createRuntime and poststop hooks. The hook does the work
 * and decides everything (refusals included); the plugin only delivers.
 */
#ifndef SH_NRI_DELIVER_H
#define SH_NRI_DELIVER_H

#include <stdbool.h>

#include "lib/sh_types.h"
#include "nri/nri_api.h"

/* SH_ANNOTATION_NRI is set on every container the plugin handled: the
 * hook's require_annotations.nri tells a container the plugin never saw by
 * its absence. Outside sockopt-hook.io/, so no pod key is copied over it,
 * and the plugin's value replaces any copy CRI-O made of a pod's. */
#define NRI_DELIVER_MARK_VALUE "delivered"

struct nri_deliver_config {
	/* Hooks for every workload container, keys or not: the operator
	 * config has defaults or require_annotations, or it cannot be
	 * read (the hook then refuses with its reason). */
	bool every_container;
	const char *hook_path; /* the hook binary, a host path */
	const char *config_arg; /* --config for the hook, or NULL */
	/* The plugin attaches at StartContainer: only the poststop hook,
	 * which cleans up as it does after the createRuntime one. */
	bool plugin_attaches;
	/* The hooks' environment ("NAME=value"): the state, pin and keys
	 * directories the plugin itself was given, so that the hook it
	 * delivers keeps the attachments where the plugin does (a runtime runs
	 * a hook with only the environment its spec names). */
	char *const *hook_env;
	size_t n_hook_env;
};

/* An adjustment and everything it points into. */
struct nri_delivery {
	nri_adjustment adjust;
	nri_hooks hooks;
	nri_hook stage_hooks[2]; /* createRuntime, poststop */
	nri_hook *create_runtime[1], *poststop[1];
	char *args[2][5];
	nri_adjustment_annotation *entries;
	nri_adjustment_annotation **entry_ptrs;
	size_t nr_copied; /* pod keys copied */
	bool hooked; /* hooks added (or already there) */
};

/* Whether a pod annotation key applies to the container named name:
 * sockopt-hook.io/ keys, but KEY.<other container> only for that one. */
bool nri_deliver_applies(const char *key, const char *name);
/* Fills d (its adjust is the reply's); 0 or -ENOMEM. Pointers into pod,
 * container and cfg stay in d: free d before them. */
int nri_deliver_container(const struct nri_deliver_config *cfg,
			  const nri_pod *pod, const nri_container *ctr,
			  struct nri_delivery *d);
void nri_deliver_free(struct nri_delivery *d);

#endif /* SH_NRI_DELIVER_H */
