/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `runtime configure --nri MODE` (wiring_nri.c): the NRI plugin wired the
 * way `make install NRI=service|plugin` does, after the runtime's own
 * config says NRI is on; the fail-closed fallback is the runtime's part.
 */
#ifndef SH_WIRING_NRI_H
#define SH_WIRING_NRI_H

#include <limits.h>
#include <stdbool.h>

#include "lib/error.h"

struct sh_config;
struct wiring_hook;
struct wiring_opts;
struct wiring_plan;

#define SH_WIRING_NRI_UNIT "oci-sockopt-hook-nri.service"
#define SH_WIRING_NRI_UNIT_DIR "/etc/systemd/system"
#define SH_WIRING_NRI_LINK "50-oci-sockopt-hook"
#define SH_WIRING_NRI_SOCKET "/var/run/nri/nri.sock"
#define SH_WIRING_NRI_PLUGIN_DIR "/opt/nri/plugins"

/* What a runtime's effective config says of its NRI (the runtime's
 * reader fills it, and refuses what no mode can work with). */
struct wiring_nri {
	char runtime[64]; /* "containerd 2.x", for the notes */
	bool connections; /* plugins may connect to the socket */
	char socket[PATH_MAX];
	char plugin_dir[PATH_MAX]; /* pre-registered plugins */
	char connect_fix[256]; /* the change that allows connections */
};

/* The plugin's files in plan for o->nri (service: the unit; plugin: the
 * link; pod: none), the other modes' files of ours out. */
int wiring_nri_configure(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 const struct sh_config *cfg,
			 const struct wiring_nri *n, struct wiring_plan *plan,
			 struct sh_error *err);
/* Every file of ours of the plugin (n may be NULL: the defaults). */
int wiring_nri_unconfigure(const struct wiring_opts *o,
			   const struct wiring_nri *n, struct wiring_plan *plan,
			   struct sh_error *err);
/* Around the plan's writing: our unit stopped before it is removed;
 * reloaded, enabled and (re)started after it is written. */
int wiring_nri_before(const struct wiring_opts *o, struct wiring_plan *plan,
		      struct sh_error *err);
int wiring_nri_after(const struct wiring_opts *o, struct wiring_plan *plan,
		     struct sh_error *err);
/* The unit's text (malloc'd): the example's, for this hook and config. */
char *wiring_nri_unit_text(const char *hook, const char *config,
			   const char *socket);

#endif /* SH_WIRING_NRI_H */
