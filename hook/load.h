/* SPDX-License-Identifier: GPL-2.0-only */
/* Opening and loading the three skeletons with a container's policy. */
#ifndef SH_LOAD_H
#define SH_LOAD_H

#include <stdbool.h>

#include "policy.h"

struct sock_create_bpf;
struct setsockopt_bpf;
struct getsockopt_bpf;

struct sh_loaded {
	struct sock_create_bpf *sock;
	struct setsockopt_bpf *set;
	struct getsockopt_bpf *get;
	bool bypass; /* sock uses the bypass variant */
};

int load_sock_create(const struct sh_effective *eff, bool bypass,
		     struct sh_loaded *l);
int load_setsockopt(const struct sh_effective *eff, struct sh_loaded *l);
int load_getsockopt(const struct sh_effective *eff, struct sh_loaded *l);
void loaded_free(struct sh_loaded *l);

#endif /* SH_LOAD_H */
