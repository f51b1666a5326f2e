/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The generic programs (bpf/generic_map.h): one per attach type and mode
 * (enforce or audit; sock_create also with bypass-prot-mem), loaded and
 * pinned by `preload` whatever the config says. A prestart whose policy
 * has no specialised copy at hand (not preloaded yet: a config change
 * racing a start) takes them instead of verifying one: it gives the
 * container its own rules map, attaches, then writes the attachment's
 * state; until then the program refuses every call. `apply` later
 * replaces them with the specialised copies.
 */
#ifndef SH_GENERIC_H
#define SH_GENERIC_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "kind.h"
#include "policy.h"

/* A generic program of one kind and mode, with the maps it is told a
 * container's policy through. */
struct generic_prog {
	int fd;
	__u32 id;
	int state_fd; /* gen_state: cgroup storage, one value per attachment */
	int rules_fd; /* gen_rules: the containers' rules maps; -1 for sock */
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

/*
 * Before attaching: a sockopt kind's rules for the container in cgroup
 * cg_id, in a frozen map of their own under cg_id in the program's
 * gen_rules; and the attachment's state, when the cgroup still has one
 * from an earlier attachment of this program (else -ENOENT is fine).
 */
int generic_prepare(const struct generic_prog *g, enum sh_prog_kind kind,
		    const struct sh_effective *eff, uint64_t cg_id,
		    struct sh_error *err);
/* After attaching: writes the attachment's state, and the program starts
 * applying the policy. */
int generic_arm(const struct generic_prog *g, enum sh_prog_kind kind,
		const struct sh_effective *eff, uint64_t cg_id,
		struct sh_error *err);
/* Drops the rules map of cgroup cg_id from the generic program prog_id
 * (0: none). Only once no call can run that program for that cgroup. */
void generic_forget(__u32 prog_id, uint64_t cg_id);

/* Drops, from every pinned generic program, the rules maps of cgroups
 * gone(id) says are gone (gc: a record released without them, after a
 * hook was killed between making them and writing its record). */
typedef bool (*generic_gone_fn)(uint64_t cg_id, void *data);
void generic_sweep(int pins, generic_gone_fn gone, void *data);

#endif /* SH_GENERIC_H */
