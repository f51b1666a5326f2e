/* SPDX-License-Identifier: GPL-2.0-only */
/* The hook added to a bundle's config.json (wiring_bundle.c). */
#ifndef SH_WIRING_BUNDLE_H
#define SH_WIRING_BUNDLE_H

#include <stdbool.h>

#include "lib/error.h"

struct json_object;
struct wiring_hook;

/* Adds hook as spec's createRuntime and poststop entries, unless an
 * entry of ours is in prestart or createRuntime already (a CDI device's,
 * a base spec's): whether spec changed, or -ENOMEM. */
int wiring_bundle_hooks(struct json_object *spec,
			const struct wiring_hook *hook);
/* The same for bundle/config.json, written back through a temp file and
 * a rename when it changed. */
int wiring_bundle_add(const char *bundle, const struct wiring_hook *hook,
		      struct sh_error *err);
/* In runc's command line (its global options, then the verb and its
 * own), the verb's index, or -1; for `create`, the bundle directory
 * (--bundle, -b, else "."). */
int wiring_bundle_verb(int argc, char *const *argv, const char **bundle);

#endif /* SH_WIRING_BUNDLE_H */
