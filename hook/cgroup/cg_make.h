/* SPDX-License-Identifier: GPL-2.0-only */
/* Creating, joining and removing the hook's own cgroups. */
#ifndef SH_CG_MAKE_H
#define SH_CG_MAKE_H

#include "cgroup/cg.h"

/*
 * Makes <t->rel>/oci-sockopt-hook-<id> and moves pid into it; t then names
 * the new cgroup (parent_rel the old one, created set). Returns the new
 * cgroup's fd, or -errno with nothing left behind.
 */
int cg_make_own(const struct cg_root *root, pid_t pid, const char *id,
		struct cg_target *t, struct sh_error *err);
int cg_make_move_pid(const struct cg_root *root, const char *rel, pid_t pid,
		     struct sh_error *err);
/* rmdir, waiting a while for exiting tasks to let go of the cgroup. */
int cg_make_remove(const struct cg_root *root, const char *rel,
		   struct sh_error *err);
/* Moves pid back to where it was and removes the cgroup the hook made. */
int cg_make_undo(const struct cg_root *root, struct cg_target *t, pid_t pid,
		 struct sh_error *err);

#endif /* SH_CG_MAKE_H */
