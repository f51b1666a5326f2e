/* SPDX-License-Identifier: GPL-2.0-only */
/* The CDI spec of kind sockopt-hook.io/policy (wiring_cdi.c, container.h). */
#ifndef SH_WIRING_CDI_H
#define SH_WIRING_CDI_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

struct sh_config;
struct wiring_hook;
struct wiring_opts;
struct wiring_plan;

/* The devices cfg offers, in the spec's order, for the spec and for
 * `validate`: fn(name, arg) per device (policy names, then SH_CDI_BYPASS);
 * skipped(policy, why, arg) per policy a workload may name that cannot be
 * a device. Returns how many devices. */
int wiring_cdi_devices(const struct sh_config *cfg,
		       void (*fn)(const char *name, void *arg),
		       void (*skipped)(const char *policy, const char *why,
				       void *arg),
		       void *arg);
/* The spec as JSON text (*text, malloc'd): -ENOENT (one line in err) when
 * cfg offers no device. */
int wiring_cdi_text(const struct sh_config *cfg, const struct wiring_hook *hook,
		    char **text, struct sh_error *err);
/* Whether text is a spec of ours (its kind). */
bool wiring_cdi_is_ours(const char *text);
/* The hook a spec of ours runs: its path and env (KEY=VALUE), copied into
 * path and env (each malloc'd, *nr_env of them, at most max): 0, or
 * -ENOENT for a spec with no hook of ours. */
int wiring_cdi_hook_of(const char *text, char **path, char **env, int max,
		       int *nr_env);
/* Whether the spec text offers exactly the devices cfg gives. */
bool wiring_cdi_same_devices(const char *text, const struct sh_config *cfg);
/* Where the spec goes: SH_CDI_ETC, or --cdi-dir. */
void wiring_cdi_path(const struct wiring_opts *o, char *buf, size_t len);
int wiring_cdi_configure(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 const struct sh_config *cfg, struct wiring_plan *plan,
			 struct sh_error *err);
int wiring_cdi_unconfigure(const struct wiring_opts *o,
			   struct wiring_plan *plan, struct sh_error *err);

#endif /* SH_WIRING_CDI_H */
