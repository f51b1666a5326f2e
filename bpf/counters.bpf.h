/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Event counters in per-CPU cgroup storage: the kernel gives every
 * attachment (container cgroup, attach type) its own copy, so programs
 * shared by many containers still count per container, with no lock and
 * no shared cache line on the hot path. `status` sums the CPUs.
 */
#ifndef COUNTERS_BPF_H
#define COUNTERS_BPF_H

#include "sockopt_hook.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct sh_counter_values);
} counters SEC(".maps");

/* Which policy this copy was loaded with: checked before it is shared. */
const volatile __u64 policy_hash;

static __always_inline void count_event(__u32 idx)
{
	struct sh_counter_values *c = bpf_get_local_storage(&counters, 0);

	if (idx < SH_CNT_MAX)
		c->v[idx] += 1;
}

#endif /* COUNTERS_BPF_H */
