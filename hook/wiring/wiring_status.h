/* SPDX-License-Identifier: GPL-2.0-only */
/* Whether a runtime on this node runs the hook now, for `features`. */
#ifndef SH_WIRING_STATUS_H
#define SH_WIRING_STATUS_H

#include <stdbool.h>

struct wiring_state {
	bool installed; /* some runtime here runs the hook */
	bool containerd; /* containerd has handler sockopt, loaded */
	bool hooksd; /* a hooks.d file of ours where podman and CRI-O read
		      * (and, where CRI-O runs, its handler sockopt) */
	bool bypass_handler; /* the handler sockopt-bypass is there too */
	bool nri; /* the NRI plugin is registered with the runtime now */
	char nri_runtime[160]; /* to which: "name version", or "" */
	char why[512]; /* why each check failed ("; "-separated), or "" */
};

/* Checks containerd (its main config: containerd_config, or the default)
 * first, else the hooks.d file (in hooks_dirs, or the directories podman,
 * CRI-O and NRI read) and CRI-O's handlers; and, apart, the NRI plugin
 * (its lock and status in the state directory). */
void wiring_status_check(struct wiring_state *st, const char *containerd_config,
			 const char *const *hooks_dirs, int nr_hooks_dirs);

#endif /* SH_WIRING_STATUS_H */
