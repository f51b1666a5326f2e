/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Audit mode, shared by the BPF programs and the hook: a policy in audit
 * mode runs the same programs but applies nothing; every deny, clamp, force
 * and allow-list miss it would have applied is counted here instead, in
 * cgroup storage (one copy per container and attach type, fixed size).
 */
#ifndef SH_AUDIT_MODE_MAP_H
#define SH_AUDIT_MODE_MAP_H

#include <linux/types.h>

/* Counted per rule for the first this many rules, then in rule_overflow. */
#define SH_WH_RULES 128
/* Allow-list misses, per (level, option) for this many options. */
#define SH_WH_MISSES 32
/* sock_create: rule[i] is deny rule i; these two are the stamps. */
#define SH_WH_SLOT_MARK 16
#define SH_WH_SLOT_PRIORITY 17

/*
 * One would-have counter. sockopt rules: level and option of the call and
 * the rule's action. sock_create deny rules: the rule's family (level),
 * type (optname) and protocol (extra); the stamps: SOL_SOCKET and
 * SO_MARK or SO_PRIORITY with SH_ACTION_FORCE_INT.
 */
struct sh_wh_entry {
	__s32 level;
	__s32 optname;
	__u32 action; /* enum sh_action */
	__s32 extra;
	__u64 n;
};

/* An allow-list miss: key is ((level + 1) << 32 | option), 0 when free. */
struct sh_wh_miss {
	__u64 key;
	__u64 n;
};

/* The slot rule i of a sockopt policy counts in: its own for the first
 * SH_WH_RULES rules, one for all the rest. */
static inline __u8 sh_wh_slot(__u64 i)
{
	return i < SH_WH_RULES ? (__u8)i : SH_WH_RULES;
}

struct sh_would_have {
	struct sh_wh_entry rule[SH_WH_RULES];
	struct sh_wh_miss miss[SH_WH_MISSES];
	__u64 rule_overflow;
	__u64 miss_overflow;
};

#endif /* SH_AUDIT_MODE_MAP_H */
