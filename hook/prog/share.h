/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_SHARE_H
#define SH_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prog/progcheck.h"

/*
 * Containers with the same effective policy share one loaded copy of each
 * program: one that `preload` pinned (pin.h), else one that another
 * container has attached. Such a copy lives while some cgroup has it
 * attached, and an index file in the state directory only says where to
 * look. Either is used only once progcheck_prog() says it is the program
 * this policy needs: program ids are reused, and a pin is found by name.
 */

uint64_t share_hash(uint64_t seed, const void *data, size_t len);
/* Returns a prog fd, or a negative errno (-ENOENT: nothing to share;
 * -ESTALE: nothing either, and the pin under this policy's name failed
 * the check); pins is the pin directory's fd or -1, *pinned says which
 * was found. A pin that fails the check is a warning, never used. */
int share_find(int pins, const char *type, uint64_t hash,
	       const struct progcheck_want *want, bool *pinned);
/* A long-running caller (the NRI plugin) keeps the pins it checked, and
 * checks a pin again only when its program id changed: share.c. */
void share_keep(bool on);
/* How many times a pin was checked (progcheck_prog()) in this process. */
unsigned long long share_kept_checks(void);
int share_publish(const char *type, uint64_t hash, uint32_t prog_id);
/* Removes index files whose (type, hash) no live attachment uses. */
typedef int (*share_in_use_fn)(const char *type, uint64_t hash, void *data);
void share_sweep(share_in_use_fn in_use, void *data);

#endif /* SH_SHARE_H */
