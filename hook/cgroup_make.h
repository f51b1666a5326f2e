/* SPDX-License-Identifier: GPL-2.0-only */
/* Creating, joining and removing the hook's own cgroups. */
#ifndef SH_CGROUP_MAKE_H
#define SH_CGROUP_MAKE_H

#include "cgroup.h"

int cg_children_idle(const char *abs, bool *idle);
int cg_make_child(const struct cg_root *root, pid_t pid, const char *id,
		  struct cg_target *target);
int cg_move_pid(const struct cg_root *root, const char *rel, pid_t pid);

#endif /* SH_CGROUP_MAKE_H */
