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
#include "footprint.bpf.h"
#include "audit_mode.bpf.h"
#include "generic.bpf.h"

/* Allow-list mode: options without a rule are refused (a specialised
 * copy; the generic program reads it from the attachment's state). */
const volatile __u32 default_deny;

/* Record mode: how the kernel keeps each int option the hook knows, so
 * that the footprint notes values in the option's type (footprint.bpf.h),
 * by slot (sh_fp_domain_slot()): an array, whose lookup the verifier
 * inlines, as every setsockopt of a recorded container makes one.
 * Filled and frozen by the hook in a recording copy; one entry, never
 * read, in any other. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SH_FP_DOMAINS_MAX);
	__type(key, __u32);
	__type(value, struct sh_fp_domain);
	__uint(map_flags, BPF_F_RDONLY_PROG);
} fp_domains SEC(".maps");

/*
 * The value the kernel handler will read from this buffer and length, as
 * sk_setsockopt, do_ip_setsockopt and do_ipv6_setsockopt read it; a pacing
 * rate comes out already as the u64 the kernel keeps. Returns 0 when the
 * kernel refuses the length itself: nothing to police.
 */
static __always_inline int read_raw(struct bpf_sockopt *ctx,
				    const struct sh_opt_rule *rule, __s64 *raw)
{
	__u8 *p = ctx->optval;
	int len = ctx->optlen;
	__u64 wide;
	__s32 v;

	if (len >= 8 && USES_DOMAIN(rule, SH_DOM_PACING)) {
		if ((void *)(p + 8) > ctx->optval_end)
			return 0;
		__builtin_memcpy(&wide, p, sizeof(wide));
		*raw = wide > (__u64)__LONG_MAX__ ? __LONG_MAX__ : (__s64)wide;
		return 1;
	}
	if (len >= 4) {
		if ((void *)(p + 4) > ctx->optval_end)
			return 0;
		__builtin_memcpy(&v, p, sizeof(v));
		*raw = v;
		if (USES_DOMAIN(rule, SH_DOM_PACING))
			*raw = (__u32)v == ~0U ? __LONG_MAX__ : (__u32)v;
		return 1;
	}
	if (USES(SH_USES_SHORT(SH_SHORT_ZERO)) &&
	    rule->short_read == SH_SHORT_ZERO) {
		*raw = 0;
		return 1;
	}
	if (!USES(SH_USES_SHORT(SH_SHORT_BYTE)) ||
	    rule->short_read != SH_SHORT_BYTE ||
	    (void *)(p + 1) > ctx->optval_end)
		return 0;
	*raw = len ? p[0] : 0;
	return 1;
}

/* Where the kernel keeps what it read, as the clamp must compare it. */
static __always_inline __s64 normalize(__s64 raw,
				       const struct sh_opt_rule *rule)
{
	if (USES_DOMAIN(rule, SH_DOM_U32))
		return (__u32)raw;
	if (USES_DOMAIN(rule, SH_DOM_BOOL))
		return raw != 0;
	if (USES_DOMAIN(rule, SH_DOM_U8))
		return raw & 0xff;
	if (USES_DOMAIN(rule, SH_DOM_NEG_TO))
		return raw < 0 ? rule->special : raw;
	if (USES_DOMAIN(rule, SH_DOM_M1_TO))
		return raw == -1 ? rule->special : raw;
	return raw;
}

/*
 * Rewrites the value as an int (a u64 for a pacing rate beyond u32) and
 * sets optlen to its size, so the kernel reads exactly this, whatever
 * length the caller passed. setsockopt buffers hold at least 16 bytes.
 */
static __always_inline int write_value(struct bpf_sockopt *ctx, __s64 value,
				       int pacing)
{
	__u8 *p = ctx->optval;

	if ((void *)(p + 8) > ctx->optval_end)
		return 0;
	if (USES(SH_USES_DOMAIN(SH_DOM_PACING)) && pacing &&
	    (__u64)value >= ~0U) {
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

/* One path into the comparison, however the value was read. */
static __always_inline int clamp_value(struct bpf_sockopt *ctx,
				       const struct sh_opt_rule *rule,
				       struct sh_would_have *w)
{
	int pacing = USES_DOMAIN(rule, SH_DOM_PACING);
	__s64 raw, value, clamped;

	if (!read_raw(ctx, rule, &raw))
		return pass(ctx); /* a length the kernel refuses */
	value = normalize(raw, rule);
	clamped = value < rule->min ? rule->min :
		  value > rule->max ? rule->max :
				      value;
	if (clamped != value) {
		if (AUDIT_ON) { /* audit mode */
			audit_rule(w, ctx, rule);
			return pass(ctx);
		}
		if (write_value(ctx, clamped, pacing))
			count_event(SH_CNT_SET_CLAMPED);
		return 1;
	}
	/* In range: the kernel may read the caller's first bytes as they are,
	 * but only from our page-sized copy. */
	if (ctx->optlen > (int)page_size)
		set_optlen(ctx, pacing ? 8 : 4);
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

/* w: the generic program's would-have counters, NULL for a specialised
 * copy's own (audit_mode.bpf.h). */
static __always_inline int apply_rule(struct bpf_sockopt *ctx,
				      const struct sh_opt_rule *rule,
				      struct sh_would_have *w)
{
	__u32 action = rule->action;

	if (AUDIT_ON && action != SH_ACTION_CLAMP) { /* audit mode */
		if (action != SH_ACTION_ALLOW)
			audit_rule(w, ctx, rule);
		return pass(ctx);
	}
	if (USES(SH_USES_ACTION(SH_ACTION_DENY)) && action == SH_ACTION_DENY) {
		count_event(SH_CNT_SET_DENIED);
		return 0;
	}
	if (USES(SH_USES_ACTION(SH_ACTION_CLAMP)) && action == SH_ACTION_CLAMP)
		return clamp_value(ctx, rule, w);
	if (USES(SH_USES_ACTION(SH_ACTION_FORCE_INT)) &&
	    action == SH_ACTION_FORCE_INT) {
		if (write_value(ctx, rule_int(rule),
				USES_DOMAIN(rule, SH_DOM_PACING)))
			count_event(SH_CNT_SET_FORCED);
		return 1;
	}
	if (USES(SH_USES_ACTION(SH_ACTION_FORCE_BYTES)) &&
	    action == SH_ACTION_FORCE_BYTES) {
		if (force_bytes(ctx, rule))
			count_event(SH_CNT_SET_FORCED);
		return 1;
	}
	return pass(ctx);
}

/* An option no rule names. */
static __always_inline int no_rule(struct bpf_sockopt *ctx, __u32 deny,
				   struct sh_would_have *w)
{
	if (deny && AUDIT_ON) { /* audit mode */
		audit_miss(w, ctx);
		return pass(ctx);
	}
	if (deny) {
		count_event(SH_CNT_SET_DENIED);
		return 0;
	}
	return pass(ctx);
}

/* A specialised copy: the policy is in .rodata and the frozen rules map. */
static __always_inline int decide(struct bpf_sockopt *ctx)
{
	const struct sh_opt_rule *rule = find_rule(ctx);

	if (rule)
		return apply_rule(ctx, rule, NULL);
	return no_rule(ctx, default_deny, NULL);
}

/* The generic program (generic.bpf.h): the policy is the attachment's. */
SEC("cgroup/setsockopt")
int sh_gen_set(struct bpf_sockopt *ctx)
{
	struct sh_gen_opt_state *st = gen_opt_state();
	const struct sh_opt_rule *rule;

	if (!st)
		return 0; /* attached, its policy not written yet */
	rule = gen_find_rule(st, ctx);
	if (rule)
		return apply_rule(ctx, rule, &st->wh);
	return no_rule(ctx, st->default_deny, &st->wh);
}

SEC("cgroup/setsockopt")
int sh_setsockopt(struct bpf_sockopt *ctx)
{
	struct sh_fp_value *noted;
	int verdict;

	if (!footprint_on)
		return decide(ctx);
	noted = footprint_set(ctx, &fp_domains); /* record mode */
	/* A copy with no rule finds none: no lookup (rule_uses is 0 exactly
	 * then; record mode runs for every call, so as to note it). */
	verdict = rule_uses ? decide(ctx) : no_rule(ctx, default_deny, NULL);
	footprint_verdict(noted, verdict);
	return verdict;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
