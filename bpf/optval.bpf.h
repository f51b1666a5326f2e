/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers shared by the setsockopt and getsockopt programs: the rule map,
 * and reading and writing option values the way the kernel handlers do.
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

/* Where the kernel keeps what it reads, as the clamp must compare it. */
static __always_inline __s64 normalize(__s64 raw, const struct sh_opt_rule *r)
{
	switch (r->domain) {
	case SH_DOM_U32:
		return (__u32)raw;
	case SH_DOM_BOOL:
		return raw != 0;
	case SH_DOM_U8:
		return raw & 0xff;
	case SH_DOM_NEG_TO:
		return raw < 0 ? r->special : raw;
	case SH_DOM_M1_TO:
		return raw == -1 ? r->special : raw;
	default:
		return raw;
	}
}

/*
 * The value the kernel handler will read from this buffer and length, as
 * sk_setsockopt, do_ip_setsockopt and do_ipv6_setsockopt read it. Returns
 * 0 when the kernel refuses the length itself: nothing to police.
 */
static __always_inline int read_value(struct bpf_sockopt *ctx,
				      const struct sh_opt_rule *rule,
				      __s64 *value)
{
	__u8 *p = ctx->optval;
	int len = ctx->optlen;

	if (len >= 8 && rule->domain == SH_DOM_PACING) {
		__u64 v;

		if ((void *)(p + 8) > ctx->optval_end)
			return 0;
		__builtin_memcpy(&v, p, sizeof(v));
		*value = v > (__u64)__LONG_MAX__ ? __LONG_MAX__ : (__s64)v;
		return 1;
	}
	if (len >= 4) {
		__s32 v;

		if ((void *)(p + 4) > ctx->optval_end)
			return 0;
		__builtin_memcpy(&v, p, sizeof(v));
		if (rule->domain == SH_DOM_PACING)
			*value = (__u32)v == ~0U ? __LONG_MAX__ : (__u32)v;
		else
			*value = normalize(v, rule);
		return 1;
	}
	if (rule->short_read == SH_SHORT_ZERO) {
		*value = normalize(0, rule);
		return 1;
	}
	if (rule->short_read != SH_SHORT_BYTE ||
	    (void *)(p + 1) > ctx->optval_end)
		return 0;
	*value = normalize(len ? p[0] : 0, rule);
	return 1;
}

/*
 * Rewrites the value as an int (a u64 for a pacing rate beyond u32) and
 * sets optlen to its size, so the kernel reads exactly this, whatever
 * length the caller passed. setsockopt buffers hold at least 16 bytes.
 */
static __always_inline int write_value(struct bpf_sockopt *ctx,
				       const struct sh_opt_rule *rule,
				       __s64 value)
{
	__u8 *p = ctx->optval;

	if ((void *)(p + 8) > ctx->optval_end)
		return 0;
	if (rule->domain == SH_DOM_PACING && (__u64)value >= ~0U) {
		__u64 v = value;

		__builtin_memcpy(p, &v, sizeof(v));
		set_optlen(ctx, sizeof(v));
	} else {
		__s32 v = value;

		__builtin_memcpy(p, &v, sizeof(v));
		set_optlen(ctx, sizeof(v));
	}
	return 1;
}

#endif /* OPTVAL_BPF_H */
