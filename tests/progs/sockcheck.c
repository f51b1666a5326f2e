// SPDX-License-Identifier: GPL-2.0-only
/*
 * sockcheck: probes socket behaviour from inside a container.
 *
 * Every check prints one line "key=value" on stdout and the program exits 0
 * whether the kernel allowed the operation or not; a failed call prints the
 * errno name (for example "setsockopt=EPERM"). Only usage errors and
 * failures of the probe itself (no socket at all) exit non-zero.
 *
 *   sockcheck set-mark N          setsockopt(SO_MARK, N)
 *   sockcheck get-mark            getsockopt(SO_MARK) on a new TCP socket
 *   sockcheck mark-rt N           setsockopt(SO_MARK, N), then getsockopt
 *                                 on the same socket: "markrt=N"
 *   sockcheck rcvbuf N            set SO_RCVBUF to N, print the read-back
 *   sockcheck cc NAME             set TCP_CONGESTION, print the read-back
 *   sockcheck keepalive           set SO_KEEPALIVE=1, print the read-back
 *   sockcheck socket FAM TYPE     socket(FAM, TYPE, 0); FAM inet|inet6,
 *                                 TYPE stream|dgram|raw
 *   sockcheck listen PORT [SECS]  TCP listener on 127.0.0.1:PORT, prints
 *                                 "listen=ok" and sleeps SECS (default 60)
 *   sockcheck all                 every restricted-policy check at once
 *   sockcheck spray N             setsockopt(SOL_SOCKET, 2000 + i, 1) for
 *                                 i < N: N distinct options (record mode)
 *   sockcheck mark-loop SECS      setsockopt(SO_MARK, 1) on one TCP socket
 *                                 in a loop for SECS seconds or until
 *                                 SIGTERM (it prints "mark_loop=ready"
 *                                 once it runs): how
 *                                 many calls passed and were refused, how
 *                                 often the answer changed, and
 *                                 "mark_loop_order=ok" unless a call
 *                                 passed after one was refused
 *   sockcheck defaults            what new sockets hold without any
 *                                 setsockopt: SO_RCVBUF, SO_SNDBUF,
 *                                 TCP_KEEPIDLE/INTVL/CNT, TCP_LINGER2,
 *                                 TCP_CONGESTION and IP_TTL of a TCP socket,
 *                                 SO_RCVBUF of a UDP socket ("tcp_rcvbuf=")
 *   sockcheck setopt TYPE LEVEL OPTION VALUE
 *                                 setsockopt(LEVEL, OPTION, VALUE) as an
 *                                 int on an AF_INET socket of TYPE, any
 *                                 numbers (negative too): prints
 *                                 "setopt_LEVEL_OPTION=ok" or the errno
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe_util.h"

#define NAME_MAX_LEN 32

static int set_int(int fd, int level, int opt, int val, const char *key)
{
	if (setsockopt(fd, level, opt, &val, sizeof(val)) < 0) {
		int err = errno;

		printf("%s=%s\n", key, errname(err));
		return -err;
	}
	return 0;
}

/* Prints "KEY=VALUE" or "KEY=ERR" for an int option. */
static void print_int(int fd, int level, int opt, const char *key)
{
	socklen_t len;
	int val = 0;

	len = sizeof(val);
	if (getsockopt(fd, level, opt, &val, &len) < 0)
		printf("%s=%s\n", key, errname(errno));
	else
		printf("%s=%d\n", key, val);
}

static int check_set_mark(int mark)
{
	int fd = tcp_socket();

	if (fd < 0)
		return 1;
	if (set_int(fd, SOL_SOCKET, SO_MARK, mark, "setsockopt") == 0)
		printf("setsockopt=ok\n");
	close(fd);
	return 0;
}

static int check_get_mark(void)
{
	int fd = tcp_socket();

	if (fd < 0)
		return 1;
	print_int(fd, SOL_SOCKET, SO_MARK, "mark");
	close(fd);
	return 0;
}

/* Sets a SOL_SOCKET int option and prints what reads back, as "key=". */
static int check_set_get(int opt, int val, const char *key)
{
	int fd = tcp_socket();

	if (fd < 0)
		return 1;
	if (set_int(fd, SOL_SOCKET, opt, val, key) == 0)
		print_int(fd, SOL_SOCKET, opt, key);
	close(fd);
	return 0;
}

static int check_rcvbuf(int size)
{
	return check_set_get(SO_RCVBUF, size, "rcvbuf");
}

static int check_keepalive(void)
{
	return check_set_get(SO_KEEPALIVE, 1, "keepalive");
}

static int check_cc(const char *name)
{
	char buf[NAME_MAX_LEN];
	socklen_t len;
	int fd = tcp_socket();

	if (fd < 0)
		return 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, strlen(name)) <
	    0) {
		printf("cc=%s\n", errname(errno));
		close(fd);
		return 0;
	}
	memset(buf, 0, sizeof(buf));
	len = sizeof(buf) - 1;
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, buf, &len) < 0)
		printf("cc=%s\n", errname(errno));
	else
		printf("cc=%s\n", buf);
	close(fd);
	return 0;
}

struct named {
	const char *name;
	int value;
};

static const struct named families[] = {
	{ "inet", AF_INET },
	{ "inet6", AF_INET6 },
	{ "unix", AF_UNIX },
};

static const struct named socktypes[] = {
	{ "stream", SOCK_STREAM },
	{ "dgram", SOCK_DGRAM },
	{ "raw", SOCK_RAW },
};

/* *out = the value named s in the n entries of table, or -EINVAL. */
static int lookup(const struct named *table, size_t n, const char *s, int *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(s, table[i].name)) {
			*out = table[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

#define LOOKUP(table, s, out) \
	lookup(table, sizeof(table) / sizeof(table[0]), s, out)

/* Prints "socket_FAM_TYPE=ok" or "socket_FAM_TYPE=ERR". */
static void check_socket(const char *fam, const char *type, int family,
			 int socktype)
{
	/* Raw sockets need a protocol; ICMP exists for both families. */
	int proto = 0;
	int fd;

	if (socktype == SOCK_RAW)
		proto = family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
	fd = socket(family, socktype | SOCK_CLOEXEC, proto);
	if (fd < 0) {
		printf("socket_%s_%s=%s\n", fam, type, errname(errno));
		return;
	}
	printf("socket_%s_%s=ok\n", fam, type);
	close(fd);
}

static int check_listen(int port, int secs)
{
	struct sockaddr_in sa;
	int fd = tcp_socket();
	int one = 1;

	if (fd < 0)
		return 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("listen=%s\n", errname(errno));
		close(fd);
		return 0;
	}
	if (listen(fd, 1) < 0) {
		printf("listen=%s\n", errname(errno));
		close(fd);
		return 0;
	}
	printf("listen=ok\n");
	fflush(stdout);
	sleep((unsigned int)secs);
	close(fd);
	return 0;
}

static int check_all(void)
{
	int ret = 0;

	ret |= check_set_mark(5);
	ret |= check_get_mark();
	ret |= check_rcvbuf(4194304);
	ret |= check_cc("cubic");
	ret |= check_keepalive();
	check_socket("inet", "stream", AF_INET, SOCK_STREAM);
	check_socket("inet", "dgram", AF_INET, SOCK_DGRAM);
	check_socket("inet", "raw", AF_INET, SOCK_RAW);
	check_socket("inet6", "stream", AF_INET6, SOCK_STREAM);
	check_socket("inet6", "dgram", AF_INET6, SOCK_DGRAM);
	printf("done=ok\n");
	return ret;
}

/* Options the kernel does not know: it refuses them, after the program. */
static int spray(int n)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1;

	if (fd < 0) {
		perror("socket");
		return 1;
	}
	for (int i = 0; i < n; i++)
		setsockopt(fd, SOL_SOCKET, 2000 + i, &one, sizeof(one));
	close(fd);
	printf("spray=ok\n");
	return 0;
}

static volatile sig_atomic_t loop_stop;

static void on_term(int sig)
{
	(void)sig;
	loop_stop = 1;
}

/* A policy switch seen from a workload: every answer, in order. */
static int mark_loop(int secs)
{
	long pass = 0, eperm = 0, other = 0, changes = 0, i;
	int fd = tcp_socket(), one = 1, last = -1, bad = 0;
	time_t end = time(NULL) + secs;

	if (fd < 0)
		return 1;
	signal(SIGTERM, on_term);
	printf("mark_loop=ready\n");
	for (i = 0; !loop_stop; i++) {
		int r = setsockopt(fd, SOL_SOCKET, SO_MARK, &one, sizeof(one));
		int now = r == 0 ? 0 : errno;

		if (now == 0) {
			pass++;
			bad |= eperm > 0;
		} else if (now == EPERM) {
			eperm++;
		} else {
			other++;
		}
		changes += last >= 0 && now != last;
		last = now;
		if (i % 1024 == 0 && time(NULL) >= end)
			break;
	}
	close(fd);
	printf("mark_loop_pass=%ld\nmark_loop_eperm=%ld\nmark_loop_other=%ld\n"
	       "mark_loop_changes=%ld\nmark_loop_order=%s\n",
	       pass, eperm, other, changes, bad ? "passed-after-eperm" : "ok");
	return 0;
}

/* Whatever a workload may pass: the kernel decides, after the program. */
static int setopt(int socktype, int level, int opt, int val)
{
	int fd = socket(AF_INET, socktype | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		perror("socket");
		return 1;
	}
	if (setsockopt(fd, level, opt, &val, sizeof(val)) < 0)
		printf("setopt_%d_%d=%s\n", level, opt, errname(errno));
	else
		printf("setopt_%d_%d=ok\n", level, opt);
	close(fd);
	return 0;
}

/* Only getsockopt: what the network namespace's sysctls gave them. */
static int check_defaults(void)
{
	char cc[NAME_MAX_LEN] = "";
	socklen_t len = sizeof(cc) - 1;
	int fd = tcp_socket(), ufd;

	if (fd < 0)
		return 1;
	print_int(fd, SOL_SOCKET, SO_RCVBUF, "tcp_rcvbuf");
	print_int(fd, SOL_SOCKET, SO_SNDBUF, "tcp_sndbuf");
	print_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, "keepidle");
	print_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, "keepintvl");
	print_int(fd, IPPROTO_TCP, TCP_KEEPCNT, "keepcnt");
	print_int(fd, IPPROTO_TCP, TCP_LINGER2, "linger2");
	print_int(fd, IPPROTO_IP, IP_TTL, "ttl");
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &len) < 0)
		printf("cc=%s\n", errname(errno));
	else
		printf("cc=%s\n", cc);
	close(fd);
	ufd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ufd < 0)
		return 1;
	print_int(ufd, SOL_SOCKET, SO_RCVBUF, "udp_rcvbuf");
	close(ufd);
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: sockcheck set-mark N | get-mark | mark-rt N | rcvbuf N |\n"
		"       cc NAME |\n"
		"       keepalive | socket FAMILY TYPE | listen PORT [SECS] | all |\n"
		"       spray N | mark-loop SECS | defaults |\n"
		"       setopt TYPE LEVEL OPTION VALUE\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd;
	int family, socktype;
	int n, secs = 60;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	cmd = argv[1];
	if (!strcmp(cmd, "set-mark") && argc == 3 && !parse_int(argv[2], &n))
		return check_set_mark(n);
	if (!strcmp(cmd, "get-mark") && argc == 2)
		return check_get_mark();
	if (!strcmp(cmd, "mark-rt") && argc == 3 && !parse_int(argv[2], &n))
		return check_set_get(SO_MARK, n, "markrt");
	if (!strcmp(cmd, "rcvbuf") && argc == 3 && !parse_int(argv[2], &n))
		return check_rcvbuf(n);
	if (!strcmp(cmd, "cc") && argc == 3)
		return check_cc(argv[2]);
	if (!strcmp(cmd, "keepalive") && argc == 2)
		return check_keepalive();
	if (!strcmp(cmd, "socket") && argc == 4 &&
	    !LOOKUP(families, argv[2], &family) &&
	    !LOOKUP(socktypes, argv[3], &socktype)) {
		check_socket(argv[2], argv[3], family, socktype);
		return 0;
	}
	if (!strcmp(cmd, "listen") && (argc == 3 || argc == 4) &&
	    !parse_int(argv[2], &n) && n > 0 && n < 65536 &&
	    (argc == 3 || (!parse_int(argv[3], &secs) && secs >= 0)))
		return check_listen(n, secs);
	if (!strcmp(cmd, "spray") && argc == 3 && !parse_int(argv[2], &n))
		return spray(n);
	if (!strcmp(cmd, "mark-loop") && argc == 3 && !parse_int(argv[2], &n) &&
	    n > 0)
		return mark_loop(n);
	if (!strcmp(cmd, "all") && argc == 2)
		return check_all();
	if (!strcmp(cmd, "defaults") && argc == 2)
		return check_defaults();
	if (!strcmp(cmd, "setopt") && argc == 6 &&
	    !LOOKUP(socktypes, argv[2], &socktype) && !parse_int(argv[3], &n) &&
	    !parse_int(argv[4], &family) && !parse_int(argv[5], &secs))
		return setopt(socktype, n, family, secs);
	return usage();
}
