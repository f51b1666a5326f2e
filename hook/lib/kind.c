// SPDX-License-Identifier: GPL-2.0-only
/* Kind, attach type and name of each program, in one place. */
#include <string.h>
#include <bpf/libbpf.h>

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
