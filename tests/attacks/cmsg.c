// SPDX-License-Identifier: GPL-2.0-only
/*
 * cmsg: a per-packet control message sets what a socket option rule
 * polices, and no cgroup sockopt program sees it.
 *
 *   cmsg KIND VALUE SOCK PKT [PRIO]
 *
 * KIND pairs a socket option with the control message that sets the same
 * value for one packet (net/core/sock.c __sock_cmsg_send,
 * net/ipv4/ip_sockglue.c ip_cmsg_send):
 *   mark      SO_MARK            SOL_SOCKET SO_MARK (CAP_NET_RAW or _ADMIN)
 *   priority  SO_PRIORITY        SOL_SOCKET SO_PRIORITY (0-6 unprivileged)
 *   tos       IP_TOS             SOL_IP IP_TOS (also sets the priority)
 *   ttl       IP_TTL             SOL_IP IP_TTL
 *   tclass    IPV6_TCLASS        SOL_IPV6 IPV6_TCLASS
 *   hoplimit  IPV6_UNICAST_HOPS  SOL_IPV6 IPV6_HOPLIMIT
 * First setsockopt(option, VALUE) on a UDP socket must give SOCK: the value
 * the option reads back, or the errno name of the failure. Then a fresh
 * socket sends a plain datagram and one with the control message carrying
 * VALUE to a receiver on loopback (rx.h); the second must give PKT: the
 * value the receiver saw on it, or the errno name sendmsg fails with. PRIO,
 * if given, is the skb priority the receiver must see on that datagram.
 */
#include <netinet/in.h>
#include <stdlib.h>

#include "attack.h"
#include "rx.h"

enum field { F_TTL, F_TOS, F_MARK, F_PRIORITY };

static const char *const field_names[] = { "ttl", "tos", "mark", "priority" };

struct kind {
	const char *name;
	int family, level, opt;
	const char *opt_name;
	int cmsg_level, cmsg_type;
	const char *cmsg_name;
	enum field field;
};

static const struct kind kinds[] = {
	{ "mark", AF_INET, SOL_SOCKET, SO_MARK, "SO_MARK", SOL_SOCKET, SO_MARK,
	  "SO_MARK", F_MARK },
	{ "priority", AF_INET, SOL_SOCKET, SO_PRIORITY, "SO_PRIORITY",
	  SOL_SOCKET, SO_PRIORITY, "SO_PRIORITY", F_PRIORITY },
	{ "tos", AF_INET, SOL_IP, IP_TOS, "IP_TOS", SOL_IP, IP_TOS, "IP_TOS",
	  F_TOS },
	{ "ttl", AF_INET, SOL_IP, IP_TTL, "IP_TTL", SOL_IP, IP_TTL, "IP_TTL",
	  F_TTL },
	{ "tclass", AF_INET6, SOL_IPV6, IPV6_TCLASS, "IPV6_TCLASS", SOL_IPV6,
	  IPV6_TCLASS, "IPV6_TCLASS", F_TOS },
	{ "hoplimit", AF_INET6, SOL_IPV6, IPV6_UNICAST_HOPS,
	  "IPV6_UNICAST_HOPS", SOL_IPV6, IPV6_HOPLIMIT, "IPV6_HOPLIMIT",
	  F_TTL },
};

static long long field_of(const struct rx_seen *s, enum field f)
{
	const long long v[] = { s->ttl, s->tos, s->mark, s->priority };

	return v[f];
}

/* "EPERM" for a failure, else the number; "none" when not reported. */
static const char *outcome(int err, long long value)
{
	static char buf[32];

	if (err)
		return errname(err);
	if (value < 0)
		return "none";
	snprintf(buf, sizeof(buf), "%lld", value);
	return buf;
}

static void check_option(const struct kind *k, int value, const char *want)
{
	int fd = socket(k->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	socklen_t len = sizeof(int);
	int got = -1, err = 0;
	const char *res;

	if (fd < 0 || setsockopt(fd, k->level, k->opt, &value, sizeof(value)))
		err = errno;
	else if (getsockopt(fd, k->level, k->opt, &got, &len))
		err = errno;
	res = outcome(err, got);
	tap_ok(!strcmp(res, want), "setsockopt(%s, %d): %s %s (want %s)",
	       k->opt_name, value, err ? "fails with" : "the socket reads back",
	       res, want);
	close(fd);
}

static int send_with_cmsg(int fd, const struct kind *k, int value,
			  const struct rx *rx)
{
	char control[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_name = (void *)&rx->addr,
		.msg_namelen = rx->addrlen,
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control,
		.msg_controllen = sizeof(control),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = k->cmsg_level;
	c->cmsg_type = k->cmsg_type;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &value, sizeof(value));
	return sendmsg(fd, &msg, 0) < 0 ? -errno : 0;
}

static void check_packet(const struct kind *k, int value, const char *want,
			 const char *prio)
{
	int fd = socket(k->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct rx_seen seen = { -1, -1, -1, -1 };
	char what[64];
	struct rx rx;
	const char *res;
	int err;

	if (fd < 0 || rx_open(&rx, k->family)) {
		tap_ok(false, "sockets for control message %s: %s",
		       k->cmsg_name, errname(errno));
		return;
	}
	if (rx_send_plain(&rx, fd, &seen) == 0)
		rx_describe("a plain datagram", &seen);
	err = -send_with_cmsg(fd, k, value, &rx);
	if (!err)
		err = -rx_read(&rx, &seen);
	if (!err)
		rx_describe(k->cmsg_name, &seen);
	res = outcome(err, field_of(&seen, k->field));
	if (err)
		snprintf(what, sizeof(what), "fails with %s", res);
	else
		snprintf(what, sizeof(what), "the packet carries %s %s",
			 field_names[k->field], res);
	tap_ok(!strcmp(res, want),
	       "sendmsg with control message %s=%d: %s (want %s)", k->cmsg_name,
	       value, what, want);
	if (prio) {
		res = outcome(err, seen.priority);
		tap_ok(!strcmp(res, prio),
		       "and the packet's priority is %s (want %s)", res, prio);
	}
	close(fd);
	close(rx.fd);
}

int main(int argc, char **argv)
{
	const struct kind *k = NULL;
	int value;

	for (size_t i = 0; argc > 1 && i < sizeof(kinds) / sizeof(kinds[0]);
	     i++)
		if (!strcmp(argv[1], kinds[i].name))
			k = &kinds[i];
	if (!k || (argc != 5 && argc != 6) || parse_int(argv[2], &value)) {
		fprintf(stderr, "usage: cmsg mark|priority|tos|ttl|tclass|"
				"hoplimit VALUE SOCK PKT [PRIO]\n");
		return 2;
	}
	check_option(k, value, argv[3]);
	check_packet(k, value, argv[4], argc == 6 ? argv[5] : NULL);
	return tap_done();
}
