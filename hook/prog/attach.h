/* SPDX-License-Identifier: GPL-2.0-only */
/* Putting loaded programs on a cgroup, and taking ours off again. */
#ifndef SH_ATTACH_H
#define SH_ATTACH_H

#include <linux/bpf.h>

#include "lib/error.h"
#include "prog/load.h"
#include "state/state.h"

/* Attaches what load_policy() loaded to the cgroup cg_fd, whose id is
 * cg_id: all of it, or none on error. */
int attach_commit(int cg_fd, uint64_t cg_id, const struct sh_loaded *l,
		  struct sh_progs *out, struct sh_error *err);
/* The attach types of what load_policy() loaded; returns how many. */
int attach_types(const struct sh_loaded *l,
		 enum bpf_attach_type types[SH_PROG_KINDS]);
/* Makes freshly loaded copies findable; call once the record is written,
 * so no index entry outlives a failed attach. */
void attach_publish(const struct sh_loaded *l, const struct sh_progs *out);
/* Detaches those of the recorded programs that are still ours; err tells
 * the first that could not be. */
int attach_detach(int cg_fd, const struct sh_progs *progs,
		  struct sh_error *err);
/* Programs of ours attached directly to this cgroup (not inherited). */
int attach_query_ours(int cg_fd, struct sh_progs *found);

#endif /* SH_ATTACH_H */
