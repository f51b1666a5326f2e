/* SPDX-License-Identifier: GPL-2.0-only */
/* The base runtime spec of a containerd handler that runs the hook. */
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

#endif /* SH_WIRING_SPEC_H */
