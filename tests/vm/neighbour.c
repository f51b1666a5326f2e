// SPDX-License-Identifier: GPL-2.0-only
/*
 * neighbour: the two workloads of the noisy-neighbour benchmark
 * (tests/vm/guest/noisy.sh), each the process of a runc container with a
 * network namespace of its own. tcp_mem, and the protocol memory counter it
 * limits, are host-wide: one container's unread buffers push every other
 * container's sockets into TCP memory pressure.
 *
 *   neighbour victim [-r MB/S] [-c CHUNK] [-t SECS] [-W WARMUP_MS] [-R READ_MS]
 *	One TCP connection over loopback. The sender sends a CHUNK every
 *	CHUNK / RATE seconds (RATE in 10^6 bytes/s); a forked reader reads
 *	everything, as it comes or, with READ_MS, what came meanwhile every
 *	READ_MS. After WARMUP_MS, for SECS, it measures the throughput
 *	the reader got and each chunk's send latency: from the time the
 *	chunk was due to the time send() returned, so that a sender that
 *	falls behind counts its whole wait (chunks still unsent when the
 *	window closes count up to then). Prints one line of key=value:
 *	mbps (the reader's), chunks (due in the window), unsent, p50_ms,
 *	p99_ms, max_ms, mem (sockstat's TCP pages at the end), the counters.
 *
 *   neighbour hog [-n CONNS] [-b BYTES] [-t SECS]
 *	CONNS TCP connections over loopback; sends up to BYTES on each and
 *	never reads, until every sender is capped or stalled or SECS pass.
 *	Prints "neighbour hog filled ...", then holds the buffers until
 *	SIGTERM or SIGINT and prints "neighbour hog done ...".
 *
 * Both report this network namespace's counters (deltas over their run):
 * TcpExtTCPMemoryPressures (entries into pressure, counted in the netns
 * of the socket that entered it), TCPMemoryPressuresChrono (ms under
 * pressure), TCPRcvQDrop (segments dropped for want of receive memory),
 * PruneCalled, and Tcp RetransSegs.
 *
 * Exit: 0 done, 1 failure, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmnet.h"

const char *prog = "neighbour";

struct opts {
	double rate; /* bytes per second */
	long chunk;
	int secs;
	int warmup_ms;
	int read_ms;
	int conns;
	long bytes;
};

struct counters {
	long pressures, pressure_ms, rcvq_drops, prunes, retrans;
};

#define NETSTAT "/proc/net/netstat"

static int read_counters(struct counters *c)
{
	c->pressures = proc_counter(NETSTAT, "TcpExt", "TCPMemoryPressures");
	c->pressure_ms =
		proc_counter(NETSTAT, "TcpExt", "TCPMemoryPressuresChrono");
	c->rcvq_drops = proc_counter(NETSTAT, "TcpExt", "TCPRcvQDrop");
	c->prunes = proc_counter(NETSTAT, "TcpExt", "PruneCalled");
	c->retrans = proc_counter("/proc/net/snmp", "Tcp", "RetransSegs");
	if (c->pressures < 0 || c->pressure_ms < 0 || c->rcvq_drops < 0)
		return -1;
	return c->prunes < 0 || c->retrans < 0 ? -1 : 0;
}

/* " pressures=N ..." : the counters' growth since *a */
static void print_counters(const struct counters *a)
{
	struct counters b;

	if (read_counters(&b)) {
		printf(" counters=error");
		return;
	}
	printf(" pressures=%ld pressure_ms=%ld rcvq_drops=%ld prunes=%ld retrans=%ld",
	       b.pressures - a->pressures, b.pressure_ms - a->pressure_ms,
	       b.rcvq_drops - a->rcvq_drops, b.prunes - a->prunes,
	       b.retrans - a->retrans);
}

static void sleep_until(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - (time_t)t) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static int send_all(int fd, const char *buf, long len)
{
	while (len > 0) {
		ssize_t r = send(fd, buf, len, MSG_NOSIGNAL);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			err_msg("send", errno);
			return -1;
		}
		buf += r;
		len -= r;
	}
	return 0;
}

/* what the reader measured, passed back through a pipe */
struct window {
	long bytes; /* read between begin and end */
	double secs; /* end - begin as the reader saw them */
};

/* read what is queued now; 1 at EOF, 0 when drained, -1 on error */
static int drain(int fd, long *total)
{
	static char buf[262144];

	for (;;) {
		ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (r > 0) {
			*total += r;
			continue;
		}
		if (r == 0)
			return 1;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno != EINTR) {
			err_msg("recv", errno);
			return -1;
		}
	}
}

/*
 * The reader: reads everything until EOF, as soon as it arrives or, with
 * read_ms, in batches every read_ms (an application that processes what
 * came meanwhile). Notes the bytes read and the time when begin and end
 * pass; it wakes at least every 20 ms, so that a stalled connection does
 * not hide the end of the window.
 */
static int reader(int fd, int read_ms, double begin, double end, int out)
{
	struct pollfd p = { fd, POLLIN, 0 };
	double t_begin = 0, t, tick = now();
	long total = 0, at_begin = -1;
	struct window w = { 0, 0 };
	int eof = 0;

	while (!eof) {
		if (read_ms) {
			tick += read_ms / 1000.0;
			sleep_until(tick);
		} else {
			poll(&p, 1, 20);
		}
		eof = drain(fd, &total);
		if (eof < 0)
			return 1;
		t = now();
		if (at_begin < 0 && t >= begin) {
			at_begin = total;
			t_begin = t;
		}
		if (!w.secs && t >= end) {
			w.bytes = total - at_begin;
			w.secs = t - t_begin;
		}
	}
	if (!w.secs) {
		fprintf(stderr,
			"%s: the connection closed before the window ended\n",
			prog);
		return 1;
	}
	return write(out, &w, sizeof(w)) == sizeof(w) ? 0 : 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* the q-quantile of n sorted values (nearest rank) */
static double quantile(const double *v, long n, double q)
{
	long i = (long)(q * n + 0.999999) - 1;

	if (n <= 0)
		return 0;
	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/*
 * The paced sender. lat[] gets one latency per chunk due inside
 * [begin, end); returns how many, or -1. *unsent: chunks of the window
 * still not sent when it closed (their latency counts up to then).
 */
static long sender(int fd, const struct opts *o, double t0, double begin,
		   double end, double *lat, long *unsent)
{
	static char buf[1 << 20];
	double gap = o->chunk / o->rate, due, t;
	long n = 0;

	*unsent = 0;
	for (long k = 0;; k++) {
		due = t0 + k * gap;
		if (due >= end)
			break;
		t = now();
		if (t >= end) {
			/* behind: the window is over, the rest never went */
			if (due >= begin) {
				lat[n++] = t - due;
				(*unsent)++;
			}
			continue;
		}
		sleep_until(due);
		if (send_all(fd, buf, o->chunk))
			return -1;
		if (due >= begin)
			lat[n++] = now() - due;
	}
	return n;
}

static int do_victim(const struct opts *o)
{
	double t0, begin, end, *lat, p50, p99, max;
	struct sockaddr_storage ss;
	struct counters c0;
	int lfd, cli, srv, pfd[2], status, ret = 1;
	long n, unsent, slots;
	struct window w;
	socklen_t len;
	pid_t pid;

	slots = (long)((o->secs + o->warmup_ms / 1000.0) * o->rate / o->chunk) +
		2;
	lat = calloc(slots, sizeof(*lat));
	if (!lat || read_counters(&c0))
		goto out;
	lfd = tcp_listener(AF_INET, &ss, &len, 1);
	if (lfd < 0)
		goto out;
	if (tcp_pair(lfd, &ss, len, &cli, &srv)) {
		close(lfd);
		goto out;
	}
	close(lfd);
	/* a send() that never returns ends the run, with no result line */
	alarm(o->warmup_ms / 1000 + o->secs + 60);
	t0 = now() + 0.05;
	begin = t0 + o->warmup_ms / 1000.0;
	end = begin + o->secs;
	if (pipe2(pfd, O_CLOEXEC)) {
		err_msg("pipe", errno);
		goto out_close;
	}
	pid = fork();
	if (pid < 0) {
		err_msg("fork", errno);
		goto out_pipe;
	}
	if (pid == 0) {
		close(cli);
		close(pfd[0]);
		_exit(reader(srv, o->read_ms, begin, end, pfd[1]));
	}
	close(srv);
	srv = -1;
	close(pfd[1]);
	pfd[1] = -1;
	n = sender(cli, o, t0, begin, end, lat, &unsent);
	/* EOF only once the reader has seen the window close */
	sleep_until(end + 0.05);
	shutdown(cli, SHUT_WR);
	if (read(pfd[0], &w, sizeof(w)) != sizeof(w))
		w.secs = 0;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || n <= 0 || w.secs <= 0) {
		fprintf(stderr, "%s: the victim's stream failed\n", prog);
		goto out_pipe;
	}
	qsort(lat, n, sizeof(*lat), cmp_double);
	p50 = quantile(lat, n, 0.50);
	p99 = quantile(lat, n, 0.99);
	max = lat[n - 1];
	printf("neighbour victim target_mbps=%.2f mbps=%.2f chunk=%ld read_ms=%d secs=%.2f chunks=%ld unsent=%ld p50_ms=%.3f p99_ms=%.3f max_ms=%.3f mem=%ld",
	       o->rate / 1e6, w.bytes / w.secs / 1e6, o->chunk, o->read_ms,
	       w.secs, n, unsent, p50 * 1e3, p99 * 1e3, max * 1e3,
	       sockstat_mem(true));
	print_counters(&c0);
	printf("\n");
	fflush(stdout);
	ret = 0;
out_pipe:
	close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
out_close:
	close(cli);
	if (srv >= 0)
		close(srv);
out:
	free(lat);
	return ret;
}

/* the bytes queued on both sides: SIOCOUTQ of senders, SIOCINQ of readers */
static long queued(const int *snd, const int *rcv, int n)
{
	long sum = 0;

	for (int i = 0; i < n; i++) {
		int v;

		if (!ioctl(snd[i], SIOCOUTQ, &v))
			sum += v;
		if (!ioctl(rcv[i], SIOCINQ, &v))
			sum += v;
	}
	return sum;
}

static int do_hog(const struct opts *o)
{
	int lfd, *snd, *rcv, i = 0, sig, ret = 1;
	struct sockaddr_storage ss;
	struct counters c0;
	sigset_t set;
	socklen_t len;
	long sent;

	/* blocked, so that even as a pid namespace's init it gets them */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise_nofile(2 * o->conns + 32);
	snd = calloc(o->conns, sizeof(*snd));
	rcv = calloc(o->conns, sizeof(*rcv));
	if (!snd || !rcv || read_counters(&c0))
		goto out;
	lfd = tcp_listener(AF_INET, &ss, &len, o->conns);
	if (lfd < 0)
		goto out;
	for (; i < o->conns; i++)
		if (tcp_pair(lfd, &ss, len, &snd[i], &rcv[i]))
			break;
	close(lfd);
	if (i < o->conns)
		goto out_close;
	sent = fill_sockets(snd, o->conns, o->bytes, o->secs);
	if (sent < 0)
		goto out_close;
	printf("neighbour hog filled conns=%d sent=%ld queued=%ld mem=%ld",
	       o->conns, sent, queued(snd, rcv, o->conns), sockstat_mem(true));
	print_counters(&c0);
	printf("\n");
	fflush(stdout);
	while (sigwait(&set, &sig))
		;
	printf("neighbour hog done signal=%d", sig);
	print_counters(&c0);
	printf("\n");
	fflush(stdout);
	ret = 0;
out_close:
	while (i-- > 0) {
		close(snd[i]);
		close(rcv[i]);
	}
out:
	free(snd);
	free(rcv);
	return ret;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s victim [-r MB/S] [-c CHUNK] [-t SECS] [-W WARMUP_MS] [-R READ_MS]\n"
		"       %s hog [-n CONNS] [-b BYTES] [-t SECS]\n",
		prog, prog);
}

static bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return !errno && *s && !*end && *out >= min && *out <= max;
}

static int parse(int argc, char **argv, struct opts *o, bool victim)
{
	const char *opts = victim ? "r:c:t:W:R:" : "n:b:t:";
	int opt;
	long v;

	while ((opt = getopt(argc, argv, opts)) != -1) {
		switch (opt) {
		case 'r':
			if (!parse_long(optarg, 1, 10000, &v))
				return -1;
			o->rate = v * 1e6;
			break;
		case 'c':
			if (!parse_long(optarg, 1, 1 << 20, &o->chunk))
				return -1;
			break;
		case 't':
			if (!parse_long(optarg, 1, 600, &v))
				return -1;
			o->secs = v;
			break;
		case 'W':
			if (!parse_long(optarg, 0, 60000, &v))
				return -1;
			o->warmup_ms = v;
			break;
		case 'R':
			if (!parse_long(optarg, 0, 10000, &v))
				return -1;
			o->read_ms = v;
			break;
		case 'n':
			if (!parse_long(optarg, 1, 100000, &v))
				return -1;
			o->conns = v;
			break;
		case 'b':
			if (!parse_long(optarg, 1, 1L << 30, &o->bytes))
				return -1;
			break;
		default:
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.rate = 8e6,
		.chunk = 16384,
		.secs = 4,
		.warmup_ms = 500,
		.conns = 200,
		.bytes = 262144,
	};
	bool victim;

	if (argc < 2) {
		usage();
		return 2;
	}
	if (!strcmp(argv[1], "victim")) {
		victim = true;
	} else if (!strcmp(argv[1], "hog")) {
		victim = false;
		o.secs = 10;
	} else {
		usage();
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (parse(argc - 1, argv + 1, &o, victim)) {
		usage();
		return 2;
	}
	return victim ? do_victim(&o) : do_hog(&o);
}
