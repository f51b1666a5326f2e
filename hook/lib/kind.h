/* SPDX-License-Identifier: GPL-2.0-only */
/* The three kinds of program the hook attaches: one table for all. */
#ifndef SH_KIND_H
#define SH_KIND_H

#include <linux/bpf.h>

enum sh_prog_kind {
	SH_PROG_SOCK,
	SH_PROG_SET,
	SH_PROG_GET,
	SH_PROG_KINDS,
};

struct kind_info {
	enum sh_prog_kind kind;
	enum bpf_attach_type type;
	const char *name; /* in records, the index of shared copies, status */
};

const struct kind_info *kind_get(enum sh_prog_kind kind);
/* NULL for an attach type that is not one of ours. */
const struct kind_info *kind_by_type(enum bpf_attach_type type);
const struct kind_info *kind_by_name(const char *name);
/* Our name for one of our types, libbpf's for any other. */
const char *kind_type_name(enum bpf_attach_type type);

#endif /* SH_KIND_H */
