// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup/sock_create: deny socket families/types/protocols, stamp mark and
 * priority, and opt the socket out of protocol memory accounting.
 *
 * The policy lives in .rodata, frozen at load, so the verifier prunes every
 * branch this container's policy does not use.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sockopt_hook.h"
#include "counters.bpf.h"
#include "footprint.bpf.h"
#include "audit_mode.bpf.h"
#include "generic_map.h"

#define SOL_SOCKET 1

/* A specialised copy's policy. */
const volatile __u32 nr_deny_rules;
const volatile struct sh_sock_rule deny_rules[SH_MAX_SOCKET_RULES];
const volatile __u32 set_mark;
const volatile __u32 mark;
const volatile __u32 set_priority;
const volatile __u32 priority;

/* The generic program's: the attachment's state (generic_map.h). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value,
	       struct sh_gen_sock_state); /* without wh in enforce mode */
} gen_state SEC(".maps");

static __always_inline int field_matches(__s32 want, __u32 have)
{
	return want == SH_ANY || (__u32)want == have;
}

static __always_inline int rule_matches(const volatile struct sh_sock_rule *r,
					const struct bpf_sock *sk)
{
	return field_matches(r->family, sk->family) &&
	       field_matches(r->type, sk->type) &&
	       field_matches(r->protocol, sk->protocol);
}

/* Whether one of rules[0..nr) matches. */
static __always_inline int denied_by(const volatile struct sh_sock_rule *rules,
				     __u32 nr, const struct bpf_sock *sk)
{
	for (__u32 i = 0; i < SH_MAX_SOCKET_RULES; i++) {
		if (i >= nr)
			break;
		if (rule_matches(&rules[i], sk))
			return 1;
	}
	return 0;
}

/* Audit mode: the first of rules[0..nr) that matches, or -1. */
static __always_inline int
first_match(const volatile struct sh_sock_rule *rules, __u32 nr,
	    const struct bpf_sock *sk)
{
	for (__u32 i = 0; i < SH_MAX_SOCKET_RULES; i++) {
		if (i >= nr)
			break;
		if (rule_matches(&rules[i], sk))
			return i;
	}
	return -1;
}

/* Audit mode: count the first deny rule that matches, else the stamps;
 * apply none of them. gen: the generic program's counters, or NULL. */
static __always_inline int
audit_policy(struct sh_would_have *gen,
	     const volatile struct sh_sock_rule *deny, __u32 nr_deny,
	     __u32 set_mark_, __u32 mark_, __u32 set_priority_, __u32 priority_,
	     struct bpf_sock *sk)
{
	int i = first_match(deny, nr_deny, sk);

	if (i >= 0 && i < SH_MAX_SOCKET_RULES) {
		audit_count(gen, i, deny[i].family, deny[i].type,
			    SH_ACTION_DENY, deny[i].protocol);
	} else {
		if (set_mark_)
			audit_count(gen, SH_WH_SLOT_MARK, SOL_SOCKET,
				    36 /* SO_MARK */, SH_ACTION_FORCE_INT,
				    mark_);
		if (set_priority_)
			audit_count(gen, SH_WH_SLOT_PRIORITY, SOL_SOCKET,
				    12 /* SO_PRIORITY */, SH_ACTION_FORCE_INT,
				    priority_);
	}
	count_event(SH_CNT_SOCK_CREATED);
	return 1;
}

/* A specialised copy: the policy is frozen into .rodata, so the verifier
 * prunes every branch this container's policy does not use. */
static __always_inline int decide(struct bpf_sock *sk)
{
	if (AUDIT_ON) /* audit mode */
		return audit_policy(NULL, deny_rules, nr_deny_rules, set_mark,
				    mark, set_priority, priority, sk);
	if (denied_by(deny_rules, nr_deny_rules, sk)) {
		count_event(SH_CNT_SOCK_DENIED);
		return 0;
	}
	if (set_mark)
		sk->mark = mark;
	if (set_priority)
		sk->priority = priority;
	count_event(SH_CNT_SOCK_CREATED);
	return 1;
}

/* The generic program: the attachment's state, every call refused until
 * the hook has written it. */
static __always_inline int apply_generic(struct bpf_sock *sk)
{
	struct sh_gen_sock_state *st = bpf_get_local_storage(&gen_state, 0);

	if (!(st->flags & SH_GEN_READY))
		return 0;
	if (AUDIT_ON) /* audit mode */
		return audit_policy(&st->wh, st->deny, st->nr_deny,
				    st->set_mark, st->mark, st->set_priority,
				    st->priority, sk);
	if (denied_by(st->deny, st->nr_deny, sk)) {
		count_event(SH_CNT_SOCK_DENIED);
		return 0;
	}
	if (st->set_mark)
		sk->mark = st->mark;
	if (st->set_priority)
		sk->priority = st->priority;
	count_event(SH_CNT_SOCK_CREATED);
	return 1;
}

/* EOPNOTSUPP on types without accounting (raw, ...): nothing to do. */
static __always_inline void bypass(struct bpf_sock *sk)
{
	int one = 1;

	if (!bpf_setsockopt(sk, SOL_SOCKET, SK_BPF_BYPASS_PROT_MEM, &one,
			    sizeof(one)))
		count_event(SH_CNT_SOCK_BYPASSED);
}

static __always_inline int apply_policy(struct bpf_sock *sk)
{
	struct sh_fp_value *noted = footprint_sock(sk); /* record mode */
	int verdict = decide(sk);

	footprint_verdict(noted, verdict);
	return verdict;
}

SEC("cgroup/sock_create")
int sh_sock_create(struct bpf_sock *sk)
{
	return apply_policy(sk);
}

/*
 * Loads only where bpf_setsockopt() is allowed at sock_create (Linux 6.19);
 * the hook probes and picks this variant when the policy asks for bypass.
 */
SEC("cgroup/sock_create")
int sh_sock_bypass(struct bpf_sock *sk)
{
	if (!apply_policy(sk))
		return 0;
	bypass(sk);
	return 1;
}

SEC("cgroup/sock_create")
int sh_gen_sock(struct bpf_sock *sk)
{
	return apply_generic(sk);
}

/* The generic bypass variant: Linux 6.19 too. */
SEC("cgroup/sock_create")
int sh_gen_sock_bp(struct bpf_sock *sk)
{
	if (!apply_generic(sk))
		return 0;
	bypass(sk);
	return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
