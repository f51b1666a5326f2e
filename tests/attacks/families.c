// SPDX-License-Identifier: GPL-2.0-only
/*
 * families: what no cgroup program sees, and what a seccomp profile
 * (examples/seccomp-socket-allowlist.json) closes.
 *
 *   families socket FAMILY TYPE PROTOCOL WANT
 *       socket(FAMILY, TYPE, PROTOCOL), numbers; WANT "ok" or the errno
 *       name socket() must fail with.
 *   families pair FAMILY TYPE WANT
 *       the same for socketpair().
 *   families diag PORT WANT
 *       a TCP listener on 127.0.0.1:PORT whose policy stamps mark 7 and
 *       priority 2 and whose getsockopt rules force SO_MARK and
 *       SO_PRIORITY to 0 and TCP_CONGESTION to a name other than the
 *       default congestion control; then sock_diag
 *       (NETLINK_SOCK_DIAG, what `ss -tie` reads) asked about it. WANT
 *       "shows": getsockopt returns the forced values and sock_diag the
 *       real ones (mark 7, needing CAP_NET_ADMIN; class id 2, the
 *       priority; the congestion control the socket really has). WANT an
 *       errno name: the netlink socket fails with it.
 */
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>

#include "attack.h"

#define DIAG_BUF 16384
#define CC_MAX 16
#define STAMP_MARK 7
#define STAMP_PRIORITY 2

static const char *result(int fd)
{
	return fd >= 0 ? "ok" : errname(errno);
}

static int check_socket(int family, int type, int protocol, const char *want)
{
	int fd = socket(family, type | SOCK_CLOEXEC, protocol);
	const char *got = result(fd);

	tap_ok(!strcmp(got, want), "socket(%d, %d, %d): %s (want %s)", family,
	       type, protocol, got, want);
	if (fd >= 0)
		close(fd);
	return tap_done();
}

static int check_pair(int family, int type, const char *want)
{
	int sv[2];
	int r = socketpair(family, type | SOCK_CLOEXEC, 0, sv);
	const char *got = r == 0 ? "ok" : errname(errno);

	tap_ok(!strcmp(got, want), "socketpair(%d, %d): %s (want %s)", family,
	       type, got, want);
	if (r == 0) {
		close(sv[0]);
		close(sv[1]);
	}
	return tap_done();
}

struct diag_seen {
	bool found;
	long mark, class_id; /* -1: not reported */
	char cc[CC_MAX];
};

static void diag_attrs(struct inet_diag_msg *m, int len, struct diag_seen *d)
{
	struct rtattr *a = (struct rtattr *)(m + 1);

	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == INET_DIAG_MARK)
			d->mark = *(__u32 *)RTA_DATA(a);
		else if (a->rta_type == INET_DIAG_CLASS_ID)
			d->class_id = *(__u32 *)RTA_DATA(a);
		else if (a->rta_type == INET_DIAG_CONG)
			snprintf(d->cc, sizeof(d->cc), "%s",
				 (const char *)RTA_DATA(a));
	}
}

/* One dump of TCP listeners, the attributes of the one on port. */
static int diag_ask(int nl, int port, struct diag_seen *d)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 req;
	} q = {
		.nh = { .nlmsg_len = sizeof(q),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.req = { .sdiag_family = AF_INET,
			 .sdiag_protocol = IPPROTO_TCP,
			 /* The class id comes with INET_DIAG_TCLASS: its
			  * own bit (17) is past the u8. */
			 .idiag_ext = (1 << (INET_DIAG_CONG - 1)) |
				      (1 << (INET_DIAG_TCLASS - 1)) |
				      (1 << (INET_DIAG_TOS - 1)),
			 .idiag_states = 1 << 10 /* TCP_LISTEN */ },
	};
	static char buf[DIAG_BUF];
	ssize_t n;

	if (send(nl, &q, sizeof(q), 0) < 0)
		return -errno;
	while ((n = recv(nl, buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		int len = (int)n;

		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			struct inet_diag_msg *m = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EIO;
			if (ntohs(m->id.idiag_sport) != port)
				continue;
			d->found = true;
			diag_attrs(
				m,
				(int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m))),
				d);
		}
	}
	return n < 0 ? -errno : 0;
}

static int listener(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = new_socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1)) {
		tap_diag("listener on port %d: %s", port, errname(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void print_forced(int fd, char *cc)
{
	socklen_t len = CC_MAX;

	cc[0] = '\0';
	getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &len);
	cc[CC_MAX - 1] = '\0';
	tap_diag(
		"getsockopt on the listener: SO_MARK %d, SO_PRIORITY %d, TCP_CONGESTION %s",
		read_int(fd, SOL_SOCKET, SO_MARK),
		read_int(fd, SOL_SOCKET, SO_PRIORITY), cc);
}

static int check_diag(int port, const char *want)
{
	struct diag_seen d = { .mark = -1, .class_id = -1 };
	int fd = listener(port), nl, r;
	char cc[CC_MAX];

	if (!tap_ok(fd >= 0, "a TCP listener on 127.0.0.1:%d", port))
		return tap_done();
	print_forced(fd, cc);
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (strcmp(want, "shows")) {
		tap_ok(nl < 0 && !strcmp(errname(errno), want),
		       "socket(AF_NETLINK, NETLINK_SOCK_DIAG): %s (want %s)",
		       result(nl), want);
		return tap_done();
	}
	if (!tap_ok(nl >= 0, "socket(AF_NETLINK, NETLINK_SOCK_DIAG): %s",
		    result(nl)))
		return tap_done();
	r = diag_ask(nl, port, &d);
	tap_ok(!r && d.found, "sock_diag reports the listener (%s)",
	       r ? errname(-r) : "ok");
	tap_ok(read_int(fd, SOL_SOCKET, SO_MARK) == 0 && d.mark == STAMP_MARK,
	       "getsockopt(SO_MARK) says 0, sock_diag says %ld (the stamp)",
	       d.mark);
	tap_ok(read_int(fd, SOL_SOCKET, SO_PRIORITY) == 0 &&
		       d.class_id == STAMP_PRIORITY,
	       "getsockopt(SO_PRIORITY) says 0, sock_diag's class id says %ld (the stamp)",
	       d.class_id);
	tap_ok(d.cc[0] && strcmp(cc, d.cc),
	       "getsockopt(TCP_CONGESTION) says %s (forced), sock_diag says %s",
	       cc, d.cc);
	close(nl);
	close(fd);
	return tap_done();
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "socket"))
		return check_socket(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
				    argv[5]);
	if (argc == 5 && !strcmp(argv[1], "pair"))
		return check_pair(atoi(argv[2]), atoi(argv[3]), argv[4]);
	if (argc == 4 && !strcmp(argv[1], "diag"))
		return check_diag(atoi(argv[2]), argv[3]);
	fprintf(stderr,
		"usage: families socket FAMILY TYPE PROTOCOL WANT | pair FAMILY TYPE WANT | diag PORT WANT\n");
	return 2;
}
