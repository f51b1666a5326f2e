/* SPDX-License-Identifier: GPL-2.0-only */
/* What /proc says about a process. */
#ifndef SH_PROC_H
#define SH_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A process's state letter and start time, from one read of its stat. */
int proc_stat(pid_t pid, char *state, uint64_t *start);
/* The kernel silently skips such tasks when they are moved. */
bool proc_exiting(char state);
/* Running, not a zombie, and the process that started at start. */
bool proc_running(pid_t pid, uint64_t start);

#endif /* SH_PROC_H */
