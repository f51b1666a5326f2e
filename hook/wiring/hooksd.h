/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_HOOKSD_H
#define SH_HOOKSD_H

#include <stddef.h>

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
void hooksd_scan(const char *const *dirs, size_t nr, struct hooksd_report *rep);

#endif /* SH_HOOKSD_H */
