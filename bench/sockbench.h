/* SPDX-License-Identifier: GPL-2.0-only */
/* sockbench: the benchmark driver's shared helpers and subcommands. */
#ifndef SOCKBENCH_H
#define SOCKBENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#define SB_IDENT "sockbench"

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_close_ _cleanup_(sb_closep)

static inline void sb_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

/* How a datapath measurement runs: see usage() in sockbench.c. */
struct sb_opts {
	const char *cgroup; /* join this cgroup v2 directory first */
	int cpu; /* pin to this CPU; -1: do not pin */
	long calls; /* calls per batch */
	int batches; /* timed batches; the fastest is printed */
	bool seccomp; /* install the SO_MARK seccomp filter first */
};

/* Error reporting: one line on stderr, prefixed with the tool's name. */
void sb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int sb_parse_long(const char *s, long min, long max, long *out);
uint64_t sb_now_ns(void);
int sb_cgroup_join(const char *dir);

/* bench/sb_bpf.c: the empty programs and the static-key reader. */
int sb_attach_empty(const char *cgroup);
int sb_detach_empty(const char *cgroup);
int sb_read_keys(const char *scratch_cgroup);
int sb_keys_save(const char *file);
int sb_keys_wait_off(const char *file);

/* bench/sb_exec.c: wall time of fork+exec+wait, interleaved commands. */
int sb_exec(int argc, char **argv);

/* bench/sb_seccomp.c: deny setsockopt(SOL_SOCKET, SO_MARK) with EPERM. */
int sb_seccomp_deny_so_mark(void);

#endif /* SOCKBENCH_H */
