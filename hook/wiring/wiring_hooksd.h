/* SPDX-License-Identifier: GPL-2.0-only */
/* The hooks.d file for podman and CRI-O: ours written, the node's scanned. */
#ifndef SH_WIRING_HOOKSD_H
#define SH_WIRING_HOOKSD_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

struct sh_config;
struct wiring_hook;
struct wiring_opts;
struct wiring_plan;

/* The file's JSON text (malloc'd), or NULL. */
char *wiring_hooksd_text(const struct wiring_hook *hook, bool always);
/* Where it goes: --hooks-dir, or the one directory podman 5 and CRI-O
 * read with no hooks_dir set. */
void wiring_hooksd_path(const struct wiring_opts *o, char *buf, size_t len);
bool wiring_hooksd_is_ours(const char *text);
int wiring_hooksd_configure(const struct wiring_opts *o,
			    const struct wiring_hook *hook,
			    const struct sh_config *cfg,
			    struct wiring_plan *plan, struct sh_error *err);
/* The file at path, for every container or annotated ones, into plan. */
int wiring_hooksd_plan(const char *path, const struct wiring_hook *hook,
		       bool always, struct wiring_plan *plan,
		       struct sh_error *err);
/* The file at path out of plan, if it runs our hook (else refused). */
int wiring_hooksd_remove(const char *path, struct wiring_plan *plan,
			 struct sh_error *err);
int wiring_hooksd_unconfigure(const struct wiring_opts *o,
			      struct wiring_plan *plan, struct sh_error *err);

/* Where podman and CRI-O read hooks.d files by default, and where
 * `make install` puts ours ($(PREFIX)/share/containers/oci/hooks.d). */
#define SH_HOOKSD_SYSTEM "/usr/share/containers/oci/hooks.d"
#define SH_HOOKSD_ETC "/etc/containers/oci/hooks.d"
#ifndef SH_HOOKSD_PREFIX
#define SH_HOOKSD_PREFIX "/usr/local/share/containers/oci/hooks.d"
#endif

/* What the hooks.d files for this hook (hook.path ending in
 * /oci-sockopt-hook, schema 1.0.0) in some directories would do. */
struct hooksd_report {
	int found; /* files for this hook */
	int nr_narrow; /* of those, files that skip some containers */
	int nr_handler; /* narrow files that match the runtime handler key */
	char narrow[768]; /* "FILE (why)", the first ones, ", "-separated */
};

/* Scans each directory's *.json files; a missing directory is empty. */
void wiring_hooksd_scan(const char *const *dirs, size_t nr,
			struct hooksd_report *rep);

#endif /* SH_WIRING_HOOKSD_H */
