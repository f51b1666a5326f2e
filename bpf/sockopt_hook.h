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
#define SH_ANY (-1)

enum sh_action {
	SH_ACTION_ALLOW = 0,
	SH_ACTION_DENY = 1,
	SH_ACTION_CLAMP = 2,
	SH_ACTION_FORCE_INT = 3,
	SH_ACTION_FORCE_BYTES = 4,
};

/*
 * How the kernel handler turns the int it read into the state it keeps,
 * read off that handler: a clamp compares what the kernel will store, not
 * the raw bits (SO_RCVBUF(-1) is rmem_max, IP_TOS keeps the low byte).
 */
enum sh_domain {
	SH_DOM_S32 = 0, /* the int as read */
	SH_DOM_U32 = 1, /* kept unsigned: -1 is 4294967295 */
	SH_DOM_BOOL = 2, /* any non-zero value is 1 */
	SH_DOM_U8 = 3, /* only the low byte is kept */
	SH_DOM_NEG_TO = 4, /* every negative value means `special` */
	SH_DOM_M1_TO = 5, /* -1 means `special` */
	SH_DOM_PACING =
		6, /* u32 with ~0U for unlimited, or a u64 from 8 bytes */
};

/* What the kernel makes of an optlen below sizeof(int) on setsockopt. */
enum sh_short_read {
	SH_SHORT_REJECT = 0, /* -EINVAL: nothing to police */
	SH_SHORT_BYTE = 1, /* IPv4: one unsigned byte; optlen 0 reads 0 */
	SH_SHORT_ZERO = 2, /* IPv6: the value is 0 */
};

/* What getsockopt hands back, so a forced value looks like a real one. */
enum sh_get_form {
	SH_GET_INT = 0, /* min(optlen, 4) bytes of the int */
	SH_GET_INT_BYTE = 1, /* IPv4: one byte when optlen < 4 and 0..255 */
	SH_GET_U64 = 2, /* 8 bytes when optlen >= 8, else a capped u32 */
	SH_GET_STR_PADDED = 3, /* min(optlen, 16) bytes, NUL-padded */
	SH_GET_STR_NUL = 4, /* the string and its NUL (SO_BINDTODEVICE) */
};

/*
 * What a policy's rules use, frozen into the programs' .rodata: the
 * verifier then drops every path no rule can take, and loading a policy
 * costs what its rules need.
 */
#define SH_USES_ACTION(a) (1u << (a))
#define SH_USES_DOMAIN(d) (1u << (8 + (d)))
#define SH_USES_SHORT(s) (1u << (16 + (s)))
#define SH_USES_GET(g) (1u << (20 + (g)))

struct sh_opt_key {
	__s32 level;
	__s32 optname;
};

struct sh_opt_rule {
	__u32 action; /* enum sh_action */
	__u8 domain; /* enum sh_domain */
	__u8 short_read; /* enum sh_short_read */
	__u8 get_form; /* enum sh_get_form */
	__u8 audit_slot; /* audit mode: its would-have counter (audit_mode_map.h) */
	__s32 special; /* for SH_DOM_NEG_TO and SH_DOM_M1_TO */
	__u32 value_len;
	__s64 min; /* clamp bounds, in the domain's terms */
	__s64 max;
	__u8 value[SH_OPT_VALUE_MAX]; /* force: s64 in host order, or bytes */
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

/*
 * Record mode (footprint.bpf.h): what a container did, one entry per
 * distinct call, in a table of fixed size per program copy.
 */
#define SH_FP_MAX 128

enum sh_fp_kind {
	SH_FP_SET = 0, /* level, option: a setsockopt */
	SH_FP_GET = 1, /* level, option: a getsockopt */
	SH_FP_SOCK = 2, /* family, type, protocol: a socket created */
};

struct sh_fp_key {
	__u32 kind; /* enum sh_fp_kind */
	__s32 a; /* level or family */
	__s32 b; /* option or type */
	__s32 c; /* 0 or protocol */
};

/*
 * The key in the programs' tables: 8 bytes, so that a lookup hashes two
 * words (each program has its own table, so the kind is the table's).
 * setsockopt/getsockopt: a = level, b = option; sock_create: a = family,
 * b = type << 16 | protocol (both 16 bits in struct sock).
 */
struct sh_fp_map_key {
	__s32 a;
	__s32 b;
};

/*
 * A call is noted as let through before the policy decides, and moved to
 * refused after when it was (footprint.bpf.h): a recording never turns a
 * refused attempt into an allow. The layout is the one before refused had
 * its name (it was padding), so tables pinned by an older hook read as
 * "nothing refused".
 */
struct sh_fp_value {
	__u64 count; /* calls the policy let through */
	__s64 min; /* of those, setsockopt: the value (see has_value) */
	__s64 max;
	__u32 has_value; /* 0: none; SH_FP_RAW or SH_FP_KEPT */
	__u32 refused; /* calls the policy refused (stops at ~0) */
};

/*
 * How min and max hold a value. An older hook's programs noted the int as
 * the caller gave it (SH_FP_RAW): SO_MARK 0xffffffff was -1, below 0,
 * which no range of an unsigned option can say. Programs now note it as
 * the kernel keeps it (SH_FP_KEPT), in the option's own type (enum
 * sh_domain, from the fp_domains table the hook fills): unsigned for an
 * unsigned option, the low byte for IP_TOS.
 */
#define SH_FP_RAW 1
#define SH_FP_KEPT 2

/* Record mode, setsockopt: how the kernel keeps an int option's value,
 * at its slot (sh_fp_domain_slot()); an option with no slot, or whose
 * slot the hook left zero, is a plain int (SH_DOM_S32). */
struct sh_fp_domain {
	__u32 domain; /* enum sh_domain */
	__s32 special; /* for SH_DOM_NEG_TO and SH_DOM_M1_TO */
};

/*
 * The domains table is an array, so that a recording program finds an
 * option's domain by index, with no hash: one row of SH_FP_DOMAIN_OPTS
 * options for each level an int option of the hook's table has (and
 * SOL_UDPLITE, which UDP's handler takes as its own). -1: no slot.
 */
#define SH_FP_DOMAIN_OPTS 128
#define SH_FP_DOMAIN_LEVELS 6
#define SH_FP_DOMAINS_MAX (SH_FP_DOMAIN_LEVELS * SH_FP_DOMAIN_OPTS)

static inline int sh_fp_domain_slot(int level, int optname)
{
	int row;

	if (optname < 0 || optname >= SH_FP_DOMAIN_OPTS)
		return -1;
	switch (level) {
	case 0: /* SOL_IP */
		row = 0;
		break;
	case 1: /* SOL_SOCKET */
		row = 1;
		break;
	case 6: /* SOL_TCP */
		row = 2;
		break;
	case 17: /* SOL_UDP */
		row = 3;
		break;
	case 41: /* SOL_IPV6 */
		row = 4;
		break;
	case 136: /* SOL_UDPLITE */
		row = 5;
		break;
	default:
		return -1;
	}
	return row * SH_FP_DOMAIN_OPTS + optname;
}

#endif /* SOCKOPT_HOOK_H */
