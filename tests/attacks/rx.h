/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The other end of a per-packet attack: a UDP socket on loopback that asks
 * the kernel for every value a sender can put on a packet (TTL or hop
 * limit, TOS or traffic class, skb->mark, skb->priority), and reads them
 * off the next datagram. What it reports is what the packet carried, not
 * what the sender's socket options say.
 */
#ifndef RX_H
#define RX_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attack.h"

/* Linux 5.19 and 6.14; the build host's headers may be older. */
#ifndef SO_RCVMARK
#define SO_RCVMARK 75
#endif
#ifndef SO_RCVPRIORITY
#define SO_RCVPRIORITY 82
#endif

#define RX_TIMEOUT_MS 5000

/* What one datagram carried; -1 where the kernel reported nothing. */
struct rx_seen {
	long long ttl; /* IPv4 TTL or IPv6 hop limit */
	long long tos; /* IPv4 TOS or IPv6 traffic class */
	long long mark;
	long long priority;
};

struct rx {
	int fd;
	struct sockaddr_storage addr; /* where senders send to */
	socklen_t addrlen;
};

static int rx_set(int fd, int level, int opt, const char *name)
{
	int one = 1;

	if (setsockopt(fd, level, opt, &one, sizeof(one)) == 0)
		return 0;
	tap_diag("receiver: setsockopt(%s)=%s", name, errname(errno));
	return -errno;
}

static int rx_ask_everything(int fd, int family)
{
	int r = rx_set(fd, SOL_SOCKET, SO_RCVMARK, "SO_RCVMARK");

	r = r ?: rx_set(fd, SOL_SOCKET, SO_RCVPRIORITY, "SO_RCVPRIORITY");
	if (family == AF_INET) {
		r = r ?: rx_set(fd, SOL_IP, IP_RECVTTL, "IP_RECVTTL");
		r = r ?: rx_set(fd, SOL_IP, IP_RECVTOS, "IP_RECVTOS");
	} else {
		r = r	  ?:
			    rx_set(fd, SOL_IPV6, IPV6_RECVHOPLIMIT,
				   "IPV6_RECVHOPLIMIT");
		r = r	  ?:
			    rx_set(fd, SOL_IPV6, IPV6_RECVTCLASS,
				   "IPV6_RECVTCLASS");
	}
	return r;
}

/* A receiver on 127.0.0.1 or ::1, on a port the kernel picks. */
static int rx_open(struct rx *rx, int family)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&rx->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&rx->addr;

	memset(rx, 0, sizeof(*rx));
	rx->addr.ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		rx->addrlen = sizeof(*in);
	} else {
		in6->sin6_addr = in6addr_loopback;
		rx->addrlen = sizeof(*in6);
	}
	rx->fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx->fd < 0 ||
	    bind(rx->fd, (struct sockaddr *)&rx->addr, rx->addrlen) < 0 ||
	    getsockname(rx->fd, (struct sockaddr *)&rx->addr, &rx->addrlen)) {
		tap_diag("receiver: %s", errname(errno));
		return -errno;
	}
	return rx_ask_everything(rx->fd, family);
}

static void rx_cmsg(const struct cmsghdr *c, struct rx_seen *s)
{
	const void *data = CMSG_DATA(c);
	uint32_t u32;
	int i;

	memcpy(&u32, data, sizeof(u32));
	memcpy(&i, data, sizeof(i));
	if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_MARK)
		s->mark = u32;
	else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_PRIORITY)
		s->priority = u32;
	else if (c->cmsg_level == SOL_IP && c->cmsg_type == IP_TTL)
		s->ttl = i;
	else if (c->cmsg_level == SOL_IP && c->cmsg_type == IP_TOS)
		s->tos = *(const uint8_t *)data;
	else if (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_HOPLIMIT)
		s->ttl = i;
	else if (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_TCLASS)
		s->tos = i;
}

/* Reads the next datagram (waiting at most RX_TIMEOUT_MS); 0 or -errno. */
static int rx_read(struct rx *rx, struct rx_seen *s)
{
	char data[256], control[256];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd pfd = { .fd = rx->fd, .events = POLLIN };
	struct cmsghdr *c;

	*s = (struct rx_seen){ -1, -1, -1, -1 };
	if (poll(&pfd, 1, RX_TIMEOUT_MS) != 1)
		return -ETIMEDOUT;
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);
	if (recvmsg(rx->fd, &msg, MSG_DONTWAIT) < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		rx_cmsg(c, s);
	return 0;
}

/* Sends one byte from fd to the receiver and reads what arrived. */
static int rx_send_plain(struct rx *rx, int fd, struct rx_seen *s)
{
	if (sendto(fd, "p", 1, 0, (struct sockaddr *)&rx->addr, rx->addrlen) !=
	    1)
		return -errno;
	return rx_read(rx, s);
}

static void rx_describe(const char *what, const struct rx_seen *s)
{
	tap_diag("%s: the receiver saw ttl=%lld tos=%lld mark=%lld "
		 "priority=%lld",
		 what, s->ttl, s->tos, s->mark, s->priority);
}

#endif /* RX_H */
