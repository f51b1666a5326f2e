/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_SHARE_H
#define SH_SHARE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Containers with the same effective policy share one loaded copy of each
 * program. Nothing is pinned: a copy lives while some cgroup has it
 * attached, and an index file in the state directory only says where to
 * look. A candidate is used only after checking its name and the policy
 * hash frozen into its .rodata.
 */
struct share_check {
	const char *prog_name;
	size_t rodata_size; /* sizeof the skeleton's rodata struct */
	size_t hash_offset; /* offsetof policy_hash in it */
};

uint64_t share_hash(uint64_t seed, const void *data, size_t len);
/* Returns a prog fd, or a negative errno (-ENOENT: nothing to share). */
int share_find(const char *type, uint64_t hash, const struct share_check *chk);
int share_publish(const char *type, uint64_t hash, uint32_t prog_id);
/* Removes index files whose (type, hash) no live record uses. */
typedef int (*share_in_use_fn)(const char *type, uint64_t hash, void *data);
void share_sweep(share_in_use_fn in_use, void *data);

#endif /* SH_SHARE_H */
