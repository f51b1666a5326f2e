/* SPDX-License-Identifier: GPL-2.0-only */
/* CRI-O's wiring: a crio.conf.d drop-in and the hooks.d file. */
#ifndef SH_WIRING_CRIO_H
#define SH_WIRING_CRIO_H

#include "lib/error.h"

struct json_object;
struct sh_config;
struct wiring_hook;
struct wiring_nri;
struct wiring_opts;
struct wiring_plan;

int wiring_crio_configure(const struct wiring_opts *opts,
			  const struct wiring_hook *hook,
			  const struct sh_config *cfg, struct wiring_plan *plan,
			  struct sh_error *err);
int wiring_crio_unconfigure(const struct wiring_opts *o,
			    struct wiring_plan *plan, struct sh_error *err);

/* CRI-O's NRI from its `crio config` (dir: its crio.conf.d, for the
 * one line that says what to change); the fallback's hooks.d file. */
int wiring_crio_nri_settings(struct json_object *cfg, const char *dir,
			     struct wiring_nri *n, struct sh_error *err);
int wiring_crio_nri_read(const struct wiring_opts *o, struct wiring_nri *n,
			 struct sh_error *err);
int wiring_crio_nri_fallback(const struct wiring_opts *o,
			     const struct wiring_hook *hook,
			     struct wiring_plan *plan, struct sh_error *err);
int wiring_crio_nri_unfallback(const struct wiring_opts *o,
			       struct wiring_plan *plan, struct sh_error *err);

#endif /* SH_WIRING_CRIO_H */
