/* SPDX-License-Identifier: GPL-2.0-only */
/* Getting a verified copy of each program a policy needs. */
#ifndef SH_LOAD_H
#define SH_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/kind.h"
#include "policy/policy.h"
#include "prog/generic.h"

struct sock_create_bpf;
struct setsockopt_bpf;
struct getsockopt_bpf;

struct sh_loaded {
	struct sock_create_bpf *sock;
	struct setsockopt_bpf *set;
	struct getsockopt_bpf *get;
	int fd[SH_PROG_KINDS]; /* -1: this kind is not needed */
	uint64_t hash[SH_PROG_KINDS];
	bool fresh[SH_PROG_KINDS]; /* loaded now, not shared */
	bool pinned[SH_PROG_KINDS]; /* preloaded: found in the pin directory */
	bool bypass; /* the sock_create copy is the bypass variant */
	bool audit; /* audit mode copies (audit_mode in .rodata) */
	int pins; /* the pin directory, or -1 */
	bool footprint; /* record mode: own copies, never shared or pinned */
	bool at_start; /* LOAD_AT_START */
	/* Kinds taken from the generic programs (generic.h): the policy is
	 * written to their maps at attach (attach.c), from eff. */
	bool generic[SH_PROG_KINDS];
	struct generic_prog gen[SH_PROG_KINDS];
	const struct sh_effective *eff;
};

void load_init(struct sh_loaded *l);

/* How a policy's programs may be had. */
enum load_how {
	/* A specialised copy: pinned, shared, or loaded and verified here
	 * (preload, apply). */
	LOAD_SPECIALISED,
	/* prestart: else the generic program when it is pinned, so that no
	 * start verifies (record mode still loads its own copies). */
	LOAD_AT_START,
};

/*
 * Every program the policy needs, as `how` allows; attaches nothing. All
 * of them, or none on error.
 */
int load_policy(const struct sh_effective *eff, enum on_unsupported on,
		enum load_how how, struct sh_loaded *l, struct sh_error *err);
void load_free(struct sh_loaded *l);

/*
 * The policy hash of the kind's copy for this policy (bypass: the bypass
 * variant of sock_create), as load_policy() gets it and an attachment keeps
 * it: what `apply` and `status` compare, without loading anything.
 */
uint64_t load_hash(const struct sh_effective *eff, enum sh_prog_kind kind,
		   bool bypass);
/* 1 when this kernel takes the bypass program, 0 when not, or -errno. */
int load_probe_bypass(void);

#endif /* SH_LOAD_H */
