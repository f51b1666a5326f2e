// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup/setsockopt: runs before the kernel handler. Rules are looked up by
 * (level, optname) in a hash map so the cost does not grow with the rule
 * count. Options with no rule cost one lookup.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sockopt_hook.h"
#include "counters.bpf.h"
#include "optval.bpf.h"

/* Allow-list mode: options without a rule are refused. */
const volatile __u32 default_deny;

static __always_inline int clamp_int(struct bpf_sockopt *ctx,
				     const struct sh_opt_rule *rule)
{
	__s32 *optval = ctx->optval;
	__s32 value;

	if (ctx->optlen < (int)sizeof(value) ||
	    (void *)(optval + 1) > ctx->optval_end)
		return 1; /* not an int: let the kernel reject it */
	value = *optval;
	if (value < rule->min)
		value = rule->min;
	else if (value > rule->max)
		value = rule->max;
	if (value != *optval) {
		*optval = value;
		count_event(SH_CNT_SET_CLAMPED);
	}
	return 1;
}

static __always_inline int apply_rule(struct bpf_sockopt *ctx,
				      const struct sh_opt_rule *rule)
{
	switch (rule->action) {
	case SH_ACTION_DENY:
		count_event(SH_CNT_SET_DENIED);
		return 0;
	case SH_ACTION_CLAMP:
		return clamp_int(ctx, rule);
	case SH_ACTION_FORCE_INT:
		if (write_int(ctx, forced_int(rule)))
			count_event(SH_CNT_SET_FORCED);
		return 1;
	case SH_ACTION_FORCE_BYTES:
		if (write_bytes(ctx, rule))
			count_event(SH_CNT_SET_FORCED);
		return 1;
	default:
		return 1;
	}
}

SEC("cgroup/setsockopt")
int sh_setsockopt(struct bpf_sockopt *ctx)
{
	const struct sh_opt_rule *rule = find_rule(ctx);

	if (!rule) {
		if (default_deny) {
			count_event(SH_CNT_SET_DENIED);
			return 0;
		}
		goto pass;
	}
	/* We only see the first page of a larger value: never rewrite it. */
	if (ctx->optlen > SH_PAGE_SIZE && rule->action != SH_ACTION_DENY)
		goto pass;
	return apply_rule(ctx, rule);
pass:
	/* optlen 0 tells the kernel to use the caller's untouched buffer. */
	if (ctx->optlen > SH_PAGE_SIZE)
		set_optlen(ctx, 0);
	return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
