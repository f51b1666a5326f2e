// SPDX-License-Identifier: GPL-2.0-only
/*
 * MPTCP: the socket the workload holds is not the one on the wire. The
 * kernel forwards SOL_SOCKET and SOL_TCP options from the MPTCP socket to
 * its TCP subflows without running the sockopt programs again, so the
 * rule must hold at the MPTCP socket, and what reaches the subflows is
 * what it let through. getsockopt(TCP_CONGESTION) on an MPTCP socket
 * reads the first subflow's, the state that sends.
 *
 * Policy "attacks": SO_MARK deny, SO_RCVBUF clamp max 65536,
 * TCP_CONGESTION force "reno".
 *
 * "mptcp hold" keeps the connection open (prints "held") until stdin
 * closes, for the host to look at the subflows; "mptcp quiet" does the
 * same without setting any option first. The kernel copies the MPTCP
 * socket's mark and priority to a subflow only after a setsockopt on the
 * MPTCP socket, so a quiet connection sends unmarked: a gap the suite
 * shows, closed by denying IPPROTO_MPTCP where a mark is stamped.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>

#include "attack.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

static int connected_pair(int *cli, int *srv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int l = new_socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (void *)&a, &alen) ||
	    connect(*cli, (void *)&a, sizeof(a)))
		return -1;
	*srv = accept(l, NULL, NULL);
	close(l);
	return *srv < 0 ? -1 : 0;
}

static void hold(void)
{
	char c;

	printf("held\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
}

int main(int argc, char **argv)
{
	int cli = new_socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP), srv = -1;
	const char *mode = argc > 1 ? argv[1] : "";
	char *cubic = calloc(1, 8192), cc[16] = "";
	socklen_t cclen = sizeof(cc);
	int rc, got;

	if (!tap_ok(cli >= 0,
		    "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP) works (%s)",
		    cli >= 0 ? "ok" : errname(errno)))
		return tap_done();
	if (!strcmp(mode, "quiet")) {
		tap_ok(connected_pair(&cli, &srv) == 0,
		       "an MPTCP connection with no option set is up");
		hold();
		return tap_done();
	}
	rc = try_set_int(cli, SOL_SOCKET, SO_MARK, 5);
	tap_ok(rc == EPERM && read_int(cli, SOL_SOCKET, SO_MARK) == 7,
	       "setsockopt(SO_MARK) on an MPTCP socket gives EPERM, the stamped mark 7 stays (rc %s)",
	       rc ? errname(rc) : "ok");
	rc = try_set_int(cli, SOL_SOCKET, SO_RCVBUF, 4 << 20);
	got = read_int(cli, SOL_SOCKET, SO_RCVBUF);
	tap_ok(rc == 0 && got <= 2 * 65536,
	       "SO_RCVBUF of 4 MiB on an MPTCP socket is clamped (rc %s, %d)",
	       rc ? errname(rc) : "ok", got);
	strcpy(cubic, "cubic");
	rc = try_set(cli, IPPROTO_TCP, TCP_CONGESTION, cubic, 8192);
	tap_ok(connected_pair(&cli, &srv) == 0, "the MPTCP connection is up");
	getsockopt(cli, IPPROTO_TCP, TCP_CONGESTION, cc, &cclen);
	tap_ok(rc == 0 && !strcmp(cc, "reno"),
	       "TCP_CONGESTION \"cubic\" (8192 bytes) on an MPTCP socket reaches the subflow as reno (rc %s, subflow uses %s)",
	       rc ? errname(rc) : "ok", cc);
	if (!strcmp(mode, "hold"))
		hold();
	return tap_done();
}
