// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolic names for levels, families, types and protocols (options are in
 * names.c), so that operators write SOL_SOCKET and not 1. Values are the
 * Linux ABI.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_types.h"
#include "config/names.h"
#include "lib/cleanup.h"
#include "lib/number.h"

struct name_value {
	const char *name;
	int value;
};

static const struct name_value levels[] = {
	{ "SOL_SOCKET", 1 },	{ "SOL_IP", 0 },
	{ "IPPROTO_IP", 0 },	{ "SOL_IPV6", 41 },
	{ "IPPROTO_IPV6", 41 }, { "SOL_TCP", 6 },
	{ "IPPROTO_TCP", 6 },	{ "SOL_UDP", 17 },
	{ "IPPROTO_UDP", 17 },	{ "SOL_UDPLITE", SOL_UDPLITE_LEVEL },
};

/* cgroup/sock_create only runs from inet_create() and inet6_create(). */
static const struct name_value families[] = {
	{ "AF_INET", 2 },
	{ "AF_INET6", 10 },
};

static const struct name_value types[] = {
	{ "SOCK_STREAM", 1 }, { "SOCK_DGRAM", 2 },     { "SOCK_RAW", 3 },
	{ "SOCK_RDM", 4 },    { "SOCK_SEQPACKET", 5 },
};

static const struct name_value protocols[] = {
	{ "IPPROTO_IP", 0 },	    { "IPPROTO_ICMP", 1 },
	{ "IPPROTO_TCP", 6 },	    { "IPPROTO_UDP", 17 },
	{ "IPPROTO_ICMPV6", 58 },   { "IPPROTO_SCTP", 132 },
	{ "IPPROTO_UDPLITE", 136 }, { "IPPROTO_RAW", 255 },
	{ "IPPROTO_MPTCP", 262 },
};

static int lookup(const struct name_value *table, size_t n, const char *name,
		  int *value)
{
	long long v;

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(table[i].name, name)) {
			*value = table[i].value;
			return 0;
		}
	}
	if (number_parse(name, 0, INT_MAX, &v) == 0) {
		*value = (int)v;
		return 0;
	}
	return -ENOENT;
}

static const char *reverse(const struct name_value *table, size_t n, int v)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].value == v)
			return table[i].name;
	return NULL;
}

int names_level(const char *name, int *level)
{
	return lookup(levels, ARRAY_SIZE(levels), name, level);
}

const char *names_level_name(int level)
{
	return reverse(levels, ARRAY_SIZE(levels), level);
}

int names_family(const char *name, int *value)
{
	return lookup(families, ARRAY_SIZE(families), name, value);
}

int names_type(const char *name, int *value)
{
	return lookup(types, ARRAY_SIZE(types), name, value);
}

int names_protocol(const char *name, int *value)
{
	return lookup(protocols, ARRAY_SIZE(protocols), name, value);
}

const char *names_family_name(int value)
{
	return reverse(families, ARRAY_SIZE(families), value);
}

const char *names_type_name(int value)
{
	return reverse(types, ARRAY_SIZE(types), value);
}

const char *names_protocol_name(int value)
{
	return reverse(protocols, ARRAY_SIZE(protocols), value);
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) :
					     (del < ins ? del : ins);
		}
		memcpy(prev, cur, sizeof(cur));
	}
	return prev[lb];
}

static void consider(const char *cand, const char *name, const char **best,
		     size_t *best_dist)
{
	size_t d = edit_distance(name, cand);

	if (d < *best_dist) {
		*best = cand;
		*best_dist = d;
	}
}

const char *names_closest(const char *name, const char *const *cands)
{
	const char *best = NULL;
	size_t best_dist = 4;

	for (size_t i = 0; cands[i]; i++)
		consider(cands[i], name, &best, &best_dist);
	return best;
}

const char *names_suggest(const char *name)
{
	const char *best = NULL;
	size_t best_dist = 4; /* beyond 3 edits a hint confuses more */

	for (size_t i = 0; i < names_option_count(); i++)
		consider(names_option_at(i)->name, name, &best, &best_dist);
	for (size_t i = 0; i < ARRAY_SIZE(levels); i++)
		consider(levels[i].name, name, &best, &best_dist);
	for (size_t i = 0; i < ARRAY_SIZE(families); i++)
		consider(families[i].name, name, &best, &best_dist);
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		consider(types[i].name, name, &best, &best_dist);
	for (size_t i = 0; i < ARRAY_SIZE(protocols); i++)
		consider(protocols[i].name, name, &best, &best_dist);
	return best;
}

bool names_record_ok(const char *name)
{
	size_t n = strlen(name);

	return n && n <= SH_POLICY_NAME_MAX && name[0] != '.' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/*
 * The socket options operators can name, with what the kernel does with
 * each value, read off the handlers that consume them: sk_setsockopt
 * (net/core/sock.c), do_ip_setsockopt, do_ipv6_setsockopt,
 * do_tcp_setsockopt and udp_lib_setsockopt. Values are the Linux ABI.
 */

#define L_SOCKET 1
#define L_IP 0
#define L_IPV6 41
#define L_TCP 6
#define L_UDP 17

/* clang-format off */
#define OPT(lvl, n, v, k, d, s, ro) { #n, lvl, v, k, d, s, ro }
#define S(n, v, d) OPT(L_SOCKET, n, v, OPT_INT, SH_DOM_##d, 0, false)
#define S_NEG(n, v, s) OPT(L_SOCKET, n, v, OPT_INT, SH_DOM_NEG_TO, s, false)
#define S_RO(n, v) OPT(L_SOCKET, n, v, OPT_INT, SH_DOM_S32, 0, true)
#define S_OTHER(n, v) OPT(L_SOCKET, n, v, OPT_OTHER, SH_DOM_S32, 0, false)
#define IP(n, v, d) OPT(L_IP, n, v, OPT_INT, SH_DOM_##d, 0, false)
#define IP_M1(n, v, s) OPT(L_IP, n, v, OPT_INT, SH_DOM_M1_TO, s, false)
#define IP6(n, v, d) OPT(L_IPV6, n, v, OPT_INT, SH_DOM_##d, 0, false)
#define IP6_M1(n, v, s) OPT(L_IPV6, n, v, OPT_INT, SH_DOM_M1_TO, s, false)
#define TCP(n, v, d) OPT(L_TCP, n, v, OPT_INT, SH_DOM_##d, 0, false)
#define UDP(n, v, d) OPT(L_UDP, n, v, OPT_INT, SH_DOM_##d, 0, false)
#define STR(lvl, n, v) OPT(lvl, n, v, OPT_STRING, SH_DOM_S32, 0, false)
#define OTHER(lvl, n, v, ro) OPT(lvl, n, v, OPT_OTHER, SH_DOM_S32, 0, ro)
/* clang-format on */

static const struct sh_option_name options[] = {
	S(SO_DEBUG, 1, BOOL),
	S(SO_REUSEADDR, 2, BOOL),
	S_RO(SO_TYPE, 3),
	S_RO(SO_ERROR, 4),
	S(SO_DONTROUTE, 5, BOOL),
	S(SO_BROADCAST, 6, BOOL),
	S(SO_SNDBUF, 7, U32), /* min_t(u32, val, wmem_max) */
	S(SO_RCVBUF, 8, U32), /* min_t(u32, val, rmem_max) */
	S(SO_KEEPALIVE, 9, BOOL),
	S(SO_OOBINLINE, 10, BOOL),
	S(SO_NO_CHECK, 11, BOOL),
	S(SO_PRIORITY, 12, U32), /* sk_priority is a u32 */
	S_OTHER(SO_LINGER, 13),
	S(SO_REUSEPORT, 15, BOOL),
	S(SO_PASSCRED, 16, BOOL),
	OTHER(L_SOCKET, SO_PEERCRED, 17, true),
	S_NEG(SO_RCVLOWAT, 18, INT_MAX), /* if (val < 0) val = INT_MAX */
	S_RO(SO_SNDLOWAT, 19),
	S_OTHER(SO_RCVTIMEO, 20),
	S_OTHER(SO_SNDTIMEO, 21),
	STR(L_SOCKET, SO_BINDTODEVICE, 25),
	S(SO_TIMESTAMP, 29, BOOL),
	S_RO(SO_ACCEPTCONN, 30),
	S_NEG(SO_SNDBUFFORCE, 32, 0), /* if (val < 0) val = 0 */
	S_NEG(SO_RCVBUFFORCE, 33, 0),
	S(SO_TIMESTAMPNS, 35, BOOL),
	S(SO_MARK, 36, U32), /* sk_mark is a u32 */
	S_OTHER(SO_TIMESTAMPING, 37), /* flags, or a struct */
	S_RO(SO_PROTOCOL, 38),
	S_RO(SO_DOMAIN, 39),
	S(SO_RXQ_OVFL, 40, BOOL),
	S(SO_PEEK_OFF, 42, S32),
	S(SO_BUSY_POLL, 46, S32),
	S(SO_MAX_PACING_RATE, 47, PACING),
	S(SO_INCOMING_CPU, 49, S32),
	S(SO_ZEROCOPY, 60, BOOL),
	S_OTHER(SO_TXTIME, 61),
	S(SO_BINDTOIFINDEX, 62, S32),
	S(SO_TIMESTAMP_NEW, 63, BOOL),
	S(SO_TIMESTAMPNS_NEW, 64, BOOL),
	S_OTHER(SO_TIMESTAMPING_NEW, 65),
	S_OTHER(SO_RCVTIMEO_NEW, 66),
	S_OTHER(SO_SNDTIMEO_NEW, 67),
	S(SO_PREFER_BUSY_POLL, 69, BOOL),
	S(SO_BUSY_POLL_BUDGET, 70, S32),
	S(SO_RCVMARK, 75, BOOL),
	IP(IP_TOS, 1, U8), /* inet->tos is a u8 */
	IP_M1(IP_TTL, 2, 255), /* -1: the netns default, up to 255 */
	IP(IP_HDRINCL, 3, BOOL),
	OTHER(L_IP, IP_OPTIONS, 4, false),
	IP(IP_ROUTER_ALERT, 5, BOOL),
	IP(IP_RECVOPTS, 6, BOOL),
	IP(IP_RETOPTS, 7, BOOL),
	IP(IP_PKTINFO, 8, BOOL),
	IP(IP_MTU_DISCOVER, 10, S32),
	IP(IP_RECVERR, 11, BOOL),
	IP(IP_RECVTTL, 12, BOOL),
	IP(IP_RECVTOS, 13, BOOL),
	OTHER(L_IP, IP_MTU, 14, true),
	IP(IP_FREEBIND, 15, BOOL),
	IP(IP_PASSSEC, 18, BOOL),
	IP(IP_TRANSPARENT, 19, BOOL),
	IP(IP_RECVORIGDSTADDR, 20, BOOL),
	IP(IP_MINTTL, 21, S32),
	IP(IP_NODEFRAG, 22, BOOL),
	IP(IP_CHECKSUM, 23, BOOL),
	IP(IP_BIND_ADDRESS_NO_PORT, 24, BOOL),
	IP(IP_RECVFRAGSIZE, 25, BOOL),
	IP(IP_RECVERR_RFC4884, 26, S32),
	IP_M1(IP_MULTICAST_TTL, 33, 1), /* if (val == -1) val = 1 */
	IP(IP_MULTICAST_LOOP, 34, BOOL),
	IP(IP_MULTICAST_ALL, 49, S32),
	OTHER(L_IP, IP_LOCAL_PORT_RANGE, 51, false), /* two u16 */
	IP6_M1(IPV6_UNICAST_HOPS, 16, 255), /* -1: the route's default */
	IP6_M1(IPV6_MULTICAST_HOPS, 18, 1), /* IPV6_DEFAULT_MCASTHOPS */
	IP6(IPV6_MULTICAST_LOOP, 19, BOOL),
	IP6(IPV6_MTU_DISCOVER, 23, S32),
	IP6(IPV6_MTU, 24, S32),
	IP6(IPV6_RECVERR, 25, BOOL),
	IP6(IPV6_V6ONLY, 26, BOOL),
	IP6(IPV6_RECVPKTINFO, 49, BOOL),
	IP6(IPV6_DONTFRAG, 62, BOOL),
	IP6(IPV6_RECVTCLASS, 66, BOOL),
	IP6_M1(IPV6_TCLASS, 67, 0), /* -1 means 0 (RFC 3542) */
	IP6(IPV6_AUTOFLOWLABEL, 70, BOOL),
	IP6(IPV6_TRANSPARENT, 75, BOOL),
	IP6(IPV6_FREEBIND, 78, BOOL),
	TCP(TCP_NODELAY, 1, BOOL),
	TCP(TCP_MAXSEG, 2, S32),
	TCP(TCP_CORK, 3, BOOL),
	TCP(TCP_KEEPIDLE, 4, S32),
	TCP(TCP_KEEPINTVL, 5, S32),
	TCP(TCP_KEEPCNT, 6, S32),
	TCP(TCP_SYNCNT, 7, S32),
	OPT(L_TCP, TCP_LINGER2, 8, OPT_INT, SH_DOM_NEG_TO, -1, false),
	TCP(TCP_DEFER_ACCEPT, 9, S32),
	TCP(TCP_WINDOW_CLAMP, 10, S32),
	OTHER(L_TCP, TCP_INFO, 11, true),
	TCP(TCP_QUICKACK, 12, S32),
	STR(L_TCP, TCP_CONGESTION, 13),
	OTHER(L_TCP, TCP_MD5SIG, 14, false),
	TCP(TCP_THIN_LINEAR_TIMEOUTS, 16, S32),
	TCP(TCP_USER_TIMEOUT, 18, S32),
	TCP(TCP_REPAIR, 19, S32),
	TCP(TCP_FASTOPEN, 23, S32),
	TCP(TCP_TIMESTAMP, 24, S32),
	TCP(TCP_NOTSENT_LOWAT, 25, U32), /* tp->notsent_lowat is a u32 */
	TCP(TCP_SAVE_SYN, 27, S32),
	STR(L_TCP, TCP_ULP, 31),
	OTHER(L_TCP, TCP_ZEROCOPY_RECEIVE, 35, false),
	TCP(TCP_INQ, 36, S32),
	TCP(TCP_TX_DELAY, 37, S32),
	UDP(UDP_CORK, 1, BOOL),
	UDP(UDP_ENCAP, 100, S32),
	UDP(UDP_NO_CHECK6_TX, 101, BOOL),
	UDP(UDP_NO_CHECK6_RX, 102, BOOL),
	UDP(UDP_SEGMENT, 103, S32),
	UDP(UDP_GRO, 104, BOOL),
};

size_t names_option_count(void)
{
	return ARRAY_SIZE(options);
}

const struct sh_option_name *names_option_at(size_t i)
{
	return i < ARRAY_SIZE(options) ? &options[i] : NULL;
}

const struct sh_option_name *names_option_by_value(int level, int optname)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (options[i].level == level && options[i].optname == optname)
			return &options[i];
	return NULL;
}

int names_option_find(int level, const char *name,
		      const struct sh_option_name **opt)
{
	static __thread struct sh_option_name numeric;
	long long v;

	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		if (strcmp(options[i].name, name))
			continue;
		if (options[i].level != level)
			return -EXDEV;
		*opt = &options[i];
		return 0;
	}
	if (number_parse(name, 0, INT_MAX, &v))
		return -ENOENT;
	*opt = names_option_by_value(level, (int)v);
	if (*opt)
		return 0;
	numeric = (struct sh_option_name){ .level = level,
					   .optname = (int)v,
					   .kind = OPT_UNKNOWN };
	*opt = &numeric;
	return 0;
}

/* An unknown SOL_IP option is assumed to take a byte: the stricter guess. */
enum sh_short_read names_option_short_read(const struct sh_option_name *opt)
{
	switch (opt->level) {
	case L_IP:
		return SH_SHORT_BYTE;
	case L_IPV6:
		return SH_SHORT_ZERO;
	default:
		return SH_SHORT_REJECT;
	}
}

enum sh_get_form names_option_get_form(const struct sh_option_name *opt)
{
	if (opt->kind == OPT_STRING)
		return opt->level == L_SOCKET ? SH_GET_STR_NUL :
						SH_GET_STR_PADDED;
	if (opt->domain == SH_DOM_PACING)
		return SH_GET_U64;
	return opt->level == L_IP ? SH_GET_INT_BYTE : SH_GET_INT;
}

void names_option_domain_range(enum sh_domain domain, long long *min,
			       long long *max)
{
	static const struct {
		long long min, max;
	} ranges[] = {
		[SH_DOM_S32] = { INT32_MIN, INT32_MAX },
		[SH_DOM_U32] = { 0, UINT32_MAX },
		[SH_DOM_BOOL] = { 0, 1 },
		[SH_DOM_U8] = { 0, UINT8_MAX },
		[SH_DOM_NEG_TO] = { INT32_MIN, INT32_MAX },
		[SH_DOM_M1_TO] = { INT32_MIN, INT32_MAX },
		[SH_DOM_PACING] = { 0, INT64_MAX },
	};

	*min = ranges[domain].min;
	*max = ranges[domain].max;
}

/*
 * Other ways to the same state: UDP's handler takes SOL_UDPLITE as its own
 * level, the *_NEW options are the y2038 twins of the old ones, *FORCE
 * sets the same buffer past the sysctl cap (with CAP_NET_ADMIN), and
 * SO_BINDTOIFINDEX binds like SO_BINDTODEVICE by index instead of name.
 */
static const struct {
	int level, from, to;
	bool deny_only;
} option_aliases[] = {
	{ L_SOCKET, 20, 66, false }, { L_SOCKET, 66, 20, false },
	{ L_SOCKET, 21, 67, false }, { L_SOCKET, 67, 21, false },
	{ L_SOCKET, 29, 63, false }, { L_SOCKET, 63, 29, false },
	{ L_SOCKET, 35, 64, false }, { L_SOCKET, 64, 35, false },
	{ L_SOCKET, 37, 65, false }, { L_SOCKET, 65, 37, false },
	{ L_SOCKET, 7, 32, false },  { L_SOCKET, 8, 33, false },
	{ L_SOCKET, 25, 62, true },  { L_SOCKET, 62, 25, true },
};

size_t names_option_aliases(const struct sh_opt_key *key,
			    struct sh_option_alias out[SH_MAX_ALIASES])
{
	size_t n = 0;

	if (key->level == L_UDP)
		out[n++] = (struct sh_option_alias){
			{ SOL_UDPLITE_LEVEL, key->optname }, false
		};
	for (size_t i = 0; i < ARRAY_SIZE(option_aliases) && n < 2; i++) {
		if (option_aliases[i].level != key->level ||
		    option_aliases[i].from != key->optname)
			continue;
		out[n++] = (struct sh_option_alias){
			{ key->level, option_aliases[i].to },
			option_aliases[i].deny_only
		};
	}
	return n;
}
