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
#include "footprint.bpf.h"
#include "audit_mode.bpf.h"
#include "generic.bpf.h"

#define SOL_TCP 6
#define TCP_ZEROCOPY_RECEIVE 35
#define U32_MAX 0xffffffffULL

/*
 * The kernel has already answered this call for the real value: its optlen
 * says how much of the caller's buffer the answer took, min(len, 4) for an
 * int, min(len, 16) for a congestion control name, 8 for a u64 when it fits.
 * A forced value is written in the same shape, so the caller cannot tell it
 * from a real one.
 */

/* An IPv4 int comes back as one byte when the buffer is short and the
 * value fits; the kernel's answer may have been one byte for a value that
 * did not, so the buffer's size is probed then. */
static __always_inline int int_len(const struct bpf_sockopt *ctx,
				   const struct sh_opt_rule *rule, __s64 v)
{
	int n = ctx->optlen;
	__u8 *p = ctx->optval;

	if (n >= 4)
		return 4;
	if (!USES(SH_USES_GET(SH_GET_INT_BYTE)) ||
	    rule->get_form != SH_GET_INT_BYTE || n <= 0)
		return n;
	if (v >= 0 && v <= 255)
		return 1;
	if ((void *)(p + 3) <= ctx->optval_end)
		return 3;
	return (void *)(p + 2) <= ctx->optval_end ? 2 : 1;
}

/* Fills buf with what the caller must read and returns its length. */
static __always_inline int forced_bytes(const struct bpf_sockopt *ctx,
					const struct sh_opt_rule *rule,
					__u8 *buf)
{
	__s64 v = rule_int(rule);
	__s32 i;
	int n;

	if (USES(SH_USES_ACTION(SH_ACTION_FORCE_BYTES)) &&
	    rule->action == SH_ACTION_FORCE_BYTES) {
		__builtin_memcpy(buf, rule->value, SH_OPT_VALUE_MAX);
		if (USES(SH_USES_GET(SH_GET_STR_NUL)) &&
		    rule->get_form == SH_GET_STR_NUL)
			return rule->value_len + 1;
		return ctx->optlen < SH_OPT_VALUE_MAX ? ctx->optlen :
							SH_OPT_VALUE_MAX;
	}
	if (USES(SH_USES_GET(SH_GET_U64)) && rule->get_form == SH_GET_U64) {
		if (ctx->optlen == 8) {
			__builtin_memcpy(buf, &v, sizeof(v));
			return sizeof(v);
		}
		if ((__u64)v > U32_MAX)
			v = U32_MAX;
	}
	n = int_len(ctx, rule, v);
	if (n == 1 && USES(SH_USES_GET(SH_GET_INT_BYTE)) &&
	    rule->get_form == SH_GET_INT_BYTE && v >= 0 && v <= 255) {
		buf[0] = v;
		return 1;
	}
	i = v;
	__builtin_memcpy(buf, &i, sizeof(i));
	return n;
}

/* Writes n bytes in at most four stores. */
static __always_inline void put(struct bpf_sockopt *ctx, const __u8 *src, int n)
{
	__u8 *p = ctx->optval;
	void *end = ctx->optval_end;

	if (n < 0 || n > SH_OPT_VALUE_MAX)
		return;
	if (n == SH_OPT_VALUE_MAX) {
		if ((void *)(p + 16) > end)
			return;
		__builtin_memcpy(p, src, 16);
		goto done;
	}
	/* Below 16 bytes: 8, 4, 2 and 1 as n's bits say. */
	if (n & 8) {
		if ((void *)(p + 8) > end)
			return;
		__builtin_memcpy(p, src, 8);
		p += 8;
		src += 8;
	}
	if (n & 4) {
		if ((void *)(p + 4) > end)
			return;
		__builtin_memcpy(p, src, 4);
		p += 4;
		src += 4;
	}
	if (n & 2) {
		if ((void *)(p + 2) > end)
			return;
		__builtin_memcpy(p, src, 2);
		p += 2;
		src += 2;
	}
	if (n & 1) {
		if ((void *)(p + 1) > end)
			return;
		*p = *src;
	}
done:
	set_optlen(ctx, n);
}

static __always_inline int force_value(struct bpf_sockopt *ctx,
				       const struct sh_opt_rule *rule)
{
	__u8 buf[SH_OPT_VALUE_MAX] = {};

	put(ctx, buf, forced_bytes(ctx, rule, buf));
	count_event(SH_CNT_GET_FORCED);
	return 1;
}

/* The rule for this call, or NULL: the same for both variants. */
static __always_inline int apply_get(struct bpf_sockopt *ctx,
				     const struct sh_opt_rule *rule,
				     struct sh_would_have *w)
{
	if (AUDIT_ON &&
	    rule) { /* audit mode: forcing only hides a real value */
		if (rule->action == SH_ACTION_DENY ||
		    (rule->action >= SH_ACTION_FORCE_INT && !ctx->retval))
			audit_rule(w, ctx, rule);
		return pass(ctx);
	}
	if (rule && rule->action == SH_ACTION_DENY) {
		count_event(SH_CNT_GET_DENIED);
		return 0;
	}
	/* Only a value the kernel did return needs hiding. */
	if ((USES(SH_USES_ACTION(SH_ACTION_FORCE_INT)) ||
	     USES(SH_USES_ACTION(SH_ACTION_FORCE_BYTES))) &&
	    rule && rule->action >= SH_ACTION_FORCE_INT && !ctx->retval)
		return force_value(ctx, rule);
	return pass(ctx);
}

/* The zerocopy fast path must stay fast: no lookup, no copy. */
static __always_inline int zerocopy(const struct bpf_sockopt *ctx)
{
	return ctx->level == SOL_TCP && ctx->optname == TCP_ZEROCOPY_RECEIVE;
}

/* A specialised copy: the policy is in .rodata and the frozen rules map. */
SEC("cgroup/getsockopt")
int sh_getsockopt(struct bpf_sockopt *ctx)
{
	struct sh_fp_value *noted;
	int verdict;

	if (zerocopy(ctx))
		return 1;
	if (!footprint_on)
		return apply_get(ctx, find_rule(ctx), NULL);
	noted = footprint_get(ctx); /* record mode */
	verdict = apply_get(ctx, rule_uses ? find_rule(ctx) : NULL, NULL);
	footprint_verdict(noted, verdict);
	return verdict;
}

/* The generic program (generic.bpf.h): the policy is the attachment's. */
SEC("cgroup/getsockopt")
int sh_gen_get(struct bpf_sockopt *ctx)
{
	struct sh_gen_opt_state *st;

	if (zerocopy(ctx))
		return 1;
	st = gen_opt_state();
	if (!st)
		return 0; /* attached, its policy not written yet */
	return apply_get(ctx, gen_find_rule(st, ctx), &st->wh);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
