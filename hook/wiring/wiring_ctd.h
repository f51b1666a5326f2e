/* SPDX-License-Identifier: GPL-2.0-only */
/* containerd's wiring: `runtime configure` and `unconfigure` (wiring_ctd.c). */
#ifndef SH_WIRING_CTD_H
#define SH_WIRING_CTD_H

#include <stdbool.h>

#include "lib/error.h"

struct ctd;
struct json_object;
struct wiring_hook;
struct wiring_opts;
struct wiring_plan;

/* The base specs and the drop-in, into plan; the files of ours out. */
int wiring_ctd_configure(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 struct wiring_plan *plan, struct sh_error *err);
int wiring_ctd_unconfigure(const struct wiring_opts *o,
			   struct wiring_plan *plan, struct sh_error *err);

/* The default handler's section in the dump without our drop-in (the
 * dump kept in c->before, the name in c->default_name). */
int wiring_ctd_default(struct ctd *c, struct json_object **rt,
		       struct sh_error *err);
/* The spec containerd gives the default handler's containers: its own
 * base_runtime_spec file, or `ctr oci spec` (generated). */
int wiring_ctd_spec_source(struct ctd *c, struct json_object *rt, char **text,
			   bool *generated, struct sh_error *err);

#endif /* SH_WIRING_CTD_H */
