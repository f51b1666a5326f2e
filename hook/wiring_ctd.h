/* SPDX-License-Identifier: GPL-2.0-only */
/* containerd's wiring: `runtime configure` and `unconfigure` (wiring_ctd.c). */
#ifndef SH_WIRING_CTD_H
#define SH_WIRING_CTD_H

#include "error.h"

struct wiring_hook;
struct wiring_opts;
struct wiring_plan;

/* The base specs and the drop-in, into plan; the files of ours out. */
int wiring_ctd_configure(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 struct wiring_plan *plan, struct sh_error *err);
int wiring_ctd_unconfigure(const struct wiring_opts *o,
			   struct wiring_plan *plan, struct sh_error *err);

#endif /* SH_WIRING_CTD_H */
