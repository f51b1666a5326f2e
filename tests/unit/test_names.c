// SPDX-License-Identifier: GPL-2.0-only
/*
 * names.c: the symbolic names an operator writes for levels, families,
 * types and protocols, each checked against the C library's own value of
 * the constant (the Linux ABI); numbers accepted as themselves; names back
 * from values; "did you mean" hints; record names.
 *
 * Modules: `names.c`
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

#include "config/names.h"
#include "tap.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef SOL_UDPLITE
#define SOL_UDPLITE 136
#endif

typedef int (*lookup_fn)(const char *, int *);
typedef const char *(*name_fn)(int);

/* name -> want, and want -> back (the first name of that value). */
static void both_ways(lookup_fn lookup, name_fn name_of, const char *name,
		      int want, const char *back)
{
	int v = -12345;

	ok(lookup(name, &v) == 0 && v == want, "%s is %d (got %d)", name, want,
	   v);
	if (back)
		is_str(name_of(want), back, "%d is named %s", want, back);
}

static void test_tables(void)
{
	both_ways(names_level, names_level_name, "SOL_SOCKET", SOL_SOCKET,
		  "SOL_SOCKET");
	both_ways(names_level, names_level_name, "SOL_IP", SOL_IP, "SOL_IP");
	both_ways(names_level, names_level_name, "IPPROTO_IP", IPPROTO_IP,
		  NULL);
	both_ways(names_level, names_level_name, "SOL_IPV6", SOL_IPV6,
		  "SOL_IPV6");
	both_ways(names_level, names_level_name, "IPPROTO_TCP", IPPROTO_TCP,
		  "SOL_TCP");
	both_ways(names_level, names_level_name, "SOL_UDP", IPPROTO_UDP,
		  "SOL_UDP");
	both_ways(names_level, names_level_name, "SOL_UDPLITE", SOL_UDPLITE,
		  "SOL_UDPLITE");
	both_ways(names_family, names_family_name, "AF_INET", AF_INET,
		  "AF_INET");
	both_ways(names_family, names_family_name, "AF_INET6", AF_INET6,
		  "AF_INET6");
	both_ways(names_type, names_type_name, "SOCK_STREAM", SOCK_STREAM,
		  "SOCK_STREAM");
	both_ways(names_type, names_type_name, "SOCK_RAW", SOCK_RAW,
		  "SOCK_RAW");
	both_ways(names_type, names_type_name, "SOCK_SEQPACKET", SOCK_SEQPACKET,
		  "SOCK_SEQPACKET");
	both_ways(names_protocol, names_protocol_name, "IPPROTO_ICMPV6",
		  IPPROTO_ICMPV6, "IPPROTO_ICMPV6");
	both_ways(names_protocol, names_protocol_name, "IPPROTO_SCTP",
		  IPPROTO_SCTP, "IPPROTO_SCTP");
	both_ways(names_protocol, names_protocol_name, "IPPROTO_RAW",
		  IPPROTO_RAW, "IPPROTO_RAW");
	both_ways(names_protocol, names_protocol_name, "IPPROTO_MPTCP",
		  IPPROTO_MPTCP, "IPPROTO_MPTCP");
}

static void test_numbers_and_unknown(void)
{
	int v = -1;

	ok(names_level("6", &v) == 0 && v == 6, "a number is its own level");
	ok(names_protocol("0x84", &v) == 0 && v == 132,
	   "hex too (0x84 is 132)");
	ok(names_family("AF_UNIX", &v) == -ENOENT,
	   "AF_UNIX is no family here (sock_create never sees it)");
	ok(names_level("sol_socket", &v) == -ENOENT,
	   "names are case-sensitive");
	ok(names_type("-1", &v) == -ENOENT &&
		   names_type("2147483648", &v) == -ENOENT,
	   "a negative or too large number is unknown");
	ok(names_type("SOCK_PACKET", &v) == -ENOENT, "an unlisted type");
	ok(!names_family_name(AF_UNIX) && !names_type_name(99) &&
		   !names_protocol_name(-1) && !names_level_name(1000),
	   "an unnamed value has no name (NULL)");
}

static void test_suggest(void)
{
	const char *cands[] = { "restricted", "bulk", "setonly", NULL };

	is_str(names_suggest("SO_RCVBUFF"), "SO_RCVBUF",
	       "one extra letter: the option");
	is_str(names_suggest("SOL_SOKET"), "SOL_SOCKET",
	       "one missing letter: the level");
	is_str(names_suggest("AF_INET7"), "AF_INET", "a family");
	ok(names_suggest("COMPLETELY_UNRELATED") == NULL,
	   "nothing within 3 edits: no hint");
	ok(names_suggest("x") == NULL || strlen(names_suggest("x")) <= 4,
	   "a one-letter name gets no long hint");
	is_str(names_closest("restrictd", cands), "restricted",
	       "names_closest: the nearest candidate");
	ok(names_closest("zzzzzzzz", cands) == NULL,
	   "names_closest: none within 3 edits");
	ok(names_closest(
		   "a_name_much_longer_than_sixty_three_characters_for_the_table_xx",
		   cands) == NULL,
	   "names_closest: a name too long to compare gets no hint");
}

static void test_record_names(void)
{
	char longest[66];

	ok(names_record_ok("web-1.v2_x"), "a record name: [A-Za-z0-9._-]");
	ok(!names_record_ok(""), "not empty");
	ok(!names_record_ok(".hidden"), "no leading dot");
	ok(!names_record_ok("a/b") && !names_record_ok("../x"),
	   "no '/': a record name never leaves its directory");
	ok(!names_record_ok("a b"), "no space");
	memset(longest, 'a', 64);
	longest[64] = '\0';
	ok(names_record_ok(longest), "64 bytes");
	longest[64] = 'a';
	longest[65] = '\0';
	ok(!names_record_ok(longest), "65 bytes is too long");
}

int main(void)
{
	test_tables();
	test_numbers_and_unknown();
	test_suggest();
	test_record_names();
	return tap_done();
}
