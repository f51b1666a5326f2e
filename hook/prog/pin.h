/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pin directory: programs that `preload` loaded ahead of time, pinned
 * on a BPF filesystem as "<kind>-<policy hash>", so that a prestart only
 * attaches. Like the state directory it must be root's alone: whatever is
 * pinned there is attached to containers.
 */
#ifndef SH_PIN_H
#define SH_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

#define SH_PIN_DIR "/sys/fs/bpf/oci-sockopt-hook"
/* "<kind>-<16 hex digits>" and its NUL. */
#define SH_PIN_NAME_MAX 48

const char *pin_dir(void);
/* The pin directory, opened and checked: on a BPF filesystem, ours alone.
 * -ENOENT when it is absent and !create. */
int pin_dir_open(bool create, struct sh_error *err);
/* Takes the pin directory's lock: one preload at a time. */
int pin_dir_lock(int dir, struct sh_error *err);

void pin_name(char *buf, size_t len, const char *type, uint64_t hash);
/* The pinned program of (type, hash): a prog fd, or a negative errno. */
int pin_get(int dir, const char *type, uint64_t hash);
/* Pins prog_fd as (type, hash), atomically replacing an older pin. */
int pin_add(int dir, const char *type, uint64_t hash, int prog_fd,
	    struct sh_error *err);
/* Calls fn for each entry but "." and ".."; type is NULL for a name that
 * is not a pin of ours (a temp file, or anything else). */
typedef int (*pin_visit_fn)(int dir, const char *name, const char *type,
			    uint64_t hash, void *data);
int pin_foreach(int dir, pin_visit_fn fn, void *data, struct sh_error *err);
int pin_remove(int dir, const char *name, struct sh_error *err);
/* A name pin_add() uses while it pins. */
bool pin_is_temp(const char *name);

/*
 * The BPF filesystem that the pin directories (pin.h, footprint.h) live
 * on. Like bpftool, the hook mounts one at /sys/fs/bpf when nothing is
 * mounted there; anywhere else it says in one line what to do.
 */

#define SH_BPFFS_DEFAULT "/sys/fs/bpf"

enum bpffs_state {
	BPFFS_MOUNTED, /* the directory is on a BPF filesystem */
	BPFFS_MOUNTABLE, /* /sys/fs/bpf with nothing mounted: one is made */
	BPFFS_UNUSABLE, /* why says what to do */
};

/* Where dir, or else its parent directory, stands; why gets what to do
 * for BPFFS_UNUSABLE. */
enum bpffs_state pin_bpffs_check(const char *dir, char *why, size_t len);
/* 0 when dir (what: "pin directory", ...) or its parent is on a BPF
 * filesystem, mounting one at /sys/fs/bpf when nothing is mounted there;
 * else -errno and one line. */
int pin_bpffs_ensure(const char *what, const char *dir, struct sh_error *err);

#endif /* SH_PIN_H */
