/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by the BPF programs and the hook: only fixed-width kernel
 * types, so that both sides agree on the layout of every map entry.
 */
#ifndef SOCKOPT_HOOK_H
#define SOCKOPT_HOOK_H

#include <linux/types.h>

/* Linux 6.19; distribution headers before libbpf 1.7 lack it. */
#ifndef SK_BPF_BYPASS_PROT_MEM
#define SK_BPF_BYPASS_PROT_MEM 1010
#endif

#define SH_MAX_SOCKET_RULES 16
#define SH_MAX_OPT_RULES 1024
/* The kernel hands setsockopt programs at least 16 bytes (TCP_CA_NAME_MAX). */
#define SH_OPT_VALUE_MAX 16
#define SH_PAGE_SIZE 4096
#define SH_ANY (-1)

enum sh_action {
	SH_ACTION_ALLOW = 0,
	SH_ACTION_DENY = 1,
	SH_ACTION_CLAMP = 2,
	SH_ACTION_FORCE_INT = 3,
	SH_ACTION_FORCE_BYTES = 4,
};

struct sh_opt_key {
	__s32 level;
	__s32 optname;
};

struct sh_opt_rule {
	__u32 action; /* enum sh_action */
	__s32 min;
	__s32 max;
	__u32 value_len;
	__u8 value[SH_OPT_VALUE_MAX]; /* int in host order, or bytes */
};

/* A field set to SH_ANY matches every value. */
struct sh_sock_rule {
	__s32 family;
	__s32 type;
	__s32 protocol;
};

enum sh_counter {
	SH_CNT_SOCK_CREATED,
	SH_CNT_SOCK_BYPASSED,
	SH_CNT_SOCK_DENIED,
	SH_CNT_SET_DENIED,
	SH_CNT_SET_CLAMPED,
	SH_CNT_SET_FORCED,
	SH_CNT_GET_DENIED,
	SH_CNT_GET_FORCED,
	SH_CNT_MAX,
};

struct sh_counter_values {
	__u64 v[SH_CNT_MAX];
};

#endif /* SOCKOPT_HOOK_H */
