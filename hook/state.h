/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_STATE_H
#define SH_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach.h"
#include "cgroup.h"

#define SH_STATE_DIR "/run/oci-sockopt-hook"

/* What the hook did to one container: enough to undo it and to show it. */
struct sh_record {
	char id[260];
	pid_t pid;
	uint64_t pid_start;
	struct cg_target cg;
	char policy[80];
	char policy_source[400];
	bool bypass;
	char bypass_source[400];
	struct sh_progs progs;
};

const char *state_dir(void);
/* The state directory, opened and checked (trust.h): an fd, or a negative
 * errno, logged unless a reader (!create) finds no directory (-ENOENT). */
int state_dir_open(bool create);
/* 0 when the state directory is safe to use or absent; else logged. */
int state_dir_check(void);
int state_write(const struct sh_record *rec);
/* -ENOENT: no record; -EBADMSG: an invalid one, ignored with a warning. */
int state_read(const char *id, struct sh_record *rec);
int state_remove(const char *id);
/* A process's state letter and start time, from one read of its stat. */
int pid_stat(pid_t pid, char *state, uint64_t *start);
/* The kernel silently skips such tasks when they are moved. */
bool pid_exiting(char state);
bool pid_running(pid_t pid, uint64_t start);
typedef int (*state_visit_fn)(const struct sh_record *rec, void *data);
int state_foreach(state_visit_fn fn, void *data);

#endif /* SH_STATE_H */
