/* SPDX-License-Identifier: GPL-2.0-only */
/* Questions to the kernel about loaded BPF objects. */
#ifndef SH_BPFINFO_H
#define SH_BPFINFO_H

#include <stdbool.h>
#include <linux/bpf.h>

#define SH_BPF_NAME_MAX 16 /* BPF_OBJ_NAME_LEN */

/* The id and name of the program behind fd. */
int bpfinfo_prog(int fd, __u32 *id, char name[SH_BPF_NAME_MAX]);
/* The name of the program with this id, or "?" when it cannot be read. */
void bpfinfo_prog_name(__u32 id, char name[SH_BPF_NAME_MAX]);

typedef bool (*bpfinfo_map_match_fn)(const struct bpf_map_info *info,
				     const void *data);
/*
 * The fd of the first of a program's maps that match() accepts, or a
 * negative errno. Stores the program's name when name is not NULL.
 */
int bpfinfo_find_map(int prog_fd, char name[SH_BPF_NAME_MAX],
		     bpfinfo_map_match_fn match, const void *data);

#endif /* SH_BPFINFO_H */
