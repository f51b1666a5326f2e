// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolic names for levels, options, families, types and protocols, so
 * that operators write SO_RCVBUF and not 8. Values are the Linux ABI.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "names.h"

struct name_value {
	const char *name;
	int value;
};

static const struct name_value levels[] = {
	{ "SOL_SOCKET", 1 },  { "SOL_IP", 0 },	      { "IPPROTO_IP", 0 },
	{ "SOL_IPV6", 41 },   { "IPPROTO_IPV6", 41 }, { "SOL_TCP", 6 },
	{ "IPPROTO_TCP", 6 }, { "SOL_UDP", 17 },      { "IPPROTO_UDP", 17 },
};

/* clang-format off */
#define S(n, v, k) { #n, 1, v, k }
#define IP(n, v, k) { #n, 0, v, k }
#define IP6(n, v, k) { #n, 41, v, k }
#define TCP(n, v, k) { #n, 6, v, k }
#define UDP(n, v, k) { #n, 17, v, k }
/* clang-format on */

static const struct sh_option_name options[] = {
	S(SO_DEBUG, 1, OPT_INT),
	S(SO_REUSEADDR, 2, OPT_INT),
	S(SO_TYPE, 3, OPT_INT),
	S(SO_ERROR, 4, OPT_INT),
	S(SO_DONTROUTE, 5, OPT_INT),
	S(SO_BROADCAST, 6, OPT_INT),
	S(SO_SNDBUF, 7, OPT_INT),
	S(SO_RCVBUF, 8, OPT_INT),
	S(SO_KEEPALIVE, 9, OPT_INT),
	S(SO_OOBINLINE, 10, OPT_INT),
	S(SO_NO_CHECK, 11, OPT_INT),
	S(SO_PRIORITY, 12, OPT_INT),
	S(SO_LINGER, 13, OPT_OTHER),
	S(SO_REUSEPORT, 15, OPT_INT),
	S(SO_PASSCRED, 16, OPT_INT),
	S(SO_PEERCRED, 17, OPT_OTHER),
	S(SO_RCVLOWAT, 18, OPT_INT),
	S(SO_SNDLOWAT, 19, OPT_INT),
	S(SO_RCVTIMEO, 20, OPT_OTHER),
	S(SO_SNDTIMEO, 21, OPT_OTHER),
	S(SO_BINDTODEVICE, 25, OPT_STRING),
	S(SO_TIMESTAMP, 29, OPT_INT),
	S(SO_ACCEPTCONN, 30, OPT_INT),
	S(SO_SNDBUFFORCE, 32, OPT_INT),
	S(SO_RCVBUFFORCE, 33, OPT_INT),
	S(SO_TIMESTAMPNS, 35, OPT_INT),
	S(SO_MARK, 36, OPT_INT),
	S(SO_PROTOCOL, 38, OPT_INT),
	S(SO_DOMAIN, 39, OPT_INT),
	S(SO_RXQ_OVFL, 40, OPT_INT),
	S(SO_BUSY_POLL, 46, OPT_INT),
	S(SO_MAX_PACING_RATE, 47, OPT_INT),
	S(SO_INCOMING_CPU, 49, OPT_INT),
	S(SO_ZEROCOPY, 60, OPT_INT),
	S(SO_TXTIME, 61, OPT_OTHER),
	S(SO_BINDTOIFINDEX, 62, OPT_INT),
	S(SO_PREFER_BUSY_POLL, 69, OPT_INT),
	S(SO_BUSY_POLL_BUDGET, 70, OPT_INT),
	S(SO_RCVMARK, 75, OPT_INT),
	IP(IP_TOS, 1, OPT_INT),
	IP(IP_TTL, 2, OPT_INT),
	IP(IP_HDRINCL, 3, OPT_INT),
	IP(IP_OPTIONS, 4, OPT_OTHER),
	IP(IP_PKTINFO, 8, OPT_INT),
	IP(IP_MTU_DISCOVER, 10, OPT_INT),
	IP(IP_RECVERR, 11, OPT_INT),
	IP(IP_RECVTTL, 12, OPT_INT),
	IP(IP_RECVTOS, 13, OPT_INT),
	IP(IP_MTU, 14, OPT_INT),
	IP(IP_FREEBIND, 15, OPT_INT),
	IP(IP_TRANSPARENT, 19, OPT_INT),
	IP(IP_BIND_ADDRESS_NO_PORT, 24, OPT_INT),
	IP(IP_MULTICAST_TTL, 33, OPT_INT),
	IP(IP_MULTICAST_LOOP, 34, OPT_INT),
	IP(IP_LOCAL_PORT_RANGE, 51, OPT_INT),
	IP6(IPV6_UNICAST_HOPS, 16, OPT_INT),
	IP6(IPV6_MULTICAST_HOPS, 18, OPT_INT),
	IP6(IPV6_MULTICAST_LOOP, 19, OPT_INT),
	IP6(IPV6_MTU_DISCOVER, 23, OPT_INT),
	IP6(IPV6_MTU, 24, OPT_INT),
	IP6(IPV6_RECVERR, 25, OPT_INT),
	IP6(IPV6_V6ONLY, 26, OPT_INT),
	IP6(IPV6_RECVPKTINFO, 49, OPT_INT),
	IP6(IPV6_TCLASS, 67, OPT_INT),
	IP6(IPV6_TRANSPARENT, 75, OPT_INT),
	IP6(IPV6_FREEBIND, 78, OPT_INT),
	TCP(TCP_NODELAY, 1, OPT_INT),
	TCP(TCP_MAXSEG, 2, OPT_INT),
	TCP(TCP_CORK, 3, OPT_INT),
	TCP(TCP_KEEPIDLE, 4, OPT_INT),
	TCP(TCP_KEEPINTVL, 5, OPT_INT),
	TCP(TCP_KEEPCNT, 6, OPT_INT),
	TCP(TCP_SYNCNT, 7, OPT_INT),
	TCP(TCP_LINGER2, 8, OPT_INT),
	TCP(TCP_DEFER_ACCEPT, 9, OPT_INT),
	TCP(TCP_WINDOW_CLAMP, 10, OPT_INT),
	TCP(TCP_INFO, 11, OPT_OTHER),
	TCP(TCP_QUICKACK, 12, OPT_INT),
	TCP(TCP_CONGESTION, 13, OPT_STRING),
	TCP(TCP_MD5SIG, 14, OPT_OTHER),
	TCP(TCP_THIN_LINEAR_TIMEOUTS, 16, OPT_INT),
	TCP(TCP_USER_TIMEOUT, 18, OPT_INT),
	TCP(TCP_REPAIR, 19, OPT_INT),
	TCP(TCP_FASTOPEN, 23, OPT_INT),
	TCP(TCP_TIMESTAMP, 24, OPT_INT),
	TCP(TCP_NOTSENT_LOWAT, 25, OPT_INT),
	TCP(TCP_SAVE_SYN, 27, OPT_INT),
	TCP(TCP_ULP, 31, OPT_STRING),
	TCP(TCP_ZEROCOPY_RECEIVE, 35, OPT_OTHER),
	TCP(TCP_INQ, 36, OPT_INT),
	TCP(TCP_TX_DELAY, 37, OPT_INT),
	UDP(UDP_CORK, 1, OPT_INT),
	UDP(UDP_ENCAP, 100, OPT_INT),
	UDP(UDP_NO_CHECK6_TX, 101, OPT_INT),
	UDP(UDP_NO_CHECK6_RX, 102, OPT_INT),
	UDP(UDP_SEGMENT, 103, OPT_INT),
	UDP(UDP_GRO, 104, OPT_INT),
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

int parse_int_str(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

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
	if (parse_int_str(name, 0, INT_MAX, &v) == 0) {
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

const struct sh_option_name *names_option_by_value(int level, int optname)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (options[i].level == level && options[i].optname == optname)
			return &options[i];
	return NULL;
}

/*
 * A number is accepted for any level; a name must belong to the level, so
 * that SO_MARK under SOL_TCP is caught.
 */
int names_option(int level, const char *name, const struct sh_option_name **opt)
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
	if (parse_int_str(name, 0, INT_MAX, &v))
		return -ENOENT;
	*opt = names_option_by_value(level, (int)v);
	if (*opt)
		return 0;
	numeric = (struct sh_option_name){ NULL, level, (int)v, OPT_UNKNOWN };
	*opt = &numeric;
	return 0;
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

	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		consider(options[i].name, name, &best, &best_dist);
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
