/* SPDX-License-Identifier: GPL-2.0-only */
/* What the bundle lets a container do to its own cgroup membership. */
#ifndef SH_BUNDLE_H
#define SH_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <limits.h>

#include "input/oci.h"

/* Why a mount is writable: it names two paths (source and mount point). */
#define SH_BUNDLE_WHY_MAX (2 * PATH_MAX + 160)

struct mountinfo;

/* What the container's mounts reach of the cgroup2 hierarchy, writable. */
struct bundle_cg_reach {
	/* a cgroup or cgroup2 mount made for it without "ro" */
	bool fresh;
	/*
	 * a bind (without "ro") whose source is on a cgroup2 file system, or a
	 * recursive bind (without "rro") of a directory with a cgroup2 mount
	 * below it in mountinfo, or whose mounts cannot be listed
	 */
	bool bound;
	char why[SH_BUNDLE_WHY_MAX]; /* the first bind, else the first mount */
};

/*
 * Which of the bundle's mounts reach the cgroup2 tree writable. mi is
 * /proc/self/mountinfo, read only when a recursive bind needs it.
 * cg2_mount is the hook's cgroup2 mount, which stands in for the kernel's
 * answer only where a source cannot be looked at.
 */
void bundle_cgroup_reach(const struct oci_state *st, const char *cg2_mount,
			 struct mountinfo *mi, struct bundle_cg_reach *r);
/* The container gets a new cgroup namespace (not one joined by path). */
bool bundle_own_cgroupns(const struct oci_state *st);
/*
 * The process whose namespaces the container joins by a /proc/<pid>/ns/
 * path (a pod's sandbox: containerd writes the pause process's pid there
 * for the pod's ipc, uts and network namespaces, and for its pid
 * namespace unless the container targets another container's), the IPC
 * namespace's first, the pid namespace's last; 0 when it joins none that
 * way.
 */
pid_t bundle_joined_pid(const struct oci_state *st);

#endif /* SH_BUNDLE_H */
