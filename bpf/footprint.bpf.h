/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record mode: every distinct call a container makes is noted in a hash
 * map of fixed size (SH_FP_MAX entries, preallocated): a count and the
 * range of values of the calls the policy let through, and a count of
 * those it refused. A call is noted as let through before the policy
 * decides (the hot path costs what it did before refusals were told
 * apart), and moved to refused after, when it was. A call that finds the table full only
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

/*
 * Notes a call as let through, before the policy decides (the value as
 * the caller gave it, before a clamp or force rewrites it): the entry, or
 * NULL when the table is full.
 */
static __always_inline struct sh_fp_value *
fp_note(const struct sh_fp_map_key *key, int has, __s64 v)
{
	struct sh_fp_value *e = bpf_map_lookup_elem(&footprint, key);
	struct sh_fp_value fresh = {};
	long r;

	if (!e) {
		r = bpf_map_update_elem(&footprint, key, &fresh, BPF_NOEXIST);
		if (r && r != -SH_FP_EEXIST) {
			fp_overflowed();
			return NULL;
		}
		e = bpf_map_lookup_elem(&footprint, key);
		if (!e)
			return NULL;
	}
	/* Plain stores, no lock prefix: racing calls on other CPUs may lose
	 * a count or miss each other's bound. It is a hint, not a rule: the
	 * option is in the table either way. */
	e->count += 1;
	if (!has)
		return e;
	if (!e->has_value) {
		e->min = e->max = v;
		e->has_value = SH_FP_KEPT;
		return e;
	}
	if (v < e->min)
		e->min = v;
	if (v > e->max)
		e->max = v;
	return e;
}

/*
 * The policy refused the call just noted: it counts as refused, not let
 * through. Only refusals pay for this; under one policy a (level, option)
 * or socket tuple is refused every time or never, so an entry whose count
 * falls to 0 holds refused calls only, and no value of theirs.
 */
static __always_inline void fp_refused(struct sh_fp_value *e)
{
	if (!e)
		return;
	if (e->count)
		e->count -= 1;
	if (!e->count)
		e->has_value = 0;
	if (e->refused != ~0U)
		e->refused += 1;
}

/*
 * The int the kernel handler will read (sk_setsockopt, do_ip_setsockopt,
 * do_ipv6_setsockopt): 4 bytes, one unsigned byte for a short IPv4 value,
 * 0 for a short IPv6 one; a pacing rate as the u64 the kernel keeps (from
 * 8 bytes, or a u32 with ~0U for unlimited). 0: none.
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
		if (ctx->level == SH_FP_SOL_SOCKET &&
		    ctx->optname == SH_FP_SO_MAX_PACING_RATE)
			*v = (__u32)i == ~0U ? __LONG_MAX__ : (__u32)i;
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
 * The value as the kernel keeps it (setsockopt.bpf.c's normalize(), for
 * every domain): d is the option's entry in the hook's table, or NULL for
 * an option the hook does not know, whose int is kept as read. A pacing
 * rate is kept already (fp_value()).
 */
static __always_inline __s64 fp_kept(__s64 v, const struct sh_fp_domain *d)
{
	if (!d)
		return v;
	switch (d->domain) {
	case SH_DOM_U32:
		return (__u32)v;
	case SH_DOM_BOOL:
		return v != 0;
	case SH_DOM_U8:
		return v & 0xff;
	case SH_DOM_NEG_TO:
		return v < 0 ? d->special : v;
	case SH_DOM_M1_TO:
		return v == -1 ? d->special : v;
	default:
		return v;
	}
}

/* An option's domain in the setsockopt object's fp_domains array, or
 * NULL for an option with no slot (a plain int, as a zero entry is). */
static __always_inline const struct sh_fp_domain *
fp_domain(void *domains, int level, int optname)
{
	int slot = sh_fp_domain_slot(level, optname);
	__u32 k;

	if (slot < 0)
		return NULL;
	k = slot;
	return bpf_map_lookup_elem(domains, &k);
}

/* The entry a call was noted in (record mode), or NULL; domains: the
 * setsockopt object's fp_domains table. */
static __always_inline struct sh_fp_value *
footprint_set(struct bpf_sockopt *ctx, void *domains)
{
	struct sh_fp_map_key key = { ctx->level, ctx->optname };
	__s64 v = 0;
	int has;

	if (!footprint_on)
		return NULL;
	has = fp_value(ctx, &v);
	if (has)
		v = fp_kept(v, fp_domain(domains, key.a, key.b));
	return fp_note(&key, has, v);
}

static __always_inline struct sh_fp_value *
footprint_get(const struct bpf_sockopt *ctx)
{
	struct sh_fp_map_key key = { ctx->level, ctx->optname };

	return footprint_on ? fp_note(&key, 0, 0) : NULL;
}

static __always_inline struct sh_fp_value *
footprint_sock(const struct bpf_sock *sk)
{
	struct sh_fp_map_key key = { sk->family,
				     (__s32)((sk->type & 0xffff) << 16 |
					     (sk->protocol & 0xffff)) };

	return footprint_on ? fp_note(&key, 0, 0) : NULL;
}

/* After the policy decided: a refused call is moved to refused. Frozen
 * off, the verifier drops it with the rest. */
static __always_inline void footprint_verdict(struct sh_fp_value *noted,
					      int verdict)
{
	if (footprint_on && !verdict)
		fp_refused(noted);
}

#endif /* FOOTPRINT_BPF_H */
