/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record mode: every distinct call a container makes is noted in a hash
 * map of fixed size (SH_FP_MAX entries, preallocated), after the policy
 * decided: a count and the range of values of the calls it let through,
 * and a count of those it refused. A call that finds the table full only
 * bumps fp_overflow: no workload can grow kernel memory. The flag is
 * frozen in .rodata, so a copy that does not record has none of this code,
 * and its tables are sized to one entry by the hook.
 */
#ifndef FOOTPRINT_BPF_H
#define FOOTPRINT_BPF_H

#include "sockopt_hook.h"

#define SH_FP_EEXIST 17
#define SH_FP_SOL_IP 0
#define SH_FP_SOL_SOCKET 1
#define SH_FP_SOL_IPV6 41
#define SH_FP_SO_MAX_PACING_RATE 47

const volatile __u32 footprint_on;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SH_FP_MAX); /* 1 when not recording */
	__type(key, struct sh_fp_map_key);
	__type(value, struct sh_fp_value);
} footprint SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} fp_overflow SEC(".maps");

static __always_inline void fp_overflowed(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&fp_overflow, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* verdict: what the program returns (0: the call is refused). */
static __always_inline void fp_note(const struct sh_fp_map_key *key,
				    int verdict, int has, __s64 v)
{
	struct sh_fp_value *e = bpf_map_lookup_elem(&footprint, key);
	struct sh_fp_value fresh = {};
	long r;

	if (!e) {
		r = bpf_map_update_elem(&footprint, key, &fresh, BPF_NOEXIST);
		if (r && r != -SH_FP_EEXIST) {
			fp_overflowed();
			return;
		}
		e = bpf_map_lookup_elem(&footprint, key);
		if (!e)
			return;
	}
	/* Plain stores, no lock prefix: racing calls on other CPUs may lose
	 * a count or miss each other's bound. It is a hint, not a rule: the
	 * option is in the table either way, and whether it was refused does
	 * not change under one policy. */
	if (!verdict) {
		if (e->refused != ~0U)
			e->refused += 1;
		return;
	}
	e->count += 1;
	if (!has)
		return;
	if (!e->has_value) {
		e->min = e->max = v;
		e->has_value = 1;
		return;
	}
	if (v < e->min)
		e->min = v;
	if (v > e->max)
		e->max = v;
}

/*
 * The int the kernel handler will read (sk_setsockopt, do_ip_setsockopt,
 * do_ipv6_setsockopt): 4 bytes, one unsigned byte for a short IPv4 value,
 * 0 for a short IPv6 one, a u64 for an 8-byte pacing rate. 0: none.
 */
static __always_inline int fp_value(struct bpf_sockopt *ctx, __s64 *v)
{
	__u8 *p = ctx->optval;
	int len = ctx->optlen;
	__u64 wide;
	__s32 i;

	if (len >= 8 && ctx->level == SH_FP_SOL_SOCKET &&
	    ctx->optname == SH_FP_SO_MAX_PACING_RATE &&
	    (void *)(p + 8) <= ctx->optval_end) {
		__builtin_memcpy(&wide, p, sizeof(wide));
		*v = wide > (__u64)__LONG_MAX__ ? __LONG_MAX__ : (__s64)wide;
		return 1;
	}
	if (len >= 4 && (void *)(p + 4) <= ctx->optval_end) {
		__builtin_memcpy(&i, p, sizeof(i));
		*v = i;
		return 1;
	}
	if (len >= 4)
		return 0;
	if (ctx->level == SH_FP_SOL_IPV6) {
		*v = 0;
		return 1;
	}
	if (ctx->level != SH_FP_SOL_IP)
		return 0;
	if (len <= 0) {
		*v = 0;
		return 1;
	}
	if ((void *)(p + 1) > ctx->optval_end)
		return 0;
	*v = p[0];
	return 1;
}

/*
 * setsockopt: the value is read before the policy decides (a clamp or a
 * force rewrites the buffer), the entry noted after, with the verdict.
 * The key is the call's (level, option) as the caller gave them.
 */
struct fp_call {
	struct sh_fp_map_key key;
	__s64 v;
	int has;
};

static __always_inline void footprint_set_begin(struct bpf_sockopt *ctx,
						struct fp_call *call)
{
	if (!footprint_on)
		return;
	call->key.a = ctx->level;
	call->key.b = ctx->optname;
	call->v = 0;
	call->has = fp_value(ctx, &call->v);
}

static __always_inline void footprint_set_end(const struct fp_call *call,
					      int verdict)
{
	if (footprint_on)
		fp_note(&call->key, verdict, call->has, call->v);
}

static __always_inline void footprint_get(const struct bpf_sockopt *ctx,
					  int verdict)
{
	struct sh_fp_map_key key = { ctx->level, ctx->optname };

	if (footprint_on)
		fp_note(&key, verdict, 0, 0);
}

static __always_inline void footprint_sock(const struct bpf_sock *sk,
					   int verdict)
{
	struct sh_fp_map_key key = { sk->family,
				     (__s32)((sk->type & 0xffff) << 16 |
					     (sk->protocol & 0xffff)) };

	if (footprint_on)
		fp_note(&key, verdict, 0, 0);
}

#endif /* FOOTPRINT_BPF_H */
