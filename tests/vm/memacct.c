// SPDX-License-Identifier: GPL-2.0-only
/*
 * memacct: the measurement of the SK_BPF_BYPASS_PROT_MEM series, done from
 * user space so that it runs in any cgroup and needs no BPF of its own.
 *
 *   memacct measure -p tcp|udp -f 4|6 [-n PAIRS] [-P PAGES] [-c CHUNK] [-a]
 *	Create PAIRS connected socket pairs over loopback, send PAGES pages
 *	in total without reading, and print how much the protocol's
 *	memory_allocated (sockstat "mem", in pages) grew. TCP data is queued
 *	on the connect()ed sockets, or with -a on the accept()ed children,
 *	which never pass through socket(2) and so only have the bypass flag
 *	if they inherited it from their listener. SO_MARK and SO_PRIORITY of
 *	one queuing socket are printed too.
 *
 *   memacct pressure [-f 4|6] [-n CONNS] [-b BYTES] [-t SECS] [-m TCP_MEM]
 *	Open CONNS TCP connections and send up to BYTES on each without
 *	reading, until every sender stalls or SECS pass. With -m, set
 *	net.ipv4.tcp_mem to TCP_MEM (e.g. "1000 1000 1000") meanwhile and
 *	restore it after. Print TcpExtTCPMemoryPressures growth, sockstat
 *	mem and the bytes queued (SIOCOUTQ and SIOCINQ sums).
 *
 * IPv6 sockets share the IPv4 counters (tcpv6_prot and udpv6_prot point at
 * tcp_memory_allocated and udp_memory_allocated), and sockstat6 has no
 * "mem" field, so both families read /proc/net/sockstat.
 *
 * sockstat shows only the global counter. Each CPU first collects charges
 * in a per-CPU cache and flushes it once it reaches +-net.core.mem_pcpu_rsv
 * pages (256, also the lowest value allowed), so up to that much per CPU is
 * unseen. measure therefore pins itself, and with it the loopback softirqs,
 * to one CPU (-C), and sends 4 * mem_pcpu_rsv pages by default: the
 * unseen part is then below 2 * mem_pcpu_rsv, and an uncharged run still
 * shows exactly 0. PAIRS defaults to one pair per 32 KiB, which fits in a
 * default receive window and, for UDP with its skb overhead, in rmem.
 *
 * Results go to stdout as one line of key=value pairs; errors to stderr.
 * Exit: 0 done, 1 failure, 2 usage.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sockios.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "vmnet.h"

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif
#ifndef SK_MEMINFO_VARS
#define SK_MEMINFO_RMEM_ALLOC 0
#define SK_MEMINFO_WMEM_QUEUED 5
#define SK_MEMINFO_VARS 9
#endif

#define PAGE 4096
#define PAIR_BYTES (32 * 1024)
#define TCP_MEM_PATH "/proc/sys/net/ipv4/tcp_mem"
#define PCPU_RSV_PATH "/proc/sys/net/core/mem_pcpu_rsv"

struct opts {
	bool tcp;
	int family;
	int pairs;
	long pages;
	long chunk;
	bool accepted;
	long bytes;
	int secs;
	const char *tcp_mem;
	int settle_ms;
	int cpu;
};

struct conn {
	int a; /* the side that sends */
	int b; /* the side that queues, never read */
};

const char *prog = "memacct";

/*
 * The exact counter, as the series' selftest reads it with BPF:
 * memory_allocated plus every CPU's per_cpu_fw_alloc, read here from
 * /proc/kcore at the addresses in /proc/kallsyms (root, no lockdown).
 */
struct kmem {
	int fd;
	Elf64_Phdr *ph;
	int nph;
	unsigned long alloc; /* &{tcp,udp}_memory_allocated, atomic_long_t */
	unsigned long pcpu; /* {tcp,udp}_memory_per_cpu_fw_alloc, int */
	unsigned long offs; /* __per_cpu_offset[] */
	int ncpu;
};

/*
 * Since 6.16 the two counters live in struct net_aligned_data, one cache
 * line each after net_cookie (BTF: tcp at bit 512, udp at bit 1024).
 * kmem_exact() cross-checks the value read against sockstat.
 */
#define NET_ALIGNED_TCP 64
#define NET_ALIGNED_UDP 128

static int ksyms(struct kmem *k, bool tcp)
{
	char alloc[64], pcpu[64], line[512], name[256];
	unsigned long addr, aligned = 0;
	char type;
	FILE *f;

	snprintf(alloc, sizeof(alloc), "%s_memory_allocated",
		 tcp ? "tcp" : "udp");
	snprintf(pcpu, sizeof(pcpu), "%s_memory_per_cpu_fw_alloc",
		 tcp ? "tcp" : "udp");
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* cheap filter first: the file has ~200k lines */
		if (!strstr(line, "_memory_") &&
		    !strstr(line, "_per_cpu_off") &&
		    !strstr(line, "net_aligned_data"))
			continue;
		if (sscanf(line, "%lx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, alloc))
			k->alloc = addr;
		else if (!strcmp(name, pcpu))
			k->pcpu = addr;
		else if (!strcmp(name, "__per_cpu_offset"))
			k->offs = addr;
		else if (!strcmp(name, "net_aligned_data"))
			aligned = addr;
	}
	fclose(f);
	if (!k->alloc && aligned)
		k->alloc = aligned + (tcp ? NET_ALIGNED_TCP : NET_ALIGNED_UDP);
	/* zeroed addresses: kptr_restrict hides them from us */
	return k->alloc && k->pcpu && k->offs ? 0 : -ENOENT;
}

static int kmem_read(const struct kmem *k, unsigned long addr, void *buf,
		     size_t len)
{
	for (int i = 0; i < k->nph; i++) {
		const Elf64_Phdr *p = &k->ph[i];

		if (p->p_type != PT_LOAD || addr < p->p_vaddr ||
		    addr + len > p->p_vaddr + p->p_memsz)
			continue;
		if (pread(k->fd, buf, len, p->p_offset + addr - p->p_vaddr) !=
		    (ssize_t)len)
			return -EIO;
		return 0;
	}
	return -EFAULT;
}

static void kmem_close(struct kmem *k)
{
	if (k->fd >= 0)
		close(k->fd);
	free(k->ph);
	k->fd = -1;
	k->ph = NULL;
}

static int kmem_open(struct kmem *k, bool tcp)
{
	Elf64_Ehdr eh;
	size_t len;
	int err;

	memset(k, 0, sizeof(*k));
	k->fd = -1;
	err = ksyms(k, tcp);
	if (err)
		return err;
	k->fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (k->fd < 0)
		return -errno;
	if (pread(k->fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum)
		goto bad;
	len = eh.e_phnum * sizeof(Elf64_Phdr);
	k->ph = malloc(len);
	if (!k->ph || pread(k->fd, k->ph, len, eh.e_phoff) != (ssize_t)len)
		goto bad;
	k->nph = eh.e_phnum;
	k->ncpu = get_nprocs_conf();
	return 0;
bad:
	kmem_close(k);
	return -EIO;
}

/*
 * memory_allocated + sum of per_cpu_fw_alloc in pages, LONG_MIN when it
 * cannot be read or memory_allocated disagrees with sockstat's mem.
 */
static long kmem_exact(const struct kmem *k, long sockstat)
{
	long total;

	if (k->fd < 0 || kmem_read(k, k->alloc, &total, sizeof(total)))
		return LONG_MIN;
	if ((total > 0 ? total : 0) != sockstat) {
		fprintf(stderr,
			"%s: memory_allocated read from kcore is %ld, sockstat says %ld: not using it\n",
			prog, total, sockstat);
		return LONG_MIN;
	}
	for (int cpu = 0; cpu < k->ncpu; cpu++) {
		unsigned long off;
		int v;

		if (kmem_read(k, k->offs + cpu * sizeof(off), &off,
			      sizeof(off)) ||
		    kmem_read(k, k->pcpu + off, &v, sizeof(v)))
			return LONG_MIN;
		total += v;
	}
	return total;
}

/* "exact_growth=N" for the result line, or "exact_growth=na" */
static void fmt_exact(char *buf, size_t len, long before, long after)
{
	if (before == LONG_MIN || after == LONG_MIN)
		snprintf(buf, len, "exact_growth=na");
	else
		snprintf(buf, len,
			 "exact_before=%ld exact_after=%ld exact_growth=%ld",
			 before, after, after - before);
}

/* net.core.mem_pcpu_rsv, or 0 where the kernel has no per-CPU reserve */
static long pcpu_rsv(void)
{
	char buf[32];

	if (read_file(PCPU_RSV_PATH, buf, sizeof(buf)))
		return 0;
	return strtol(buf, NULL, 10);
}

/* keep the process, and with it the loopback softirqs, on one CPU */
static int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		err_msg("sched_setaffinity", errno);
		return -1;
	}
	return cpu;
}

static int udp_pair(int family, int *a, int *b)
{
	struct sockaddr_storage sa, sb;
	socklen_t la, lb;

	*a = bound_socket(family, SOCK_DGRAM, &sa, &la);
	if (*a < 0)
		return -1;
	*b = bound_socket(family, SOCK_DGRAM, &sb, &lb);
	if (*b < 0) {
		close(*a);
		return -1;
	}
	if (connect(*a, (struct sockaddr *)&sb, lb) ||
	    connect(*b, (struct sockaddr *)&sa, la)) {
		err_msg("connect", errno);
		close(*a);
		close(*b);
		return -1;
	}
	return 0;
}

/* send len bytes in chunks; 0, or -1 when the socket would block */
static int send_bytes(int fd, long len, long chunk)
{
	static char buf[65536];

	if (chunk > (long)sizeof(buf))
		chunk = sizeof(buf);
	while (len > 0) {
		long n = len < chunk ? len : chunk;
		ssize_t r = send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			err_msg("send", errno);
			return -1;
		}
		len -= r;
	}
	return 0;
}

static long meminfo(int fd, int idx)
{
	unsigned int mi[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mi);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &len))
		return 0;
	return mi[idx];
}

/* an int socket option as text, or "E<errno>" when it cannot be read */
static void sockopt_str(int fd, int opt, char *buf, size_t len)
{
	socklen_t olen = sizeof(int);
	int v;

	if (getsockopt(fd, SOL_SOCKET, opt, &v, &olen))
		snprintf(buf, len, "E%d", errno);
	else
		snprintf(buf, len, "%d", v);
}

static void close_conns(struct conn *c, int n)
{
	for (int i = 0; i < n; i++) {
		close(c[i].a);
		close(c[i].b);
	}
}

static int open_conns(const struct opts *o, struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lfd = -1, i;

	if (o->tcp) {
		lfd = tcp_listener(o->family, &ss, &len, o->pairs);
		if (lfd < 0)
			return -1;
	}
	for (i = 0; i < o->pairs; i++) {
		int cli = -1, child = -1, ret;

		if (o->tcp) {
			ret = tcp_pair(lfd, &ss, len, &cli, &child);
			/* data queues on the accept()ed side with -a */
			c[i].a = o->accepted ? cli : child;
			c[i].b = o->accepted ? child : cli;
		} else {
			ret = udp_pair(o->family, &c[i].a, &c[i].b);
		}
		if (ret) {
			close_conns(c, i);
			break;
		}
	}
	if (lfd >= 0)
		close(lfd);
	return i == o->pairs ? 0 : -1;
}

static int do_measure(const struct opts *o)
{
	long before, after, total = o->pages * PAGE, rmem = 0, wmem = 0;
	long per = total / o->pairs, xbefore, xafter;
	char exact[128], mark[16], prio[16];
	struct kmem k;
	struct conn *c;
	int ret = 1, cpu;

	cpu = pin_cpu(o->cpu);
	if (cpu < 0)
		return 1;
	raise_nofile(2 * o->pairs + 32);
	c = calloc(o->pairs, sizeof(*c));
	if (!c)
		return 1;
	kmem_open(&k, o->tcp);
	before = sockstat_mem(o->tcp);
	xbefore = kmem_exact(&k, before);
	if (before < 0 || open_conns(o, c))
		goto out;
	for (int i = 0; i < o->pairs; i++) {
		long len = per + (i == 0 ? total % o->pairs : 0);

		if (send_bytes(c[i].a, len, o->chunk))
			goto out_close;
	}
	msleep(o->settle_ms);
	after = sockstat_mem(o->tcp);
	xafter = kmem_exact(&k, after);
	if (after < 0)
		goto out_close;
	fmt_exact(exact, sizeof(exact), xbefore, xafter);
	for (int i = 0; i < o->pairs; i++) {
		rmem += meminfo(c[i].b, SK_MEMINFO_RMEM_ALLOC);
		wmem += meminfo(c[i].a, SK_MEMINFO_WMEM_QUEUED);
	}
	/* what sock_create gave (or the listener passed on to) the queuing side */
	sockopt_str(c[0].b, SO_MARK, mark, sizeof(mark));
	sockopt_str(c[0].b, SO_PRIORITY, prio, sizeof(prio));
	printf("memacct measure proto=%s family=%d pairs=%d side=%s cpu=%d pcpu_rsv=%ld sent=%ld sent_pages=%ld rmem_alloc=%ld wmem_queued=%ld mark=%s priority=%s mem_before=%ld mem_after=%ld growth=%ld %s\n",
	       o->tcp ? "tcp" : "udp", o->family == AF_INET6 ? 6 : 4, o->pairs,
	       !o->tcp	   ? "udp" :
	       o->accepted ? "accepted" :
			     "connected",
	       cpu, pcpu_rsv(), total, o->pages, rmem, wmem, mark, prio, before,
	       after, after - before, exact);
	fflush(stdout);
	ret = 0;
out_close:
	close_conns(c, o->pairs);
out:
	kmem_close(&k);
	free(c);
	return ret;
}

/* fill_sockets() on the sending side of each connection */
static long pressure_send(const struct opts *o, const struct conn *c)
{
	int *fds = calloc(o->pairs, sizeof(*fds));
	long sent;

	if (!fds)
		return -1;
	for (int i = 0; i < o->pairs; i++)
		fds[i] = c[i].a;
	sent = fill_sockets(fds, o->pairs, o->bytes, o->secs);
	free(fds);
	return sent;
}

static int do_pressure(const struct opts *o)
{
	long p0, p1, m0, m1, sent, outq = 0, inq = 0;
	char old_mem[128] = "";
	struct conn *c;
	int ret = 1;

	raise_nofile(2 * o->pairs + 32);
	c = calloc(o->pairs, sizeof(*c));
	if (!c)
		return 1;
	if (o->tcp_mem) {
		int err = read_file(TCP_MEM_PATH, old_mem, sizeof(old_mem));

		if (!err)
			err = write_file(TCP_MEM_PATH, o->tcp_mem);
		if (err) {
			err_msg(TCP_MEM_PATH, -err);
			old_mem[0] = '\0';
			goto out;
		}
	}
	p0 = proc_counter("/proc/net/netstat", "TcpExt", "TCPMemoryPressures");
	m0 = sockstat_mem(true);
	if (p0 < 0 || m0 < 0 || open_conns(o, c))
		goto out;
	sent = pressure_send(o, c);
	msleep(o->settle_ms);
	for (int i = 0; i < o->pairs; i++) {
		int v;

		if (!ioctl(c[i].a, SIOCOUTQ, &v))
			outq += v;
		if (!ioctl(c[i].b, SIOCINQ, &v))
			inq += v;
	}
	p1 = proc_counter("/proc/net/netstat", "TcpExt", "TCPMemoryPressures");
	m1 = sockstat_mem(true);
	if (sent >= 0 && p1 >= 0 && m1 >= 0) {
		printf("memacct pressure family=%d conns=%d tcp_mem=\"%s\" sent=%ld outq=%ld inq=%ld queued=%ld mem_before=%ld mem=%ld pressures=%ld\n",
		       o->family == AF_INET6 ? 6 : 4, o->pairs,
		       o->tcp_mem ? o->tcp_mem : "unchanged", sent, outq, inq,
		       outq + inq, m0, m1, p1 - p0);
		fflush(stdout);
		ret = 0;
	}
	close_conns(c, o->pairs);
out:
	if (old_mem[0] && write_file(TCP_MEM_PATH, old_mem))
		fprintf(stderr, "%s: cannot restore tcp_mem\n", prog);
	free(c);
	return ret;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s measure -p tcp|udp -f 4|6 [-n PAIRS] [-P PAGES] [-c CHUNK] [-a] [-C CPU] [-w MS]\n"
		"       %s pressure [-f 4|6] [-n CONNS] [-b BYTES] [-t SECS] [-m TCP_MEM] [-w MS]\n",
		prog, prog);
}

static bool parse_long(const char *s, long min, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return !errno && *s && !*end && *out >= min;
}

static int parse(int argc, char **argv, struct opts *o, bool pressure)
{
	int opt;
	long v;

	while ((opt = getopt(argc, argv, "p:f:n:P:c:ab:t:m:w:C:")) != -1) {
		switch (opt) {
		case 'p':
			if (pressure ||
			    (strcmp(optarg, "tcp") && strcmp(optarg, "udp")))
				return -1;
			o->tcp = !strcmp(optarg, "tcp");
			break;
		case 'f':
			if (strcmp(optarg, "4") && strcmp(optarg, "6"))
				return -1;
			o->family = optarg[0] == '6' ? AF_INET6 : AF_INET;
			break;
		case 'n':
			if (!parse_long(optarg, 1, &v) || v > 100000)
				return -1;
			o->pairs = v;
			break;
		case 'P':
			if (!parse_long(optarg, 1, &o->pages))
				return -1;
			break;
		case 'c':
			if (!parse_long(optarg, 1, &o->chunk) ||
			    o->chunk > 65507)
				return -1;
			break;
		case 'a':
			o->accepted = true;
			break;
		case 'b':
			if (!parse_long(optarg, 1, &o->bytes))
				return -1;
			break;
		case 't':
			if (!parse_long(optarg, 1, &v) || v > 3600)
				return -1;
			o->secs = v;
			break;
		case 'm':
			o->tcp_mem = optarg;
			break;
		case 'w':
			if (!parse_long(optarg, 0, &v) || v > 60000)
				return -1;
			o->settle_ms = v;
			break;
		case 'C':
			if (!parse_long(optarg, 0, &v) || v >= CPU_SETSIZE)
				return -1;
			o->cpu = v;
			break;
		default:
			return -1;
		}
	}
	if (optind != argc || (o->accepted && !o->tcp))
		return -1;
	if (!o->pages)
		o->pages = pcpu_rsv() > 8 ? 4 * pcpu_rsv() : 32;
	if (!o->pairs)
		o->pairs = (o->pages * PAGE + PAIR_BYTES - 1) / PAIR_BYTES;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.tcp = true,
		.family = AF_INET,
		.cpu = -1,
		.chunk = 1024,
		.bytes = 256 * 1024,
		.secs = 5,
		.settle_ms = 200,
	};
	bool pressure;

	if (argc < 2) {
		usage();
		return 2;
	}
	if (!strcmp(argv[1], "measure")) {
		pressure = false;
	} else if (!strcmp(argv[1], "pressure")) {
		pressure = true;
		o.pairs = 200;
	} else {
		usage();
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (parse(argc - 1, argv + 1, &o, pressure)) {
		usage();
		return 2;
	}
	return pressure ? do_pressure(&o) : do_measure(&o);
}
