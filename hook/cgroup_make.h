/* SPDX-License-Identifier: GPL-2.0-only */
/* Creating, joining and removing the hook's own cgroups. */
#ifndef SH_CGROUP_MAKE_H
#define SH_CGROUP_MAKE_H

#include "cgroup.h"

/* No child cgroup of this one holds a process. */
int cg_children_idle(int cg_fd, bool *idle);
/*
 * Makes <t->rel>/oci-sockopt-hook-<id> and moves pid into it; t then names
 * the new cgroup (parent_rel the old one, created set). Returns the new
 * cgroup's fd, or -errno with nothing left behind.
 */
int cg_make_own(const struct cg_root *root, pid_t pid, const char *id,
		struct cg_target *t);
int cg_move_pid(const struct cg_root *root, const char *rel, pid_t pid);

#endif /* SH_CGROUP_MAKE_H */
