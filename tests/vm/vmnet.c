// SPDX-License-Identifier: GPL-2.0-only
/* Shared by the VM suite's test programs: see vmnet.h. */
#define _GNU_SOURCE
#include "vmnet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void err_msg(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(err));
}

FILE *open_proc(const char *path)
{
	FILE *f = fopen(path, "re");

	if (!f)
		err_msg(path, errno);
	return f;
}

void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

int write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "we");
	int ret = 0;

	if (!f)
		return -errno;
	if (fputs(val, f) < 0)
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

long proc_counter(const char *path, const char *section, const char *name)
{
	static char head[8192], vals[8192];
	size_t slen = strlen(section);
	char *hs, *vs, *h, *v;
	long val = -1;
	FILE *f;

	f = open_proc(path);
	if (!f)
		return -1;
	while (fgets(head, sizeof(head), f) && fgets(vals, sizeof(vals), f)) {
		if (strncmp(head, section, slen) || head[slen] != ':')
			continue;
		h = strtok_r(head + slen + 1, " \n", &hs);
		v = strtok_r(vals + slen + 1, " \n", &vs);
		while (h && v) {
			if (!strcmp(h, name)) {
				val = strtol(v, NULL, 10);
				break;
			}
			h = strtok_r(NULL, " \n", &hs);
			v = strtok_r(NULL, " \n", &vs);
		}
		break;
	}
	fclose(f);
	if (val < 0)
		fprintf(stderr, "%s: no %s %s in %s\n", prog, section, name,
			path);
	return val;
}

long sockstat_mem(bool tcp)
{
	const char *tag = tcp ? "TCP:" : "UDP:";
	char line[256];
	long val = -1;
	FILE *f;

	f = open_proc("/proc/net/sockstat");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if (strncmp(line, tag, strlen(tag)))
			continue;
		p = strstr(line, " mem ");
		if (p)
			val = strtol(p + 5, NULL, 10);
		break;
	}
	fclose(f);
	if (val < 0)
		fprintf(stderr, "%s: no %s mem in /proc/net/sockstat\n", prog,
			tag);
	return val;
}

static socklen_t loopback(int family, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sizeof(*s4);
}

int bound_socket(int family, int type, struct sockaddr_storage *ss,
		 socklen_t *len)
{
	int fd;

	*len = loopback(family, ss);
	fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err_msg("socket", errno);
		return -1;
	}
	if (bind(fd, (struct sockaddr *)ss, *len) ||
	    getsockname(fd, (struct sockaddr *)ss, len)) {
		err_msg("bind", errno);
		close(fd);
		return -1;
	}
	return fd;
}

int tcp_listener(int family, struct sockaddr_storage *ss, socklen_t *len,
		 int backlog)
{
	int fd = bound_socket(family, SOCK_STREAM, ss, len);

	if (fd >= 0 && listen(fd, backlog)) {
		err_msg("listen", errno);
		close(fd);
		return -1;
	}
	return fd;
}

int tcp_pair(int lfd, const struct sockaddr_storage *ss, socklen_t len,
	     int *cli, int *child)
{
	*cli = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*cli < 0) {
		err_msg("socket", errno);
		return -1;
	}
	if (connect(*cli, (const struct sockaddr *)ss, len)) {
		err_msg("connect", errno);
		close(*cli);
		return -1;
	}
	*child = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (*child < 0) {
		err_msg("accept", errno);
		close(*cli);
		return -1;
	}
	return 0;
}

void raise_nofile(int n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= (rlim_t)n)
		return;
	rl.rlim_cur = n;
	if (rl.rlim_max < (rlim_t)n)
		rl.rlim_max = n;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fprintf(stderr, "%s: cannot raise RLIMIT_NOFILE to %d\n", prog,
			n);
}

long fill_sockets(const int *fds, int n, long bytes, int secs)
{
	static char buf[65536];
	long *left, sent = 0;
	struct pollfd *pfd;
	double end = now() + secs;
	int stalls = 0;

	left = calloc(n, sizeof(*left));
	pfd = calloc(n, sizeof(*pfd));
	if (!left || !pfd) {
		free(left);
		free(pfd);
		return -1;
	}
	for (int i = 0; i < n; i++)
		left[i] = bytes;
	while (now() < end && stalls < 3) {
		bool progress = false, busy = false;
		int np = 0;

		for (int i = 0; i < n; i++) {
			long len = left[i] < (long)sizeof(buf) ?
					   left[i] :
					   (long)sizeof(buf);
			ssize_t r;

			if (!len)
				continue;
			busy = true;
			r = send(fds[i], buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (r > 0) {
				left[i] -= r;
				sent += r;
				progress = true;
			} else {
				pfd[np].fd = fds[i];
				pfd[np].events = POLLOUT;
				np++;
			}
		}
		if (!busy)
			break;
		if (progress) {
			stalls = 0;
			continue;
		}
		if (poll(pfd, np, 200) == 0)
			stalls++;
	}
	free(left);
	free(pfd);
	return sent;
}
