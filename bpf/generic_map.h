/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The generic programs, shared by the BPF programs and the hook
 * (hook/prog/generic.c): one program per attach type and mode, loaded and
 * pinned once by `preload`, whatever the policies. A container whose
 * policy has no specialised copy yet gets them, so that no prestart ever
 * verifies a program; `apply` later swaps in the specialised copies.
 *
 * A generic program learns the container's policy from its attachment's
 * cgroup storage (one value per cgroup and attach type, allocated by the
 * kernel at attach, zeroed): the hook writes the state right after it
 * attaches. Until then SH_GEN_READY is clear and every call is refused
 * (fail closed). The storage is the attachment's, not the socket's
 * cgroup's: a socket in a cgroup nested in the container runs the
 * container's attachment with its storage, as a specialised copy would.
 *
 * The sockopt rules of a container are entries of the program's gen_rules
 * hash, keyed by (rules id, level, option): the rules id is drawn at random
 * for each attachment and written into its state, not ready yet, before
 * its rules are written, and the state is marked ready after them. The
 * entries live as long as some state names their id, that is as long as
 * the cgroup (its storage is freed with it): `gc` drops the others. (A
 * hash of maps, one map per container, would need no sweep, but every
 * update of one waits for an RCU grace period: 20 ms on a start.)
 */
#ifndef SH_GENERIC_MAP_H
#define SH_GENERIC_MAP_H

#include <linux/types.h>

#include "sockopt_hook.h"
#include "audit_mode_map.h"

/* The state has been written: the program may apply it. */
#define SH_GEN_READY 1u
/* Rules one generic sockopt program holds at once, all containers'. */
#define SH_GEN_RULES_MAX 65536

struct sh_gen_rule_key {
	__u64 rules; /* the attachment's rules id */
	__s32 level;
	__s32 optname;
};

/* sock_create: the whole policy; the would-have counters only in audit
 * mode (the hook sizes the value without them otherwise). */
struct sh_gen_sock_state {
	__u32 flags;
	__u32 nr_deny;
	struct sh_sock_rule deny[SH_MAX_SOCKET_RULES];
	__u32 set_mark;
	__u32 mark;
	__u32 set_priority;
	__u32 priority;
	struct sh_would_have wh;
};

/* setsockopt and getsockopt: the rules id, the allow-list flag
 * (setsockopt), and the hint: the bits of the (level, option) pairs the
 * rules name (sh_gen_hint_bit), so that a call whose bit is clear, as most
 * are, has no rule and needs no lookup. */
struct sh_gen_opt_state {
	__u32 flags;
	__u32 default_deny;
	__u64 rules;
	__u64 hint;
	struct sh_would_have wh;
};

static inline __attribute__((always_inline)) __u64
sh_gen_hint_bit(__s32 level, __s32 optname)
{
	return 1ULL << (((__u32)level * 37u + (__u32)optname) & 63);
}

#endif /* SH_GENERIC_MAP_H */
