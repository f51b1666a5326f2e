/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sockopt programs' generic variant (generic_map.h): the attachment's
 * state and the containers' rules. A specialised load neither creates nor
 * references these maps (the hook turns them off), and a generic load none
 * of the specialised copy's.
 */
#ifndef GENERIC_BPF_H
#define GENERIC_BPF_H

#include "sockopt_hook.h"
#include "generic_map.h"

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct sh_gen_opt_state); /* without wh in enforce mode */
} gen_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SH_GEN_RULES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG);
	__type(key, struct sh_gen_rule_key);
	__type(value, struct sh_opt_rule);
} gen_rules SEC(".maps");

/*
 * The attachment's state, or NULL when the hook has not written it yet: the
 * caller refuses the call then.
 */
static __always_inline struct sh_gen_opt_state *gen_opt_state(void)
{
	struct sh_gen_opt_state *st = bpf_get_local_storage(&gen_state, 0);

	return st->flags & SH_GEN_READY ? st : NULL;
}

/* The rule of the container's policy for this call, or NULL. */
static __always_inline const struct sh_opt_rule *
gen_find_rule(const struct sh_gen_opt_state *st, const struct bpf_sockopt *ctx)
{
	struct sh_gen_rule_key key = { .rules = st->rules,
				       .level = ctx->level,
				       .optname = ctx->optname };

	if (!(st->hint & sh_gen_hint_bit(key.level, key.optname)))
		return NULL;
	return bpf_map_lookup_elem(&gen_rules, &key);
}

#endif /* GENERIC_BPF_H */
