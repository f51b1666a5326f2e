// SPDX-License-Identifier: GPL-2.0-only
/*
 * priority: a workload overrides the priority that cgroup/sock_create
 * stamped on its socket (policy "socket": {"priority": N}).
 *
 *   priority STAMP SO_PRIORITY IP_TOS
 *
 * A new TCP socket must read back STAMP. Then, each on a new socket:
 * setsockopt(SO_PRIORITY, 6), which any process may do for 0-6
 * (net/core/sock.c sk_set_prio_allowed), and setsockopt(IP_TOS, 0x10),
 * which also rewrites sk_priority to rt_tos2priority(0x10) = 6
 * (net/ipv4/ip_sockglue.c __ip_sock_set_tos). SO_PRIORITY and IP_TOS name
 * the outcome each call must have, "ok" or an errno name; the socket must
 * then read back 6 if the call succeeded, else still STAMP.
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
		attack_diag("getsockopt(SO_PRIORITY)=%s", errname(errno));
	return prio;
}

static void try_override(int level, int opt, const char *name, int value,
			 int stamp, const char *want)
{
	int fd = tcp_socket(), prio;
	const char *res;

	if (fd < 0)
		return;
	res = setsockopt(fd, level, opt, &value, sizeof(value)) ?
		      errname(errno) :
		      "ok";
	attack_ok(!strcmp(res, want), "setsockopt(%s, %#x): %s (want %s)", name,
		  value, res, want);
	prio = read_priority(fd);
	if (!strcmp(res, "ok"))
		attack_ok(prio == OVERRIDE_PRIORITY,
			  "the socket's priority is now %d (want %d: the "
			  "stamp is gone)",
			  prio, OVERRIDE_PRIORITY);
	else
		attack_ok(prio == stamp,
			  "the socket's priority is still %d (want the stamp "
			  "%d)",
			  prio, stamp);
	close(fd);
}

int main(int argc, char **argv)
{
	int stamp, fd, prio, seven = 7;

	if (argc != 4 || parse_int(argv[1], &stamp)) {
		fprintf(stderr, "usage: priority STAMP SO_PRIORITY IP_TOS\n");
		return 2;
	}
	fd = tcp_socket();
	if (fd < 0)
		return 1;
	prio = read_priority(fd);
	attack_ok(prio == stamp,
		  "a new socket has the priority sock_create stamped: %d "
		  "(want %d)",
		  prio, stamp);
	attack_diag("setsockopt(SO_PRIORITY, 7)=%s (7 and up need "
		    "CAP_NET_ADMIN or CAP_NET_RAW)",
		    setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &seven,
			       sizeof(seven)) ?
			    errname(errno) :
			    "ok");
	close(fd);
	try_override(SOL_SOCKET, SO_PRIORITY, "SO_PRIORITY", OVERRIDE_PRIORITY,
		     stamp, argv[2]);
	try_override(SOL_IP, IP_TOS, "IP_TOS", IPTOS_LOWDELAY, stamp, argv[3]);
	return attack_done();
}
