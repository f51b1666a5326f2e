/* SPDX-License-Identifier: GPL-2.0-only */
/* The three kinds of program the hook attaches (one table for all), and
 * what the kernel says of a loaded program or its maps. */
#ifndef SH_KIND_H
#define SH_KIND_H

#include <linux/bpf.h>
#include <stdbool.h>

enum sh_prog_kind {
	SH_PROG_SOCK,
	SH_PROG_SET,
	SH_PROG_GET,
	SH_PROG_KINDS,
};

struct kind_info {
	enum sh_prog_kind kind;
	enum bpf_attach_type type;
	const char *name; /* in attachments, the index of shared copies, status */
};

const struct kind_info *kind_get(enum sh_prog_kind kind);
/* NULL for an attach type that is not one of ours. */
const struct kind_info *kind_by_type(enum bpf_attach_type type);
const struct kind_info *kind_by_name(const char *name);
/* Our name for one of our types, libbpf's for any other. */
const char *kind_type_name(enum bpf_attach_type type);

/* Questions to the kernel about loaded BPF objects. */

#define SH_BPF_NAME_MAX 16 /* BPF_OBJ_NAME_LEN */

/* The id and name of the program behind fd. */
int kind_prog_info(int fd, __u32 *id, char name[SH_BPF_NAME_MAX]);
/* The name of the program with this id, or "?" when it cannot be read. */
void kind_prog_name(__u32 id, char name[SH_BPF_NAME_MAX]);

typedef bool (*kind_map_match_fn)(const struct bpf_map_info *info,
				  const void *data);
/*
 * The fd of the first of a program's maps that match() accepts, or a
 * negative errno. Stores the program's name when name is not NULL.
 */
int kind_prog_find_map(int prog_fd, char name[SH_BPF_NAME_MAX],
		       kind_map_match_fn match, const void *data);

#endif /* SH_KIND_H */
