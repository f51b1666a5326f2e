// SPDX-License-Identifier: GPL-2.0-only
/*
 * sockbench: the benchmark driver behind `make bench`.
 *
 * Each measuring subcommand is one trial of one variant: it joins a cgroup
 * (so that its sockets belong to it), pins itself to a CPU, makes the call
 * CALLS times per batch and prints the nanoseconds per call of its fastest
 * batch. bench/run.sh interleaves the variants and takes the median of
 * the trials. Every call's result is checked: an unexpected return value or
 * errno is an error (exit 1), so a policy that stopped applying, or a
 * program that failed to attach, breaks the run instead of skewing it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>

#include "sockbench.h"

#define SB_MAX_BATCHES 64
#define SB_ZC_LEN (64 * 1024)

struct sb_name {
	const char *name;
	long value;
};

static const struct sb_name levels[] = {
	{ "SOL_SOCKET", SOL_SOCKET },
	{ "SOL_IP", SOL_IP },
	{ "SOL_TCP", SOL_TCP },
	{ NULL, 0 },
};

static const struct sb_name options[] = {
	{ "SO_KEEPALIVE", SO_KEEPALIVE },
	{ "SO_RCVBUF", SO_RCVBUF },
	{ "SO_SNDBUF", SO_SNDBUF },
	{ "SO_MARK", SO_MARK },
	{ "SO_PRIORITY", SO_PRIORITY },
	{ "TCP_NODELAY", TCP_NODELAY },
	{ NULL, 0 },
};

static const struct sb_name errnos[] = {
	{ "ok", 0 },	      { "EPERM", EPERM },
	{ "EINVAL", EINVAL }, { "ENOPROTOOPT", ENOPROTOOPT },
	{ NULL, 0 },
};

/* One setsockopt/getsockopt call site, and what it must return. */
struct sb_call {
	int fd;
	int level;
	int opt;
	int value;
	int want_errno; /* 0: the call must succeed */
};

void sb_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", SB_IDENT);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int sb_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_name(const struct sb_name *tab, const char *s, long *out)
{
	for (; tab->name; tab++) {
		if (!strcmp(tab->name, s)) {
			*out = tab->value;
			return 0;
		}
	}
	return sb_parse_long(s, 0, 0x7fffffff, out);
}

uint64_t sb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sb_cgroup_join(const char *dir)
{
	_cleanup_close_ int fd = -1;
	char path[4096], pid[32];
	int n;

	if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		sb_err("cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write(fd, pid, n) != n) {
		sb_err("cannot join cgroup %s: %s", dir, strerror(errno));
		return -errno;
	}
	return 0;
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		sb_err("cannot pin to CPU %d: %s", cpu, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Interruptions only ever add time: a trial's value is its fastest batch. */
static double fastest(const double *v, int n)
{
	double m = v[0];

	for (int i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

/*
 * Times EXPR (an int expression, true when the call went as expected) in
 * one untimed warm-up batch and o->batches timed ones, then prints the
 * fastest batch's ns per call. The loop body is inlined: no indirect call
 * is timed.
 */
#define SB_TIMED(o, expr)                                                \
	({                                                               \
		double per_[SB_MAX_BATCHES] = { 0 };                     \
		long bad_ = 0;                                           \
		for (int b_ = -1; b_ < (o)->batches; b_++) {             \
			uint64_t t0_ = sb_now_ns();                      \
			for (long i_ = 0; i_ < (o)->calls; i_++)         \
				bad_ += !(expr);                         \
			if (b_ >= 0)                                     \
				per_[b_] = (double)(sb_now_ns() - t0_) / \
					   (double)(o)->calls;           \
		}                                                        \
		if (!bad_)                                               \
			printf("%.1f\n", fastest(per_, (o)->batches));   \
		bad_;                                                    \
	})

/* After a timed loop: one more call, to report what went wrong. */
static int check_result(const char *what, int r, int err, int want_errno)
{
	if (want_errno ? r == -1 && err == want_errno : r == 0)
		return 0;
	sb_err("%s returned %d (%s), expected %s", what, r,
	       r ? strerror(err) : "ok",
	       want_errno ? strerror(want_errno) : "success");
	return -EIO;
}

static bool set_ok(const struct sb_call *c)
{
	int r = setsockopt(c->fd, c->level, c->opt, &c->value,
			   sizeof(c->value));

	return c->want_errno ? r == -1 && errno == c->want_errno : r == 0;
}

static bool get_ok(const struct sb_call *c)
{
	socklen_t len = sizeof(int);
	int v, r = getsockopt(c->fd, c->level, c->opt, &v, &len);

	return c->want_errno ? r == -1 && errno == c->want_errno : r == 0;
}

static int parse_call(int argc, char **argv, bool with_value, struct sb_call *c)
{
	int need = with_value ? 3 : 2;
	long level, opt, value = 0, err = 0;

	if (argc < need || argc > need + 1) {
		sb_err("usage: set LEVEL OPTION VALUE [EXPECT] | get LEVEL OPTION [EXPECT]");
		return -EINVAL;
	}
	if (parse_name(levels, argv[0], &level) ||
	    parse_name(options, argv[1], &opt) ||
	    (with_value &&
	     sb_parse_long(argv[2], -0x7fffffffL, 0x7fffffffL, &value)) ||
	    (argc > need && parse_name(errnos, argv[need], &err))) {
		sb_err("bad level, option, value or expected result");
		return -EINVAL;
	}
	c->level = (int)level;
	c->opt = (int)opt;
	c->value = (int)value;
	c->want_errno = (int)err;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		sb_err("socket: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int cmd_set(const struct sb_opts *o, int argc, char **argv)
{
	struct sb_call c;
	int r = parse_call(argc, argv, true, &c);

	if (r)
		return r;
	if (!SB_TIMED(o, set_ok(&c)))
		return 0;
	r = setsockopt(c.fd, c.level, c.opt, &c.value, sizeof(c.value));
	return check_result("setsockopt", r, errno, c.want_errno) ?: -EIO;
}

static int cmd_get(const struct sb_opts *o, int argc, char **argv)
{
	socklen_t len = sizeof(int);
	struct sb_call c;
	int v, r = parse_call(argc, argv, false, &c);

	if (r)
		return r;
	if (!SB_TIMED(o, get_ok(&c)))
		return 0;
	r = getsockopt(c.fd, c.level, c.opt, &v, &len);
	return check_result("getsockopt", r, errno, c.want_errno) ?: -EIO;
}

/* A connected loopback TCP pair; *fd gets the client end. */
static int tcp_pair(int *fd, int *peer, int *lfd)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*lfd < 0 || *fd < 0 || bind(*lfd, (struct sockaddr *)&a, alen) ||
	    listen(*lfd, 1) ||
	    getsockname(*lfd, (struct sockaddr *)&a, &alen) ||
	    connect(*fd, (struct sockaddr *)&a, alen)) {
		sb_err("loopback TCP connection: %s", strerror(errno));
		return -errno;
	}
	*peer = accept4(*lfd, NULL, NULL, SOCK_CLOEXEC);
	if (*peer < 0) {
		sb_err("accept: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static bool zc_ok(int fd, const struct tcp_zerocopy_receive *tmpl)
{
	struct tcp_zerocopy_receive zc = *tmpl;
	socklen_t len = sizeof(zc);

	return getsockopt(fd, SOL_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &len) == 0;
}

/* TCP_ZEROCOPY_RECEIVE on a connected socket with nothing queued. */
static int cmd_zerocopy(const struct sb_opts *o, int argc, char **argv)
{
	_cleanup_close_ int fd = -1, peer = -1, lfd = -1;
	struct tcp_zerocopy_receive zc = { 0 };
	socklen_t len = sizeof(zc);
	void *map;
	int r = tcp_pair(&fd, &peer, &lfd);

	if (r)
		return r;
	map = mmap(NULL, SB_ZC_LEN, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		sb_err("mmap of a TCP socket: %s", strerror(errno));
		return -errno;
	}
	zc.address = (uintptr_t)map;
	zc.length = SB_ZC_LEN;
	r = SB_TIMED(o, zc_ok(fd, &zc)) ? -EIO : 0;
	if (r) {
		r = getsockopt(fd, SOL_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &len);
		check_result("getsockopt(TCP_ZEROCOPY_RECEIVE)", r, errno, 0);
		r = -EIO;
	}
	munmap(map, SB_ZC_LEN);
	return r;
}

static bool socket_ok(int type)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	return fd >= 0 && close(fd) == 0;
}

/* socket()+close() of a TCP (default) or UDP socket. */
static int cmd_socket(const struct sb_opts *o, int argc, char **argv)
{
	int type = SOCK_STREAM;

	if (argc > 0 && !strcmp(argv[0], "udp"))
		type = SOCK_DGRAM;
	else if (argc > 0 && strcmp(argv[0], "tcp"))
		return sb_err("usage: socket [tcp|udp]"), -EINVAL;
	if (!SB_TIMED(o, socket_ok(type)))
		return 0;
	sb_err("socket()+close(): %s", strerror(errno));
	return -EIO;
}

static int cmd_getppid(const struct sb_opts *o, int argc, char **argv)
{
	pid_t parent = getppid();

	return SB_TIMED(o, getppid() == parent) ? -EIO : 0;
}

static int cmd_cgroup_arg(int argc, char **argv, int (*fn)(const char *))
{
	if (argc != 1) {
		sb_err("usage: attach-empty|detach-empty|keys CGROUP-DIR, keys-save|keys-wait-off FILE");
		return -EINVAL;
	}
	return fn(argv[0]);
}

/* Moves PID into CGROUP: the benchmarks' stand-in for a container's init
 * leaves its cgroup before poststop, as a stopped container's would. */
static int cmd_cgmove(int argc, char **argv)
{
	char path[4096];
	FILE *f;
	int r;

	if (argc != 2) {
		sb_err("usage: cgmove CGROUP-DIR PID");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", argv[0]);
	f = fopen(path, "we");
	if (!f)
		return sb_err("%s: %s", path, strerror(errno)), -EIO;
	r = fprintf(f, "%s\n", argv[1]) < 0;
	r |= fclose(f) != 0;
	if (r)
		return sb_err("cannot move %s into %s", argv[1], argv[0]), -EIO;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [-c CGROUP] [-C CPU] [-n CALLS] [-b BATCHES] [-s] OP [ARGS]\n"
		"Measuring OPs print the ns per call of their fastest batch:\n"
		"  set LEVEL OPTION VALUE [EXPECT]  setsockopt on a TCP socket\n"
		"  get LEVEL OPTION [EXPECT]        getsockopt on a TCP socket\n"
		"  zerocopy                         TCP_ZEROCOPY_RECEIVE, connected socket\n"
		"  socket [tcp|udp]                 socket()+close()\n"
		"  getppid                          an unrelated syscall\n"
		"EXPECT is ok (default) or an errno name, e.g. EPERM.\n"
		"Other OPs:\n"
		"  attach-empty CGROUP  attach bench/empty.bpf.c (BPF_F_ALLOW_MULTI)\n"
		"  detach-empty CGROUP  detach them again\n"
		"  keys SCRATCH-CGROUP  whether the cgroup BPF static keys are on\n"
		"  keys-save FILE       save the keys' text (take it with every key off)\n"
		"  keys-wait-off FILE   wait (5 s at most) until the text is that again\n"
		"  cgmove CGROUP PID    move PID into CGROUP\n"
		"  exec [-r ROUNDS] [-i STDIN] [-e ERRLOG] -- [<FILE] [NAME=VALUE]... CMD... [:: ...] [::: ...]\n"
		"                       ns of fork+exec+wait per command per round;\n"
		"                       groups (:::) in a new random order each round\n"
		"Options: -c join CGROUP first; -C pin to CPU; -s install a seccomp\n"
		"filter denying setsockopt(SOL_SOCKET, SO_MARK) with EPERM first.\n",
		SB_IDENT);
}

static int parse_opts(int argc, char **argv, struct sb_opts *o)
{
	long v;
	int c;

	while ((c = getopt(argc, argv, "+c:C:n:b:sh")) != -1) {
		switch (c) {
		case 'c':
			o->cgroup = optarg;
			break;
		case 'C':
			if (sb_parse_long(optarg, -1, CPU_SETSIZE - 1, &v))
				return -EINVAL;
			o->cpu = (int)v;
			break;
		case 'n':
			if (sb_parse_long(optarg, 1, 1000000000L, &o->calls))
				return -EINVAL;
			break;
		case 'b':
			if (sb_parse_long(optarg, 1, SB_MAX_BATCHES, &v))
				return -EINVAL;
			o->batches = (int)v;
			break;
		case 's':
			o->seccomp = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

struct sb_cmd {
	const char *name;
	int (*run)(const struct sb_opts *o, int argc, char **argv);
};

static const struct sb_cmd measure_cmds[] = {
	{ "set", cmd_set },	      { "get", cmd_get },
	{ "zerocopy", cmd_zerocopy }, { "socket", cmd_socket },
	{ "getppid", cmd_getppid },   { NULL, NULL },
};

static int run_measure(const struct sb_cmd *cmd, const struct sb_opts *o,
		       int argc, char **argv)
{
	int r = 0;

	if (o->cgroup)
		r = sb_cgroup_join(o->cgroup);
	if (!r)
		r = pin_cpu(o->cpu);
	if (!r && o->seccomp)
		r = sb_seccomp_deny_so_mark();
	if (!r)
		r = cmd->run(o, argc, argv);
	fflush(stdout);
	return r;
}

int main(int argc, char **argv)
{
	struct sb_opts o = { .cpu = -1, .calls = 100000, .batches = 5 };
	const char *op;
	int r = parse_opts(argc, argv, &o);

	if (r)
		return r > 0 ? 0 : (usage(stderr), 2);
	if (optind >= argc)
		return usage(stderr), 2;
	op = argv[optind];
	argc -= optind + 1;
	argv += optind + 1;
	for (const struct sb_cmd *c = measure_cmds; c->name; c++)
		if (!strcmp(op, c->name))
			return run_measure(c, &o, argc, argv) ? 1 : 0;
	if (!strcmp(op, "attach-empty"))
		r = cmd_cgroup_arg(argc, argv, sb_attach_empty);
	else if (!strcmp(op, "detach-empty"))
		r = cmd_cgroup_arg(argc, argv, sb_detach_empty);
	else if (!strcmp(op, "keys"))
		r = cmd_cgroup_arg(argc, argv, sb_read_keys);
	else if (!strcmp(op, "keys-save"))
		r = cmd_cgroup_arg(argc, argv, sb_keys_save);
	else if (!strcmp(op, "keys-wait-off"))
		r = cmd_cgroup_arg(argc, argv, sb_keys_wait_off);
	else if (!strcmp(op, "cgmove"))
		r = cmd_cgmove(argc, argv);
	else if (!strcmp(op, "exec"))
		r = sb_exec(argc + 1, argv - 1);
	else
		return sb_err("unknown OP '%.64s'", op), usage(stderr), 2;
	return r == -EINVAL ? 2 : r ? 1 : 0;
}
