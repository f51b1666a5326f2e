/* SPDX-License-Identifier: GPL-2.0-only */
/* Getting a verified copy of each program a policy needs. */
#ifndef SH_LOAD_H
#define SH_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "kind.h"
#include "policy.h"

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
};

void load_init(struct sh_loaded *l);
/*
 * Loads and verifies every program the policy needs, a live shared copy
 * where there is one; attaches nothing. All of them, or none on error.
 */
int load_policy(const struct sh_effective *eff, enum on_unsupported on,
		struct sh_loaded *l, struct sh_error *err);
void load_free(struct sh_loaded *l);
/* 1 when this kernel takes the bypass program, 0 when not, or -errno. */
int load_probe_bypass(void);

#endif /* SH_LOAD_H */
