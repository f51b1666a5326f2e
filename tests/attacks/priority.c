// SPDX-License-Identifier: GPL-2.0-only
/*
 * priority: a workload overrides the priority that cgroup/sock_create
 * stamped on its socket (policy "socket": {"priority": N}).
 *
 *   priority STAMP SO_PRIORITY:PRIO IP_TOS:PRIO
 *
 * A new TCP socket must read back STAMP. Then, each on a new socket:
 * setsockopt(SO_PRIORITY, 6), which any process may do for 0-6
 * (net/core/sock.c sk_set_prio_allowed), and setsockopt(IP_TOS, 0x10),
 * which also rewrites sk_priority to rt_tos2priority(0x10) = 6
 * (net/ipv4/ip_sockglue.c __ip_sock_set_tos). Each call must have the
 * outcome before the colon ("ok" or an errno name), and the socket must
 * then read back the priority after it: 6 where the stamp is lost, STAMP
 * where a deny or force rule kept it.
 */
#include <netinet/in.h>
#include <netinet/ip.h>
#include <unistd.h>

#include "attack.h"

#define OVERRIDE_PRIORITY 6 /* TC_PRIO_INTERACTIVE, the highest allowed */

static int read_priority(int fd)
{
	socklen_t len = sizeof(int);
	int prio = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &prio, &len))
		tap_diag("getsockopt(SO_PRIORITY)=%s", errname(errno));
	return prio;
}

/* want is "OUTCOME:PRIORITY", e.g. "EPERM:2". */
static void try_override(int level, int opt, const char *name, int value,
			 const char *want)
{
	const char *colon = strchr(want, ':');
	int fd = tcp_socket(), prio, want_prio;
	const char *res;

	if (!colon || parse_int(colon + 1, &want_prio)) {
		tap_ok(false, "bad expectation '%s' for %s", want, name);
		return;
	}
	if (fd < 0)
		return;
	res = setsockopt(fd, level, opt, &value, sizeof(value)) ?
		      errname(errno) :
		      "ok";
	tap_ok(strlen(res) == (size_t)(colon - want) &&
		       !strncmp(res, want, strlen(res)),
	       "setsockopt(%s, %#x): %s (want %.*s)", name, value, res,
	       (int)(colon - want), want);
	prio = read_priority(fd);
	tap_ok(prio == want_prio, "then the socket's priority is %d (want %d)",
	       prio, want_prio);
	close(fd);
}

int main(int argc, char **argv)
{
	int stamp, fd, prio, seven = 7;

	if (argc != 4 || parse_int(argv[1], &stamp)) {
		fprintf(stderr, "usage: priority STAMP SO_PRIORITY:PRIO "
				"IP_TOS:PRIO\n");
		return 2;
	}
	fd = tcp_socket();
	if (fd < 0)
		return 1;
	prio = read_priority(fd);
	tap_ok(prio == stamp,
	       "a new socket has the priority sock_create stamped: %d "
	       "(want %d)",
	       prio, stamp);
	tap_diag("setsockopt(SO_PRIORITY, 7)=%s (7 and up need "
		 "CAP_NET_ADMIN or CAP_NET_RAW)",
		 setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &seven,
			    sizeof(seven)) ?
			 errname(errno) :
			 "ok");
	close(fd);
	try_override(SOL_SOCKET, SO_PRIORITY, "SO_PRIORITY", OVERRIDE_PRIORITY,
		     argv[2]);
	try_override(SOL_IP, IP_TOS, "IP_TOS", IPTOS_LOWDELAY, argv[3]);
	return tap_done();
}
