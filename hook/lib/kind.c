// SPDX-License-Identifier: GPL-2.0-only
/* Kind, attach type and name of each program, in one place. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/kind.h"

static const struct kind_info kinds[SH_PROG_KINDS] = {
	[SH_PROG_SOCK] = { SH_PROG_SOCK, BPF_CGROUP_INET_SOCK_CREATE,
			   "sock_create" },
	[SH_PROG_SET] = { SH_PROG_SET, BPF_CGROUP_SETSOCKOPT, "setsockopt" },
	[SH_PROG_GET] = { SH_PROG_GET, BPF_CGROUP_GETSOCKOPT, "getsockopt" },
};

const struct kind_info *kind_get(enum sh_prog_kind kind)
{
	return kind < SH_PROG_KINDS ? &kinds[kind] : NULL;
}

const struct kind_info *kind_by_type(enum bpf_attach_type type)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].type == type)
			return &kinds[i];
	return NULL;
}

const struct kind_info *kind_by_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(kinds[i].name, name))
			return &kinds[i];
	return NULL;
}

const char *kind_type_name(enum bpf_attach_type type)
{
	const struct kind_info *k = kind_by_type(type);
	const char *libbpf = libbpf_bpf_attach_type_str(type);

	return k ? k->name : libbpf ? libbpf : "unknown";
}

/* Program and map information, by fd or by id. */

/* Enough for our programs' maps (rules, counters, .rodata, .bss...). */
#define PROG_MAPS_MAX 8

int kind_prog_info(int fd, __u32 *id, char name[SH_BPF_NAME_MAX])
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*id = info.id;
	snprintf(name, SH_BPF_NAME_MAX, "%s", info.name);
	return 0;
}

void kind_prog_name(__u32 id, char name[SH_BPF_NAME_MAX])
{
	_cleanup_close_ int fd = bpf_prog_get_fd_by_id(id);
	__u32 same;

	if (fd < 0 || kind_prog_info(fd, &same, name))
		snprintf(name, SH_BPF_NAME_MAX, "?");
}

static bool map_matches(__u32 map_id, kind_map_match_fn match, const void *data,
			int *fd)
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

int kind_prog_find_map(int prog_fd, char name[SH_BPF_NAME_MAX],
		       kind_map_match_fn match, const void *data)
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
