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

/*
 * The bundle gives the container a cgroup mount it can write through: a
 * cgroup/cgroup2 mount without "ro", a bind of the cgroup2 mount (or of
 * something in it) without "ro", or a recursive bind of a directory that
 * holds the cgroup2 mount without "rro". why names the mount.
 */
bool bundle_writable_cgroup_mount(const struct oci_state *st,
				  const char *cg2_mount, char *why, size_t len);
/* The container gets a new cgroup namespace (not one joined by path). */
bool bundle_own_cgroupns(const struct oci_state *st);
/*
 * The process whose namespaces the container joins by a /proc/<pid>/ns/
 * path (a pod's sandbox: containerd writes the pause process's pid there
 * for the pod's pid, ipc, uts and network namespaces), the pid namespace's
 * first; 0 when it joins none that way.
 */
pid_t bundle_joined_pid(const struct oci_state *st);

#endif /* SH_BUNDLE_H */
