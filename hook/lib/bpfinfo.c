// SPDX-License-Identifier: GPL-2.0-only
/* Program and map information, by fd or by id. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "lib/bpfinfo.h"
#include "lib/cleanup.h"

/* Enough for our programs' maps (rules, counters, .rodata, .bss...). */
#define PROG_MAPS_MAX 8

int bpfinfo_prog(int fd, __u32 *id, char name[SH_BPF_NAME_MAX])
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*id = info.id;
	snprintf(name, SH_BPF_NAME_MAX, "%s", info.name);
	return 0;
}

void bpfinfo_prog_name(__u32 id, char name[SH_BPF_NAME_MAX])
{
	_cleanup_close_ int fd = bpf_prog_get_fd_by_id(id);
	__u32 same;

	if (fd < 0 || bpfinfo_prog(fd, &same, name))
		snprintf(name, SH_BPF_NAME_MAX, "?");
}

static bool map_matches(__u32 map_id, bpfinfo_map_match_fn match,
			const void *data, int *fd)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	*fd = bpf_map_get_fd_by_id(map_id);
	if (*fd < 0)
		return false;
	if (bpf_obj_get_info_by_fd(*fd, &info, &len) == 0 && match(&info, data))
		return true;
	close(*fd);
	return false;
}

int bpfinfo_find_map(int prog_fd, char name[SH_BPF_NAME_MAX],
		     bpfinfo_map_match_fn match, const void *data)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), map_ids[PROG_MAPS_MAX];
	int fd;

	info.nr_map_ids = ARRAY_SIZE(map_ids);
	info.map_ids = (__u64)(unsigned long)map_ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	if (name)
		memcpy(name, info.name, SH_BPF_NAME_MAX);
	for (__u32 i = 0; i < info.nr_map_ids && i < ARRAY_SIZE(map_ids); i++)
		if (map_matches(map_ids[i], match, data, &fd))
			return fd;
	return -ENOENT;
}
