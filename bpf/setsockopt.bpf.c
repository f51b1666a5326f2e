// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup/setsockopt: runs before the kernel handler. Rules are looked up by
 * (level, optname) in a hash map so the cost does not grow with the rule
 * count. Options with no rule cost one lookup.
 *
 * The program sees at most a page of the caller's value. If it leaves a
 * larger optlen alone, the kernel ignores the program's buffer and hands
 * the handler the caller's untouched one; so every rule that rewrites sets
 * optlen to the size of what it wrote, and every rule reads the value the
 * way the handler will (a single byte for IPv4, 0 for short IPv6 values).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sockopt_hook.h"
#include "counters.bpf.h"
#include "optval.bpf.h"

/* Allow-list mode: options without a rule are refused. */
const volatile __u32 default_deny;

static __always_inline int clamp_value(struct bpf_sockopt *ctx,
				       const struct sh_opt_rule *rule)
{
	__s64 value, clamped;

	if (!read_value(ctx, rule, &value))
		return pass(ctx); /* a length the kernel refuses */
	clamped = value < rule->min ? rule->min :
		  value > rule->max ? rule->max :
				      value;
	if (clamped != value) {
		if (write_value(ctx, rule, clamped))
			count_event(SH_CNT_SET_CLAMPED);
		return 1;
	}
	/* In range: the kernel may read the caller's first bytes as they are,
	 * but only from our page-sized copy. */
	if (ctx->optlen > (int)page_size)
		set_optlen(ctx, rule->domain == SH_DOM_PACING ? 8 : 4);
	return 1;
}

static __always_inline int force_bytes(struct bpf_sockopt *ctx,
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

static __always_inline int apply_rule(struct bpf_sockopt *ctx,
				      const struct sh_opt_rule *rule)
{
	switch (rule->action) {
	case SH_ACTION_DENY:
		count_event(SH_CNT_SET_DENIED);
		return 0;
	case SH_ACTION_CLAMP:
		return clamp_value(ctx, rule);
	case SH_ACTION_FORCE_INT:
		if (write_value(ctx, rule, rule_int(rule)))
			count_event(SH_CNT_SET_FORCED);
		return 1;
	case SH_ACTION_FORCE_BYTES:
		if (force_bytes(ctx, rule))
			count_event(SH_CNT_SET_FORCED);
		return 1;
	default:
		return pass(ctx);
	}
}

SEC("cgroup/setsockopt")
int sh_setsockopt(struct bpf_sockopt *ctx)
{
	const struct sh_opt_rule *rule = find_rule(ctx);

	if (rule)
		return apply_rule(ctx, rule);
	if (default_deny) {
		count_event(SH_CNT_SET_DENIED);
		return 0;
	}
	return pass(ctx);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
