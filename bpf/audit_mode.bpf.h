/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Audit mode in the programs: audit_mode is frozen into .rodata, so in
 * enforce mode the verifier drops every path below, and the hook sizes the
 * would_have storage down to 8 bytes. In audit mode a call site counts what
 * it would have done and lets the call through untouched.
 *
 * The counters are in cgroup storage (one value per attachment): a
 * specialised copy's would_have map, or the tail of a generic program's
 * attachment state (generic_map.h), so every helper takes which.
 */
#ifndef AUDIT_MODE_BPF_H
#define AUDIT_MODE_BPF_H

#include "sockopt_hook.h"
#include "audit_mode_map.h"

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct sh_would_have); /* 8 bytes in enforce mode */
} would_have SEC(".maps");

/* 1: count what the policy would have done, apply nothing. */
const volatile __u32 audit_mode;

#define AUDIT_ON (audit_mode)

/*
 * Where the counters are: gen, the generic program's (a pointer into its
 * attachment's state), or, for NULL, the copy's own would_have map. Every
 * call site of a specialised copy passes a literal NULL, so the choice is
 * made at compile time and costs the copy nothing.
 */
static __always_inline struct sh_would_have *
would_have_of(struct sh_would_have *gen)
{
	return gen ? gen : bpf_get_local_storage(&would_have, 0);
}

static __always_inline void audit_count(struct sh_would_have *gen, __u32 slot,
					__s32 level, __s32 optname,
					__u32 action, __s32 extra)
{
	struct sh_would_have *w = would_have_of(gen);
	struct sh_wh_entry *e;

	/* Compare the register that indexes, not a copy clang derived. */
	asm volatile("" : "+r"(slot));
	if (slot >= SH_WH_RULES) {
		__sync_fetch_and_add(&w->rule_overflow, 1);
		return;
	}
	e = &w->rule[slot];
	e->level = level;
	e->optname = optname;
	e->action = action;
	e->extra = extra;
	__sync_fetch_and_add(&e->n, 1);
}

/* A sockopt rule's would-have: the rule map's value says its slot. */
static __always_inline void audit_rule(struct sh_would_have *gen,
				       const struct bpf_sockopt *ctx,
				       const struct sh_opt_rule *rule)
{
	audit_count(gen, rule->audit_slot, ctx->level, ctx->optname,
		    rule->action, 0);
}

/* An option the allow-list does not name: its own counter, while free
 * ones last. */
static __always_inline void audit_miss(struct sh_would_have *gen,
				       const struct bpf_sockopt *ctx)
{
	struct sh_would_have *w = would_have_of(gen);
	__u64 key = ((__u64)((__u32)ctx->level + 1) << 32) |
		    (__u32)ctx->optname;

	for (__u32 i = 0; i < SH_WH_MISSES; i++) {
		struct sh_wh_miss *m = &w->miss[i];
		__u64 old = m->key;

		if (!old)
			old = __sync_val_compare_and_swap(&m->key, 0, key);
		if (!old || old == key) {
			__sync_fetch_and_add(&m->n, 1);
			return;
		}
	}
	__sync_fetch_and_add(&w->miss_overflow, 1);
}

#endif /* AUDIT_MODE_BPF_H */
