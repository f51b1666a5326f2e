// SPDX-License-Identifier: GPL-2.0-only
/*
 * routes: a route's metrics set what a forced TCP_CONGESTION and a clamped
 * IP_TTL govern, for sockets that never call setsockopt, and the route's
 * congestion control even replaces a forced one at connect().
 *
 *   routes CC HOPLIMIT WANT
 *
 * Replaces the local route of 127.0.0.1 in the container's network
 * namespace with one carrying "hoplimit HOPLIMIT congctl lock CC" (what
 * `ip route replace local 127.0.0.1 dev lo table local ... ` does, over
 * rtnetlink: CAP_NET_ADMIN in the namespace's user namespace); that must
 * give WANT ("ok" or the errno name). Then, on loopback:
 *  - a TCP socket that never calls setsockopt connects: its congestion
 *    control must be CC with the route, else the namespace's default
 *    (net.ipv4.tcp_congestion_control);
 *  - a TCP socket that sets TCP_CONGESTION (to bbr, which the policy
 *    forces to something else) before connect(): after it, CC with the
 *    route (tcp_ca_dst_init() replaces it), else what it read back; with
 *    the route locked, setsockopt(TCP_CONGESTION) after connect() gives
 *    EPERM (tcp_set_congestion_control() checks icsk_ca_dst_locked);
 *  - a UDP socket that never sets IP_TTL sends a datagram: it must carry
 *    HOPLIMIT with the route, else net.ipv4.ip_default_ttl
 *    (ip4_dst_hoplimit());
 *  - a UDP socket that sets IP_TTL 255 sends one: it must carry what
 *    IP_TTL reads back (the policy's clamp), route or not (ip_select_ttl()
 *    takes the socket's own TTL first).
 */
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/tcp.h>
#include <stdlib.h>

#include "attack.h"
#include "rx.h"

#define CC_MAX 16

static void add_attr(struct nlmsghdr *h, size_t cap, int type, const void *data,
		     size_t len)
{
	struct rtattr *a =
		(struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	if (NLMSG_ALIGN(h->nlmsg_len) + RTA_SPACE(len) > cap)
		return;
	a->rta_type = (unsigned short)type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_SPACE(len);
}

/* 0 or the errno the kernel answered the route replacement with. */
static int replace_route(const char *cc, unsigned int hoplimit)
{
	union {
		struct nlmsghdr h;
		char buf[512];
	} req = { 0 };
	char metrics[128], reply[1024];
	struct rtattr *m = (struct rtattr *)metrics;
	struct rtmsg *rt;
	struct nlmsgerr *e;
	__u32 dst = htonl(INADDR_LOOPBACK), oif = 1, lock = 1u << RTAX_CC_ALGO;
	int fd, err;
	ssize_t n;

	/* RTA_METRICS nests RTAX_* attributes. */
	m->rta_type = RTA_METRICS;
	m->rta_len = RTA_LENGTH(0);
#define METRIC(t, p, l)                                                     \
	do {                                                                \
		struct rtattr *x =                                          \
			(struct rtattr *)(metrics + RTA_ALIGN(m->rta_len)); \
		x->rta_type = (t);                                          \
		x->rta_len = RTA_LENGTH(l);                                 \
		memcpy(RTA_DATA(x), (p), (l));                              \
		m->rta_len = RTA_ALIGN(m->rta_len) + RTA_SPACE(l);          \
	} while (0)
	METRIC(RTAX_LOCK, &lock, sizeof(lock));
	METRIC(RTAX_HOPLIMIT, &hoplimit, sizeof(hoplimit));
	METRIC(RTAX_CC_ALGO, cc, strlen(cc) + 1);
#undef METRIC
	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(*rt));
	req.h.nlmsg_type = RTM_NEWROUTE;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE |
			    NLM_F_REPLACE;
	rt = NLMSG_DATA(&req.h);
	rt->rtm_family = AF_INET;
	rt->rtm_dst_len = 32;
	rt->rtm_table = RT_TABLE_LOCAL;
	rt->rtm_protocol = RTPROT_KERNEL;
	rt->rtm_scope = RT_SCOPE_HOST;
	rt->rtm_type = RTN_LOCAL;
	add_attr(&req.h, sizeof(req), RTA_DST, &dst, sizeof(dst));
	add_attr(&req.h, sizeof(req), RTA_PREFSRC, &dst, sizeof(dst));
	add_attr(&req.h, sizeof(req), RTA_OIF, &oif, sizeof(oif));
	add_attr(&req.h, sizeof(req), RTA_METRICS, RTA_DATA(m),
		 m->rta_len - RTA_LENGTH(0));
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return errno;
	if (send(fd, &req, req.h.nlmsg_len, 0) < 0) {
		err = errno;
		close(fd);
		return err;
	}
	n = recv(fd, reply, sizeof(reply), 0);
	err = n < 0 ? errno : 0;
	close(fd);
	if (err)
		return err;
	if ((size_t)n < NLMSG_LENGTH(sizeof(*e)) ||
	    ((struct nlmsghdr *)reply)->nlmsg_type != NLMSG_ERROR)
		return EPROTO;
	e = NLMSG_DATA((struct nlmsghdr *)reply);
	return -e->error;
}

static int read_proc(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int r = -1;

	if (!f)
		return -1;
	if (fgets(buf, (int)len, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		r = 0;
	}
	fclose(f);
	return r;
}

static void cc_of(int fd, char *out)
{
	socklen_t len = CC_MAX;

	memset(out, 0, CC_MAX + 1);
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, out, &len) < 0)
		snprintf(out, CC_MAX + 1, "%s", errname(errno));
}

/* A listener on 127.0.0.1 and a connection to it from fd. */
static int connect_local(int fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l = new_socket(AF_INET, SOCK_STREAM, 0), r = -1;

	if (l < 0)
		return -1;
	if (bind(l, (struct sockaddr *)&a, alen) == 0 && listen(l, 4) == 0 &&
	    getsockname(l, (struct sockaddr *)&a, &alen) == 0 &&
	    connect(fd, (struct sockaddr *)&a, alen) == 0)
		r = 0;
	else
		tap_diag("connect to 127.0.0.1: %s", errname(errno));
	close(l);
	return r;
}

static void check_tcp(bool routed, const char *route_cc, const char *ns_cc)
{
	const char *want = routed ? route_cc : ns_cc;
	char cc[CC_MAX + 1], before[CC_MAX + 1];
	int fd = new_socket(AF_INET, SOCK_STREAM, 0);
	int err;

	if (fd < 0 || connect_local(fd)) {
		ok(0, "a TCP connection on loopback");
		return;
	}
	cc_of(fd, cc);
	is_str(cc, want,
	       "a TCP socket that never calls setsockopt connects with %s",
	       routed ? "the route's congestion control" :
			"the namespace's default");
	close(fd);

	fd = new_socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return;
	err = try_set(fd, IPPROTO_TCP, TCP_CONGESTION, "bbr", 3);
	cc_of(fd, before);
	tap_diag("setsockopt(TCP_CONGESTION, bbr) before connect: %s, reads %s",
		 err ? errname(err) : "ok", before);
	if (connect_local(fd)) {
		ok(0, "a TCP connection on loopback");
		close(fd);
		return;
	}
	cc_of(fd, cc);
	is_str(cc, routed ? route_cc : before,
	       "a TCP socket whose setsockopt gave %s connects with %s", before,
	       routed ? "the route's congestion control" : "it");
	err = try_set(fd, IPPROTO_TCP, TCP_CONGESTION, before,
		      (int)strlen(before));
	is_str(err ? errname(err) : "ok", routed ? "EPERM" : "ok",
	       "setsockopt(TCP_CONGESTION) after connect() %s",
	       routed ? "gives EPERM under a locked route" : "works");
	close(fd);
}

static void check_udp(bool routed, int hoplimit, int ns_ttl)
{
	struct rx rx;
	struct rx_seen s;
	int fd, set;

	if (rx_open(&rx, AF_INET)) {
		ok(0, "a receiver on 127.0.0.1");
		return;
	}
	fd = new_socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || rx_send_plain(&rx, fd, &s)) {
		ok(0, "a datagram on loopback");
		return;
	}
	is_int(s.ttl, routed ? hoplimit : ns_ttl,
	       "a UDP socket that never sets IP_TTL sends with TTL %d (%s)",
	       routed ? hoplimit : ns_ttl,
	       routed ? "the route's hoplimit" : "net.ipv4.ip_default_ttl");
	close(fd);
	fd = new_socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return;
	tap_diag("setsockopt(IP_TTL, 255): %s",
		 try_set_int(fd, IPPROTO_IP, IP_TTL, 255) ? errname(errno) :
							    "ok");
	set = read_int(fd, IPPROTO_IP, IP_TTL);
	if (rx_send_plain(&rx, fd, &s)) {
		ok(0, "a datagram on loopback");
		return;
	}
	is_int(s.ttl, set,
	       "a UDP socket whose IP_TTL reads %d sends with it, route or not",
	       set);
	close(fd);
	close(rx.fd);
}

int main(int argc, char **argv)
{
	char ns_cc[CC_MAX + 1], ttl[16];
	int hoplimit, err;
	bool routed;

	if (argc != 4 || parse_int(argv[2], &hoplimit) ||
	    strlen(argv[1]) > CC_MAX - 1) {
		fprintf(stderr, "usage: routes CC HOPLIMIT WANT\n");
		return 2;
	}
	if (read_proc("/proc/sys/net/ipv4/tcp_congestion_control", ns_cc,
		      sizeof(ns_cc)) ||
	    read_proc("/proc/sys/net/ipv4/ip_default_ttl", ttl, sizeof(ttl))) {
		fprintf(stderr, "routes: cannot read /proc/sys/net/ipv4\n");
		return 1;
	}
	err = replace_route(argv[1], (unsigned int)hoplimit);
	is_str(err ? errname(err) : "ok", argv[3],
	       "replacing the route of 127.0.0.1 with hoplimit %d congctl lock %s",
	       hoplimit, argv[1]);
	routed = !err;
	check_tcp(routed, argv[1], ns_cc);
	check_udp(routed, hoplimit, atoi(ttl));
	return tap_done();
}
