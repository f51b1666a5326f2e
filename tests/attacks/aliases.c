// SPDX-License-Identifier: GPL-2.0-only
/*
 * Other doors to the same room: levels and options the kernel routes to
 * the state a rule polices.
 *  - UDP's handler takes SOL_UDPLITE (136) as its own level;
 *  - SO_RCVBUFFORCE sets the receive buffer past rmem_max (CAP_NET_ADMIN);
 *  - SO_TIMESTAMP_NEW and SO_RCVTIMEO_NEW are the y2038 twins;
 *  - SO_BINDTOIFINDEX binds like SO_BINDTODEVICE;
 *  - SOL_IP options on an AF_INET6 socket go to the IPv4 handler and set
 *    what v4-mapped traffic carries.
 *
 * Policy "attacks": SOL_UDP UDP_CORK deny, SO_RCVBUF clamp max 65536,
 * SO_TIMESTAMP deny, SO_RCVTIMEO deny, SO_BINDTODEVICE deny, IP_TTL clamp
 * max 32.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/time.h>

#include "attack.h"

#ifndef SOL_UDPLITE
#define SOL_UDPLITE 136
#endif
#define SO_TIMESTAMP_NEW_ 63
#define SO_RCVTIMEO_NEW_ 66

static void udplite_level(void)
{
	int fd = new_socket(AF_INET, SOCK_DGRAM, 0);
	int rc = try_set_int(fd, SOL_UDPLITE, UDP_CORK, 1);

	tap_ok(rc == EPERM && read_int(fd, SOL_UDP, UDP_CORK) == 0,
	       "setsockopt(SOL_UDPLITE, UDP_CORK) on a UDP socket gives EPERM and the socket stays uncorked (rc %s, UDP_CORK %d)",
	       rc ? errname(rc) : "ok", read_int(fd, SOL_UDP, UDP_CORK));
	close(fd);
}

static void rcvbufforce(void)
{
	int fd = new_socket(AF_INET, SOCK_STREAM, 0);
	int rc = try_set_int(fd, SOL_SOCKET, SO_RCVBUFFORCE, 4 << 20);
	int got = read_int(fd, SOL_SOCKET, SO_RCVBUF);

	tap_ok(rc == 0 && got <= 2 * 65536,
	       "SO_RCVBUFFORCE of 4 MiB is clamped like SO_RCVBUF (rc %s, the kernel keeps %d)",
	       rc ? errname(rc) : "ok", got);
	close(fd);
}

/* An int option denied through its alias: EPERM, and the socket reads 0. */
static void denied_int_alias(int type, int opt, const char *what)
{
	int fd = new_socket(AF_INET, type, 0);
	int rc = try_set_int(fd, SOL_SOCKET, opt, 1);
	int got = read_int(fd, SOL_SOCKET, opt);

	tap_ok(rc == EPERM && got == 0, "%s (rc %s, reads %d)", what,
	       rc ? errname(rc) : "ok", got);
	close(fd);
}

static void rcvtimeo_new(void)
{
	int fd = new_socket(AF_INET, SOCK_STREAM, 0);
	long long tv[2] = { 5, 0 }; /* struct __kernel_sock_timeval */
	long long got[2] = { -1, -1 };
	socklen_t len = sizeof(got);
	int rc = try_set(fd, SOL_SOCKET, SO_RCVTIMEO_NEW_, tv, sizeof(tv));

	getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO_NEW_, got, &len);
	tap_ok(rc == EPERM && got[0] == 0 && got[1] == 0,
	       "SO_RCVTIMEO_NEW is denied like SO_RCVTIMEO (rc %s, timeout %llds)",
	       rc ? errname(rc) : "ok", got[0]);
	close(fd);
}

/* The TTL a v4-mapped datagram from an AF_INET6 socket arrives with. */
static int mapped_ttl(int tx)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6 };
	struct sockaddr_in at = { .sin_family = AF_INET };
	char data[64], ctl[64];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = ctl,
			      .msg_controllen = sizeof(ctl) };
	socklen_t alen = sizeof(at);
	int rx = new_socket(AF_INET, SOCK_DGRAM, 0), on = 1, ttl = -1;

	at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(rx, IPPROTO_IP, IP_RECVTTL, &on, sizeof(on));
	if (bind(rx, (void *)&at, sizeof(at)) ||
	    getsockname(rx, (void *)&at, &alen))
		return -1;
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &to.sin6_addr);
	to.sin6_port = at.sin_port;
	if (sendto(tx, "x", 1, 0, (void *)&to, sizeof(to)) == 1 &&
	    recvmsg(rx, &msg, 0) == 1)
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
		     c = CMSG_NXTHDR(&msg, c))
			if (c->cmsg_level == IPPROTO_IP &&
			    c->cmsg_type == IP_TTL)
				memcpy(&ttl, CMSG_DATA(c), sizeof(ttl));
	close(rx);
	return ttl;
}

static void sol_ip_on_inet6(void)
{
	int fd = new_socket(AF_INET6, SOCK_DGRAM, 0);
	int rc = try_set_int(fd, IPPROTO_IP, IP_TTL, 200);
	int got = read_int(fd, IPPROTO_IP, IP_TTL), wire = mapped_ttl(fd);

	tap_ok(rc == 0 && got <= 32 && wire >= 1 && wire <= 32,
	       "SOL_IP IP_TTL 200 on an AF_INET6 socket is clamped, on the socket and on the wire (rc %s, TTL %d, a v4-mapped datagram arrives with %d)",
	       rc ? errname(rc) : "ok", got, wire);
	close(fd);
}

int main(void)
{
	udplite_level();
	rcvbufforce();
	denied_int_alias(SOCK_DGRAM, SO_TIMESTAMP_NEW_,
			 "SO_TIMESTAMP_NEW is denied like SO_TIMESTAMP");
	rcvtimeo_new();
	denied_int_alias(SOCK_DGRAM, SO_BINDTOIFINDEX,
			 "SO_BINDTOIFINDEX is denied like SO_BINDTODEVICE");
	sol_ip_on_inet6();
	return tap_done();
}
