// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolic names for levels, families, types and protocols (options are in
 * options.c), so that operators write SOL_SOCKET and not 1. Values are the
 * Linux ABI.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_types.h"
#include "config/names.h"
#include "config/options.h"
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

	for (size_t i = 0; i < options_count(); i++)
		consider(options_at(i)->name, name, &best, &best_dist);
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
