/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_PATH_PROGS_H
#define SH_PATH_PROGS_H

#include <linux/bpf.h>

#include "config/config.h"
#include "lib/error.h"

/*
 * Before we attach programs of these types to the cgroup (cg_fd, rel below
 * the cgroup2 mount): refuses (err) when the kernel would refuse
 * our attach because of a non-multi program on the path, and refuses or
 * warns (on_override_program) when our attach would switch off another
 * tool's BPF_F_ALLOW_OVERRIDE program for the container. Each line names
 * the program (id and name) and the cgroup it is on.
 */
int path_progs_check(int cg_fd, const char *rel,
		     const enum bpf_attach_type *types, int nr,
		     const struct sh_config *cfg, struct sh_error *err);

#endif /* SH_PATH_PROGS_H */
