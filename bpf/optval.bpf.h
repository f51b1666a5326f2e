/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers shared by the setsockopt and getsockopt programs: the rule map,
 * the page size and the context stores.
 */
#ifndef OPTVAL_BPF_H
#define OPTVAL_BPF_H

#include "sockopt_hook.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* sized by the hook before load */
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, struct sh_opt_key);
	__type(value, struct sh_opt_rule);
} rules SEC(".maps");

/*
 * The running kernel's PAGE_SIZE, set by the hook: programs see at most a
 * page of optval, and a larger optlen must be dealt with explicitly.
 */
const volatile __u32 page_size = 4096;

/* SH_USES_* bits of the policy's rules (see sockopt_hook.h). */
const volatile __u32 rule_uses;

#define USES(bit) (rule_uses & (bit))
#define USES_DOMAIN(r, d) (USES(SH_USES_DOMAIN(d)) && (r)->domain == (d))

/*
 * clang may fold &ctx->optlen into a derived pointer, which the verifier
 * refuses for context stores: hide ctx so the store stays ctx + offset.
 */
static __always_inline void set_optlen(struct bpf_sockopt *ctx, int len)
{
	asm volatile("" : "+r"(ctx));
	ctx->optlen = len;
}

static __always_inline const struct sh_opt_rule *
find_rule(const struct bpf_sockopt *ctx)
{
	struct sh_opt_key key = { .level = ctx->level,
				  .optname = ctx->optname };

	return bpf_map_lookup_elem(&rules, &key);
}

/* optlen 0 tells the kernel to use the caller's untouched buffer. */
static __always_inline int pass(struct bpf_sockopt *ctx)
{
	if (ctx->optlen > (int)page_size)
		set_optlen(ctx, 0);
	return 1;
}

static __always_inline __s64 rule_int(const struct sh_opt_rule *rule)
{
	__s64 v;

	__builtin_memcpy(&v, rule->value, sizeof(v));
	return v;
}

#endif /* OPTVAL_BPF_H */
