// SPDX-License-Identifier: GPL-2.0-only
/*
 * A skeleton's open() and elf_bytes() are static inline functions that
 * hold the object file: every file calling them would carry a copy.
 */
/* The skeletons name the types of sockopt_hook.h. */
#include "sockopt_hook.h"

#include "getsockopt.skel.h"
#include "prog/objects.h"
#include "setsockopt.skel.h"
#include "sock_create.skel.h"

struct sock_create_bpf *objects_open_sock(void)
{
	return sock_create_bpf__open();
}

struct setsockopt_bpf *objects_open_set(void)
{
	return setsockopt_bpf__open();
}

struct getsockopt_bpf *objects_open_get(void)
{
	return getsockopt_bpf__open();
}

const void *objects_elf(enum sh_prog_kind kind, size_t *sz)
{
	switch (kind) {
	case SH_PROG_SOCK:
		return sock_create_bpf__elf_bytes(sz);
	case SH_PROG_SET:
		return setsockopt_bpf__elf_bytes(sz);
	default:
		return getsockopt_bpf__elf_bytes(sz);
	}
}
