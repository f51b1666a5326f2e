/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The generic programs (bpf/generic_map.h): one per attach type and mode
 * (enforce or audit; sock_create also with bypass-prot-mem), loaded and
 * pinned by `preload` whatever the config says. A prestart whose policy
 * has no specialised copy at hand (not preloaded yet: a config change
 * racing a start) takes them instead of verifying one: it attaches, then
 * writes the attachment's state and the container's rules (until then the
 * program refuses every call). `apply` later replaces them with the
 * specialised copies; `gc` drops the rules of cgroups that are gone.
 */
#ifndef SH_GENERIC_H
#define SH_GENERIC_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/kind.h"
#include "policy/policy.h"

/* A generic program of one kind and mode, with the maps it is told a
 * container's policy through. */
struct generic_prog {
	int fd;
	__u32 id;
	int state_fd; /* gen_state: cgroup storage, one value per attachment */
	int rules_fd; /* gen_rules: every container's rules; -1 for sock */
	__u64 rules_id; /* generic_new_rules(): this attachment's rules */
};

/* The pin hash of a generic program ("<kind>-<hash>" in the pin dir). */
uint64_t generic_hash(enum sh_prog_kind kind, bool bypass, bool audit);
/* The program's name in the BPF objects ("sh_gen_set", ...). */
const char *generic_prog_name(enum sh_prog_kind kind, bool bypass);
bool generic_is_name(const char *prog_name);
/* Whether a pin of this kind ("setsockopt") and hash is a generic one. */
bool generic_is_pin(const char *kind_name, uint64_t hash);

/* Loads one (preload): the program's fd, or a negative errno. */
int generic_load(enum sh_prog_kind kind, bool bypass, bool audit);

void generic_init(struct generic_prog *g);
void generic_close(struct generic_prog *g);
/* The pinned program of this kind and mode, checked (name, the .rodata
 * the hook would freeze, its maps' shapes): 0, -ENOENT when there is none
 * or it is not ours (a warning then). */
int generic_find(int pins, enum sh_prog_kind kind, bool bypass, bool audit,
		 struct generic_prog *g);

/* Draws a rules id for the next attachment, at random: 0 or -errno. */
int generic_new_rules(struct generic_prog *g);
/*
 * Before attaching to the cgroup cg_id: marks not ready a state the cgroup
 * kept from an earlier attachment of this program (so that the attach
 * does not apply that one).
 */
int generic_prepare(const struct generic_prog *g, enum sh_prog_kind kind,
		    const struct sh_effective *eff, uint64_t cg_id,
		    struct sh_error *err);
/* After attaching: the rules id into the state, the container's rules,
 * then the state ready: the program applies the policy from there. */
int generic_arm(const struct generic_prog *g, enum sh_prog_kind kind,
		const struct sh_effective *eff, uint64_t cg_id,
		struct sh_error *err);

/* gc: drops from every pinned generic program the rules no attachment's
 * state names any more (their cgroups are freed, and their storage with
 * them). */
void generic_sweep(int pins);

#endif /* SH_GENERIC_H */
