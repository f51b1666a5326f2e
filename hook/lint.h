/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_LINT_H
#define SH_LINT_H

#include "config.h"

#define SH_MAX_WARNINGS 16

/* What validate warns about: valid, but holding less than it seems to. */
struct sh_warnings {
	int nr, dropped;
	char text[SH_MAX_WARNINGS][1024];
};

void warnings_add(struct sh_warnings *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Policies whose stamps or rules a workload can go around. */
void lint_policies(const struct sh_config *cfg, struct sh_warnings *w);

#endif /* SH_LINT_H */
