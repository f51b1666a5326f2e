/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_ATTACH_H
#define SH_ATTACH_H

#include <stdbool.h>
#include <linux/bpf.h>

#include "config.h"
#include "policy.h"

#define SH_MAX_PROGS 3

struct sh_prog {
	enum bpf_attach_type type;
	__u32 id;
	char name[16];
	__u64 hash; /* the policy hash of the copy (see share.h) */
};

struct sh_progs {
	int nr;
	struct sh_prog prog[SH_MAX_PROGS];
	bool bypass_active; /* the bypass variant was attached */
};

struct sh_loaded;

/* Loads and verifies what the policy needs; attaches nothing. */
int attach_prepare(const struct sh_effective *eff,
		   enum on_unsupported on_unsupported, struct sh_loaded *l);
/* Attaches what attach_prepare() loaded: all of it, or none on error. */
int attach_commit(int cg_fd, const struct sh_loaded *l, struct sh_progs *out);
/* The attach types of what attach_prepare() loaded; returns how many. */
int attach_types(const struct sh_loaded *l,
		 enum bpf_attach_type types[SH_MAX_PROGS]);
/* Makes freshly loaded copies findable; call once the record is written,
 * so no index entry outlives a failed attach. */
void attach_publish(const struct sh_loaded *l, const struct sh_progs *out);
int detach_progs(int cg_fd, const struct sh_progs *progs);
int attached_ours(int cg_fd, struct sh_progs *found);

typedef bool (*map_match_fn)(const struct bpf_map_info *info, const void *data);
/*
 * The fd of the first of a program's maps that match() accepts, or a
 * negative errno. Stores the program's name when name is not NULL.
 */
int prog_find_map(int prog_fd, char name[16], map_match_fn match,
		  const void *data);
const char *attach_type_name(enum bpf_attach_type type);
int probe_bypass_support(void);
void attach_quiet_libbpf(void);

#endif /* SH_ATTACH_H */
