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

#define SOL_SOCKET 1

const volatile __u32 nr_deny_rules;
const volatile struct sh_sock_rule deny_rules[SH_MAX_SOCKET_RULES];
const volatile __u32 set_mark;
const volatile __u32 mark;
const volatile __u32 set_priority;
const volatile __u32 priority;

static __always_inline int field_matches(__s32 want, __u32 have)
{
	return want == SH_ANY || (__u32)want == have;
}

static __always_inline int socket_denied(const struct bpf_sock *sk)
{
	for (__u32 i = 0; i < SH_MAX_SOCKET_RULES; i++) {
		if (i >= nr_deny_rules)
			break;
		if (field_matches(deny_rules[i].family, sk->family) &&
		    field_matches(deny_rules[i].type, sk->type) &&
		    field_matches(deny_rules[i].protocol, sk->protocol))
			return 1;
	}
	return 0;
}

/* Audit mode: count the first deny rule that matches and the stamps,
 * apply none of them. */
static __always_inline int audit_policy(struct bpf_sock *sk)
{
	for (__u32 i = 0; i < SH_MAX_SOCKET_RULES; i++) {
		if (i >= nr_deny_rules)
			break;
		if (field_matches(deny_rules[i].family, sk->family) &&
		    field_matches(deny_rules[i].type, sk->type) &&
		    field_matches(deny_rules[i].protocol, sk->protocol)) {
			audit_count(i, deny_rules[i].family, deny_rules[i].type,
				    SH_ACTION_DENY, deny_rules[i].protocol);
			count_event(SH_CNT_SOCK_CREATED);
			return 1;
		}
	}
	if (set_mark)
		audit_count(SH_WH_SLOT_MARK, SOL_SOCKET, 36 /* SO_MARK */,
			    SH_ACTION_FORCE_INT, mark);
	if (set_priority)
		audit_count(SH_WH_SLOT_PRIORITY, SOL_SOCKET,
			    12 /* SO_PRIORITY */, SH_ACTION_FORCE_INT,
			    priority);
	count_event(SH_CNT_SOCK_CREATED);
	return 1;
}

static __always_inline int decide(struct bpf_sock *sk)
{
	if (AUDIT_ON) /* audit mode */
		return audit_policy(sk);
	if (socket_denied(sk)) {
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
	int one = 1;

	if (!apply_policy(sk))
		return 0;
	/* EOPNOTSUPP on types without accounting (raw, ...): nothing to do. */
	if (!bpf_setsockopt(sk, SOL_SOCKET, SK_BPF_BYPASS_PROT_MEM, &one,
			    sizeof(one)))
		count_event(SH_CNT_SOCK_BYPASSED);
	return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
