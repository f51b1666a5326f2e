/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_LINT_H
#define SH_LINT_H

#include "config/config.h"

#define SH_LINT_WARNINGS_MAX 16
#define SH_LINT_TEXT_MAX 1024

/* What validate warns about: valid, but holding less than it seems to. */
struct lint_warnings {
	int nr, dropped;
	char text[SH_LINT_WARNINGS_MAX][SH_LINT_TEXT_MAX];
};

void lint_add(struct lint_warnings *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Policies whose stamps or rules a workload can go around. */
void lint_policies(const struct sh_config *cfg, struct lint_warnings *w);

/*
 * Buffer clamps that TCP autotuning goes past: a socket that never sets
 * SO_RCVBUF (SO_SNDBUF) grows up to tcp_rmem_max (tcp_wmem_max), the
 * node's net.ipv4.tcp_rmem (tcp_wmem) max, or 0 when unknown.
 */
void lint_autotuning(const struct sh_config *cfg, long long tcp_rmem_max,
		     long long tcp_wmem_max, struct lint_warnings *w);

#endif /* SH_LINT_H */
