/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_COUNTERS_H
#define SH_COUNTERS_H

#include <stdint.h>

#include "sockopt_hook.h"
#include "state/state.h"

struct sh_counters {
	uint64_t v[SH_CNT_MAX];
};

extern const char *const counters_names[SH_CNT_MAX];

/* Sums the per-CPU counters of every program in progs for one cgroup. */
int counters_read(const struct sh_progs *progs, uint64_t cg_id,
		  struct sh_counters *out);

#endif /* SH_COUNTERS_H */
