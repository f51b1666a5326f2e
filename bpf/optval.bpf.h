/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Helpers shared by the setsockopt and getsockopt programs. */
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
 * clang may fold &ctx->optlen into a derived pointer, which the verifier
 * refuses for context stores: hide ctx so the store stays ctx + offset.
 */
static __always_inline void set_optlen(struct bpf_sockopt *ctx, int len)
{
	asm volatile("" : "+r"(ctx));
	ctx->optlen = len;
}

static __always_inline void set_retval(struct bpf_sockopt *ctx, int retval)
{
	asm volatile("" : "+r"(ctx));
	ctx->retval = retval;
}

static __always_inline const struct sh_opt_rule *
find_rule(const struct bpf_sockopt *ctx)
{
	struct sh_opt_key key = { .level = ctx->level,
				  .optname = ctx->optname };

	return bpf_map_lookup_elem(&rules, &key);
}

/* Returns 1 if the int was written, 0 if the buffer is too short. */
static __always_inline int write_int(struct bpf_sockopt *ctx, __s32 value)
{
	__s32 *optval = ctx->optval;

	if ((void *)(optval + 1) > ctx->optval_end)
		return 0;
	*optval = value;
	set_optlen(ctx, sizeof(*optval));
	return 1;
}

static __always_inline int write_bytes(struct bpf_sockopt *ctx,
				       const struct sh_opt_rule *rule)
{
	__u8 *optval = ctx->optval;
	__u32 len = rule->value_len;

	if (len > SH_OPT_VALUE_MAX ||
	    (void *)(optval + SH_OPT_VALUE_MAX) > ctx->optval_end)
		return 0;
	__builtin_memcpy(optval, rule->value, SH_OPT_VALUE_MAX);
	set_optlen(ctx, len);
	return 1;
}

static __always_inline __s32 forced_int(const struct sh_opt_rule *rule)
{
	return *(const __s32 *)rule->value;
}

#endif /* OPTVAL_BPF_H */
