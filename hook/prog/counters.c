// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the per-CPU counters back: each program has a "counters" cgroup
 * storage map, found through the program's map ids, holding one entry per
 * attachment; status needs nothing but the record's program ids.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/bpfinfo.h"
#include "lib/cleanup.h"
#include "prog/counters.h"

const char *const counters_names[SH_CNT_MAX] = {
	[SH_CNT_SOCK_CREATED] = "sockets_created",
	[SH_CNT_SOCK_BYPASSED] = "sockets_bypassed",
	[SH_CNT_SOCK_DENIED] = "socket_creations_denied",
	[SH_CNT_SET_DENIED] = "setsockopt_denied",
	[SH_CNT_SET_CLAMPED] = "setsockopt_clamped",
	[SH_CNT_SET_FORCED] = "setsockopt_forced",
	[SH_CNT_GET_DENIED] = "getsockopt_denied",
	[SH_CNT_GET_FORCED] = "getsockopt_forced",
};

/* The container's own storage: key (cgroup id, attach type). */
static int add_map(int map_fd, uint64_t cg_id, enum bpf_attach_type type,
		   struct sh_counters *out)
{
	struct bpf_cgroup_storage_key key;
	int ncpus = libbpf_num_possible_cpus();
	_cleanup_free_ struct sh_counter_values *vals = NULL;

	/* The key has tail padding, and all 16 bytes go to the kernel. */
	memset(&key, 0, sizeof(key));
	key.cgroup_inode_id = cg_id;
	key.attach_type = type;
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &key, vals))
		return -errno;
	for (int cpu = 0; cpu < ncpus; cpu++)
		for (int i = 0; i < SH_CNT_MAX; i++)
			out->v[i] += vals[cpu].v[i];
	return 0;
}

static bool is_counters_map(const struct bpf_map_info *info, const void *data)
{
	(void)data;
	return !strcmp(info->name, "counters") &&
	       info->type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE &&
	       info->value_size == sizeof(struct sh_counter_values);
}

static int add_prog(const struct sh_prog *prog, uint64_t cg_id,
		    struct sh_counters *out)
{
	_cleanup_close_ int fd = bpf_prog_get_fd_by_id(prog->id);
	_cleanup_close_ int map_fd = -1;

	if (fd < 0)
		return -errno;
	map_fd = bpfinfo_find_map(fd, NULL, is_counters_map, NULL);
	if (map_fd < 0)
		return map_fd;
	return add_map(map_fd, cg_id, prog->type, out);
}

int counters_read(const struct sh_progs *progs, uint64_t cg_id,
		  struct sh_counters *out)
{
	int r = 0;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < progs->nr; i++) {
		int e = add_prog(&progs->prog[i], cg_id, out);

		r = r ? r : e;
	}
	return r;
}
