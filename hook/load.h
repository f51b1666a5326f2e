/* SPDX-License-Identifier: GPL-2.0-only */
/* Getting a verified copy of each program a policy needs. */
#ifndef SH_LOAD_H
#define SH_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

enum sh_prog_kind {
	SH_PROG_SOCK,
	SH_PROG_SET,
	SH_PROG_GET,
	SH_PROG_KINDS,
};

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
	bool bypass; /* the sock_create copy is the bypass variant */
};

void loaded_init(struct sh_loaded *l);
/* A shared copy if one is live, else a fresh load. */
int obtain_sock_create(const struct sh_effective *eff, bool bypass,
		       struct sh_loaded *l);
int obtain_setsockopt(const struct sh_effective *eff, struct sh_loaded *l);
int obtain_getsockopt(const struct sh_effective *eff, struct sh_loaded *l);
const char *prog_kind_type(enum sh_prog_kind kind);
void loaded_free(struct sh_loaded *l);

#endif /* SH_LOAD_H */
