/* SPDX-License-Identifier: GPL-2.0-only */
/* Finding, opening and reading a container's cgroup v2 directory. */
#ifndef SH_CG_H
#define SH_CG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "input/oci.h"
#include "lib/error.h"

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

int cg_find_root(struct cg_root *root, struct sh_error *err);
/* The mount joined with rel ("/" is the mount itself); -ENAMETOOLONG. */
int cg_path(const struct cg_root *root, const char *rel, char *buf, size_t len);
int cg_pid_path(pid_t pid, char *rel, size_t len, struct sh_error *err);
/*
 * The cgroup pid is in, opened once: target's id is that fd's, and every
 * later look at the cgroup goes through it, so a path that comes to name
 * another cgroup cannot mislead us. Returns the fd or -errno; dedicated
 * tells whether only pid is in it (never for the root cgroup).
 */
int cg_locate(const struct cg_root *root, pid_t pid, struct cg_target *target,
	      bool *dedicated, struct sh_error *err);
/* Opens root->mount + t->rel into t->abs and sets t->id: the fd or -errno. */
int cg_open_target(const struct cg_root *root, struct cg_target *t,
		   struct sh_error *err);
/*
 * Opens a recorded cgroup: the fd, -ENOENT when it is gone, -ESTALE when
 * its path now names another cgroup.
 */
int cg_open_attached(const struct cg_target *t);
/* 0 when pid is still in t (same path, same cgroup id). */
int cg_pid_inside(const struct cg_root *root, pid_t pid,
		  const struct cg_target *t, struct sh_error *err);
int cg_populated(const char *abs, bool *populated);
int cg_populated_at(int cg_fd, bool *populated);

enum cg_choice {
	CG_USE_OWN, /* the runtime gave the container a cgroup of its own */
	CG_MAKE_OWN, /* the hook makes <cgroup>/oci-sockopt-hook-<id> */
};

/*
 * What prestart does for a container whose init is in cgroup rel, which is
 * dedicated to it or not: a cg_choice, or -EPERM (with why) when it is
 * refused: on_shared_cgroup, or a writable way into the cgroup2 tree the
 * container could use to leave the policed cgroup (a cgroup namespace of
 * its own contains a cgroup2 mount made for it, and a bind of the host's
 * tree only while the hierarchy has nsdelegate).
 */
int cg_choice_decide(const struct sh_config *cfg, const struct oci_state *st,
		     const char *cg2_mount, const char *rel, bool dedicated,
		     struct sh_error *err);
struct mountinfo;
/* The same, with mountinfo from mi (fixed text in tests). */
int cg_choice_decide_in(const struct sh_config *cfg, const struct oci_state *st,
			const char *cg2_mount, struct mountinfo *mi,
			const char *rel, bool dedicated, struct sh_error *err);
/*
 * The cgroup prestart attaches to, opened once (the fd), made by the hook
 * if need be (t->created), or -errno.
 */
int cg_choice_take(const struct sh_config *cfg, const struct oci_state *st,
		   const struct cg_root *root, struct cg_target *t,
		   struct sh_error *err);

/* Creating, joining and removing the hook's own cgroups. */

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

#endif /* SH_CG_H */
