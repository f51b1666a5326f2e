/* SPDX-License-Identifier: GPL-2.0-only */
/* containerd's NRI settings and the NRI fallback (wiring_ctd_nri.c). */
#ifndef SH_WIRING_CTD_NRI_H
#define SH_WIRING_CTD_NRI_H

#include "lib/error.h"

struct json_object;
struct wiring_hook;
struct wiring_nri;
struct wiring_opts;
struct wiring_plan;

/* n from a `containerd config dump`; a runtime whose NRI cannot serve the
 * plugin is refused, in one line saying what to change in main_path. */
int wiring_ctd_nri_settings(struct json_object *dump, const char *version,
			    const char *main_path, struct wiring_nri *n,
			    struct sh_error *err);
/* The same from the node's containerd. */
int wiring_ctd_nri_read(const struct wiring_opts *o, struct wiring_nri *n,
			struct sh_error *err);
/* The default handler's base spec with the hook, and its drop-in. */
int wiring_ctd_nri_fallback(const struct wiring_opts *o,
			    const struct wiring_hook *hook,
			    struct wiring_plan *plan, struct sh_error *err);
int wiring_ctd_nri_unfallback(const struct wiring_opts *o,
			      struct wiring_plan *plan, struct sh_error *err);

#endif /* SH_WIRING_CTD_NRI_H */
