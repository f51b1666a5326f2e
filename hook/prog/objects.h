/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF objects built into the hook, one per attach type (a .bpf.c of bpf/),
 * embedded once: their skeletons are opened here and nowhere else, so
 * that each object's bytes are in the binary once whoever loads it.
 */
#ifndef SH_OBJECTS_H
#define SH_OBJECTS_H

#include <stddef.h>

#include "lib/kind.h"

struct sock_create_bpf;
struct setsockopt_bpf;
struct getsockopt_bpf;

/* The skeletons' open(): NULL and errno on failure. */
struct sock_create_bpf *objects_open_sock(void);
struct setsockopt_bpf *objects_open_set(void);
struct getsockopt_bpf *objects_open_get(void);
/* The object file of a kind, for bpf_object__open_mem(). */
const void *objects_elf(enum sh_prog_kind kind, size_t *sz);

#endif /* SH_OBJECTS_H */
