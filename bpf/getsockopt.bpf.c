// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup/getsockopt: runs after the kernel handler has already copied the
 * real value to the caller. Denying turns the call into EPERM but cannot
 * take those bytes back; forcing rewrites them, as many as the caller's
 * buffer holds and in the form the kernel itself would have used.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sockopt_hook.h"
#include "counters.bpf.h"
#include "optval.bpf.h"

#define SOL_TCP 6
#define TCP_ZEROCOPY_RECEIVE 35
#define U32_MAX 0xffffffffULL

/* How many bytes of the caller's buffer we may write, up to 16. */
static __always_inline int capacity(const struct bpf_sockopt *ctx)
{
	__u8 *p = ctx->optval;
	void *end = ctx->optval_end;
	int cap = 0;

#pragma unroll
	for (int i = 1; i <= SH_OPT_VALUE_MAX; i++)
		if ((void *)(p + i) <= end)
			cap = i;
	return cap;
}

static __always_inline void put(struct bpf_sockopt *ctx, const __u8 *src, int n)
{
	__u8 *p = ctx->optval;
	void *end = ctx->optval_end;

#pragma unroll
	for (int i = 0; i < SH_OPT_VALUE_MAX; i++)
		if (i < n && (void *)(p + i + 1) <= end)
			p[i] = src[i];
	set_optlen(ctx, n);
}

/* The bytes and length a real int of this value would come back as. */
static __always_inline void force_int(struct bpf_sockopt *ctx,
				      const struct sh_opt_rule *rule, int cap)
{
	__u8 buf[SH_OPT_VALUE_MAX] = {};
	__s64 v = rule_int(rule);
	__s32 i;

	if (rule->get_form == SH_GET_U64 && cap >= 8) {
		__builtin_memcpy(buf, &v, sizeof(v));
		put(ctx, buf, sizeof(v));
		return;
	}
	if (rule->get_form == SH_GET_U64 && (__u64)v > U32_MAX)
		v = U32_MAX;
	if (rule->get_form == SH_GET_INT_BYTE && cap > 0 && cap < 4 && v >= 0 &&
	    v <= 255) {
		buf[0] = v;
		put(ctx, buf, 1);
		return;
	}
	i = v;
	__builtin_memcpy(buf, &i, sizeof(i));
	put(ctx, buf, cap < 4 ? cap : 4);
}

static __always_inline int force_value(struct bpf_sockopt *ctx,
				       const struct sh_opt_rule *rule)
{
	int cap = capacity(ctx), n;

	if (rule->action == SH_ACTION_FORCE_INT) {
		force_int(ctx, rule, cap);
	} else {
		n = rule->get_form == SH_GET_STR_NUL ? rule->value_len + 1 :
						       SH_OPT_VALUE_MAX;
		put(ctx, rule->value, n < cap ? n : cap);
	}
	count_event(SH_CNT_GET_FORCED);
	return 1;
}

SEC("cgroup/getsockopt")
int sh_getsockopt(struct bpf_sockopt *ctx)
{
	const struct sh_opt_rule *rule;

	/* The zerocopy fast path must stay fast: no lookup, no copy. */
	if (ctx->level == SOL_TCP && ctx->optname == TCP_ZEROCOPY_RECEIVE)
		return 1;
	rule = find_rule(ctx);
	if (rule && rule->action == SH_ACTION_DENY) {
		count_event(SH_CNT_GET_DENIED);
		return 0;
	}
	/* Only a value the kernel did return needs hiding. */
	if (rule && rule->action >= SH_ACTION_FORCE_INT && !ctx->retval)
		return force_value(ctx, rule);
	return pass(ctx);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
