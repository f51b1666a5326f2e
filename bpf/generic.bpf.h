/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sockopt programs' generic variant (generic_map.h): the attachment's
 * state and the containers' rules maps. A specialised load neither creates
 * nor references these maps (the hook turns them off), and a generic load
 * none of the specialised copy's.
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

/* What each container's own rules map looks like (the hook makes them). */
struct sh_gen_rules_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, struct sh_opt_key);
	__type(value, struct sh_opt_rule);
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, SH_GEN_RULES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__array(values, struct sh_gen_rules_inner);
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

/* The container's rules map: NULL refuses the call (fail closed). */
static __always_inline void *gen_rules_of(const struct sh_gen_opt_state *st)
{
	__u64 key = st->rules;

	return bpf_map_lookup_elem(&gen_rules, &key);
}

static __always_inline const struct sh_opt_rule *
gen_find_rule(void *rules, const struct bpf_sockopt *ctx)
{
	struct sh_opt_key key = { .level = ctx->level,
				  .optname = ctx->optname };

	return bpf_map_lookup_elem(rules, &key);
}

#endif /* GENERIC_BPF_H */
