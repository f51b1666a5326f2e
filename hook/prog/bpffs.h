/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF filesystem that the pin directories (pin.h, footprint.h) live
 * on. Like bpftool, the hook mounts one at /sys/fs/bpf when nothing is
 * mounted there; anywhere else it says in one line what to do.
 */
#ifndef SH_BPFFS_H
#define SH_BPFFS_H

#include <stddef.h>

#include "lib/error.h"

#define SH_BPFFS_DEFAULT "/sys/fs/bpf"

enum bpffs_state {
	BPFFS_MOUNTED, /* the directory is on a BPF filesystem */
	BPFFS_MOUNTABLE, /* /sys/fs/bpf with nothing mounted: one is made */
	BPFFS_UNUSABLE, /* why says what to do */
};

/* Where dir, or else its parent directory, stands; why gets what to do
 * for BPFFS_UNUSABLE. */
enum bpffs_state bpffs_check(const char *dir, char *why, size_t len);
/* 0 when dir (what: "pin directory", ...) or its parent is on a BPF
 * filesystem, mounting one at /sys/fs/bpf when nothing is mounted there;
 * else -errno and one line. */
int bpffs_ensure(const char *what, const char *dir, struct sh_error *err);

#endif /* SH_BPFFS_H */
