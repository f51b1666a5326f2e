/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Verifying a BPF object the hook did not load itself before it is used:
 * a pinned program (`preload`), a copy found through the index of shared
 * copies, a pinned footprint table. A pin is trusted by where it is (a
 * directory only root writes), but whatever another tool, an older hook
 * or a mistake left under the right name must not be attached or read as
 * ours: a mismatch is a warning and the caller loads (or skips) instead.
 *
 * A program is ours for this policy when:
 *  - its program type and name are those of the kind;
 *  - it attaches as the kind's attach type (the kernel enforces the
 *    expected attach type only at attach time, when a mismatch would
 *    fail the container: BPF_LINK_CREATE with no target tells it first,
 *    EBADF for the right type, EINVAL for another, and makes nothing);
 *  - its .rodata is an array of one entry, read-only to BPF and frozen,
 *    and holds, byte for byte, what the hook would freeze there for this
 *    policy (the policy hash with the build id of the programs among it);
 *  - a sockopt program's rules map is a hash map of our key and value
 *    sizes with one entry per rule, read-only to BPF and frozen, holding
 *    exactly these rules.
 * A map's type, key and value sizes and max entries are checked before
 * anything is read from it.
 */
#ifndef SH_PROGCHECK_H
#define SH_PROGCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/bpf.h>

#include "config/config_types.h"
#include "lib/error.h"
#include "lib/kind.h"

struct progcheck_want {
	enum sh_prog_kind kind; /* program type and attach type */
	const char *prog_name;
	/* The .rodata the hook would freeze for this policy, zero-filled
	 * but for what it sets; the section may lack the tail padding. */
	const void *rodata;
	size_t rodata_size;
	/* sockopt kinds: the rules map's entries as the hook fills them
	 * (progcheck_rule()), or has_rules false for sock_create. */
	bool has_rules;
	const struct sh_rule_entry *rules;
	size_t nr_rules;
	bool audit;
};

struct progcheck_map {
	__u32 type;
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
	bool frozen; /* must be frozen and read-only to BPF */
};

/* Rule i as the hook stores it in a rules map (audit mode numbers the
 * would-have slots). */
struct sh_opt_rule progcheck_rule(const struct sh_rule_entry *rules, size_t i,
				  bool audit);
/* 0 when prog_fd is the program want describes; else -ESTALE and why, in
 * one line, in err (no other side effect). */
int progcheck_prog(int prog_fd, const struct progcheck_want *want,
		   struct sh_error *err);
/* 0 when map_fd is a map of that shape, else -ESTALE and why. */
int progcheck_map(int map_fd, const struct progcheck_map *want,
		  struct sh_error *err);

#endif /* SH_PROGCHECK_H */
