/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Replacing what a running container's cgroup enforces (`apply`). Each
 * attach type both the old and the new programs have is swapped in one
 * BPF_PROG_ATTACH with BPF_F_REPLACE: the kernel puts the new program in
 * the old one's place in the cgroup's list and publishes the cgroup's new
 * effective program arrays (and its descendants') with one pointer store
 * each, so every call runs the old program or the new one, never none,
 * and once a call has seen the new one no later call sees the old one. A
 * type only the new programs have is attached first, one only the old had
 * is detached last. All or nothing: a failure puts back what was done.
 */
#ifndef SH_REPLACE_H
#define SH_REPLACE_H

#include <stdint.h>

#include "lib/error.h"
#include "prog/load.h"
#include "state/state.h"

/*
 * Moves the cgroup cg_fd from the programs in old to those l has
 * (load_policy(), LOAD_SPECIALISED); out is what is attached now. A
 * generic program's rules for the cgroup stay while the cgroup does (gc).
 */
int replace_commit(int cg_fd, const struct sh_progs *old,
		   const struct sh_loaded *l, struct sh_progs *out,
		   struct sh_error *err);
/* Puts old back in the place of now (after a later step failed). */
int replace_undo(int cg_fd, const struct sh_progs *old,
		 const struct sh_progs *now, struct sh_error *err);

#endif /* SH_REPLACE_H */
