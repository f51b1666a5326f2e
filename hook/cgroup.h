/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_CGROUP_H
#define SH_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SH_CGROUP_PREFIX "oci-sockopt-hook-"

struct cg_root {
	char mount[PATH_MAX]; /* where cgroup2 is mounted */
	bool hybrid; /* v1 hierarchies are mounted too */
};

/* Where a container's programs go, and whether the hook made it. */
struct cg_target {
	char rel[PATH_MAX]; /* below the cgroup2 mount, starts with '/' */
	char abs[PATH_MAX];
	uint64_t id; /* cgroup id (inode) */
	bool created;
	char parent_rel[PATH_MAX]; /* where init was, when created */
};

int cg_find_root(struct cg_root *root);
int cg_pid_path(pid_t pid, char *rel, size_t len);
int cg_resolve(const struct cg_root *root, pid_t pid, const char *id,
	       struct cg_target *target);
int cg_undo(const struct cg_root *root, struct cg_target *target, pid_t pid);
int cg_remove(const struct cg_root *root, const char *rel);
int cg_populated(const char *abs, bool *populated);
int cg_id(const char *abs, uint64_t *id);
int cg_open(const char *abs);

#endif /* SH_CGROUP_H */
