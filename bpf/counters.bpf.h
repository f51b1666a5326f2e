/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-CPU event counters, one map per program object. Per-CPU so that the
 * hot path takes no lock and bounces no cache line; `status` sums them.
 */
#ifndef COUNTERS_BPF_H
#define COUNTERS_BPF_H

#include "sockopt_hook.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SH_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count_event(__u32 idx)
{
	__u64 *val = bpf_map_lookup_elem(&counters, &idx);

	if (val)
		*val += 1;
}

#endif /* COUNTERS_BPF_H */
