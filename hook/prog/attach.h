/* SPDX-License-Identifier: GPL-2.0-only */
/* Putting loaded programs on a cgroup, and taking ours off again. */
#ifndef SH_ATTACH_H
#define SH_ATTACH_H

#include <linux/bpf.h>

#include "config/config.h"
#include "lib/error.h"
#include "prog/load.h"
#include "state/state.h"

/* Attaches what load_policy() loaded to the cgroup cg_fd, whose id is
 * cg_id: all of it, or none on error. */
int attach_commit(int cg_fd, uint64_t cg_id, const struct sh_loaded *l,
		  struct sh_progs *ret, struct sh_error *err);
/* The attach types of what load_policy() loaded; returns how many. */
int attach_types(const struct sh_loaded *l,
		 enum bpf_attach_type types[SH_PROG_KINDS]);
/* Makes freshly loaded copies findable; call once the attachment is written,
 * so no index entry outlives a failed attach. */
void attach_publish(const struct sh_loaded *l, const struct sh_progs *ret);
/* Detaches those of the recorded programs that are still ours; err tells
 * the first that could not be. */
int attach_detach(int cg_fd, const struct sh_progs *progs,
		  struct sh_error *err);
/* Programs of ours attached directly to this cgroup (not inherited). */
int attach_query_ours(int cg_fd, struct sh_progs *found);

/*
 * Before we attach programs of these types to the cgroup (cg_fd, rel below
 * the cgroup2 mount): refuses (err) when the kernel would refuse
 * our attach because of a non-multi program on the path, and refuses or
 * warns (on_override_program) when our attach would switch off another
 * tool's BPF_F_ALLOW_OVERRIDE program for the container. Each line names
 * the program (id and name) and the cgroup it is on.
 */
int attach_path_progs_check(int cg_fd, const char *rel,
			    const enum bpf_attach_type *types, int nr,
			    const struct sh_config *cfg, struct sh_error *err);

#endif /* SH_ATTACH_H */
