/* SPDX-License-Identifier: GPL-2.0-only */
/* The hook's entries in an OCI spec: the base runtime spec of a containerd
 * handler that runs the hook, and a bundle's config.json (runtime-exec). */
#ifndef SH_WIRING_SPEC_H
#define SH_WIRING_SPEC_H

#include <stdbool.h>

#include "lib/error.h"

struct json_object;

/* What the runtime runs: the binary and its environment (KEY=VALUE). */
struct wiring_hook {
	const char *path;
	const char *const *env;
	int nr_env;
};

/* One OCI hooks entry for stage (args: the ident and stage), or NULL. */
struct json_object *wiring_spec_hook(const struct wiring_hook *hook,
				     const char *stage);

/*
 * The handler's base spec as JSON text (*text, malloc'd): source is the
 * spec containerd gives the default handler's containers, made by
 * `ctr oci spec` (generated) or that handler's own base_runtime_spec
 * file; see wiring_spec.c for what changes and why. handler NULL: no
 * handler's name (the NRI fallback's default handler).
 */
int wiring_spec_build(const char *source, bool generated, const char *handler,
		      const struct wiring_hook *hook, bool keep_net_raw,
		      char **text, struct sh_error *err);

/* The hook added to a bundle's config.json (wiring_spec.c). */

struct json_object;
struct wiring_hook;

/* Adds hook as spec's createRuntime and poststop entries, unless an
 * entry of ours is in prestart or createRuntime already (a CDI device's,
 * a base spec's): whether spec changed, or -ENOMEM. */
int wiring_spec_bundle_hooks(struct json_object *spec,
			     const struct wiring_hook *hook);
/* The same for bundle/config.json, written back through a temp file and
 * a rename when it changed. */
int wiring_spec_bundle_add(const char *bundle, const struct wiring_hook *hook,
			   struct sh_error *err);
/* In runc's command line (its global options, then the verb and its
 * own), the verb's index, or -1; for `create`, the bundle directory
 * (--bundle, -b, else "."). */
int wiring_spec_bundle_verb(int argc, char *const *argv, const char **bundle);

#endif /* SH_WIRING_SPEC_H */
