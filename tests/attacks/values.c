// SPDX-License-Identifier: GPL-2.0-only
/*
 * Values whose bits say one thing and whose kernel meaning another: the
 * clamp must compare what the handler will keep. SO_RCVBUF(-1) is
 * min_t(u32, -1, rmem_max); SO_RCVLOWAT(-1) is INT_MAX; IP_TOS keeps the
 * low byte; -1 is the default TTL; any non-zero int turns a boolean on;
 * 8 bytes of SO_MAX_PACING_RATE are a u64.
 *
 * Policy "attacks": clamp max SO_RCVBUF/SO_SNDBUF 65536, SO_RCVLOWAT 1000,
 * TCP_NOTSENT_LOWAT 131072, IP_TOS 32, IP_TTL 32, IPV6_UNICAST_HOPS 32,
 * SO_KEEPALIVE 0, SO_PRIORITY 6, SO_MAX_PACING_RATE 1000000.
 * A clamped value is kept as exactly the bound (twice it for the buffer
 * sizes, which the kernel doubles), and one over the bound is clamped too.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>

#include "attack.h"

struct probe {
	const char *what;
	int family, type, level, opt;
	int value;
	long long max; /* what the kernel must report back: the clamp's bound */
};

static const struct probe probes[] = {
	{ "SO_RCVBUF(-1)", AF_INET, SOCK_STREAM, SOL_SOCKET, SO_RCVBUF, -1,
	  2 * 65536 },
	{ "SO_SNDBUF(-1)", AF_INET, SOCK_STREAM, SOL_SOCKET, SO_SNDBUF, -1,
	  2 * 65536 },
	{ "SO_RCVLOWAT(-1)", AF_INET, SOCK_STREAM, SOL_SOCKET, SO_RCVLOWAT, -1,
	  1000 },
	{ "TCP_NOTSENT_LOWAT(-1)", AF_INET, SOCK_STREAM, IPPROTO_TCP,
	  TCP_NOTSENT_LOWAT, -1, 131072 },
	{ "IP_TOS(0x1fc)", AF_INET, SOCK_DGRAM, IPPROTO_IP, IP_TOS, 0x1fc, 32 },
	{ "IP_TOS(-4)", AF_INET, SOCK_DGRAM, IPPROTO_IP, IP_TOS, -4, 32 },
	{ "IP_TTL(-1)", AF_INET, SOCK_DGRAM, IPPROTO_IP, IP_TTL, -1, 32 },
	{ "IP_TTL(33), one over the bound", AF_INET, SOCK_DGRAM, IPPROTO_IP,
	  IP_TTL, 33, 32 },
	{ "SO_RCVLOWAT(1001), one over the bound", AF_INET, SOCK_STREAM,
	  SOL_SOCKET, SO_RCVLOWAT, 1001, 1000 },
	{ "IPV6_UNICAST_HOPS(-1)", AF_INET6, SOCK_DGRAM, IPPROTO_IPV6,
	  IPV6_UNICAST_HOPS, -1, 32 },
	{ "SO_KEEPALIVE(-1)", AF_INET, SOCK_STREAM, SOL_SOCKET, SO_KEEPALIVE,
	  -1, 0 },
	{ "SO_KEEPALIVE(2)", AF_INET, SOCK_STREAM, SOL_SOCKET, SO_KEEPALIVE, 2,
	  0 },
	{ "SO_PRIORITY(-1)", AF_INET, SOCK_STREAM, SOL_SOCKET, SO_PRIORITY, -1,
	  6 },
};

/* The kernel's value as it reports it, read unsigned where it keeps it so. */
static long long kept(const struct probe *p, int fd)
{
	int v = read_int(fd, p->level, p->opt);

	if (p->opt == TCP_NOTSENT_LOWAT || p->opt == SO_PRIORITY)
		return (unsigned int)v;
	return v;
}

static void run(const struct probe *p)
{
	int fd = new_socket(p->family, p->type, 0), rc;
	long long got;

	rc = try_set_int(fd, p->level, p->opt, p->value);
	got = kept(p, fd);
	tap_ok(rc == 0 && got == p->max,
	       "%s is clamped as the kernel reads it (rc %s, the kernel keeps %lld, max %lld)",
	       p->what, rc ? errname(rc) : "ok", got, p->max);
	close(fd);
}

static void pacing(const char *what, const void *buf, int len)
{
	int fd = new_socket(AF_INET, SOCK_STREAM, 0), rc;
	uint64_t got = 0;
	socklen_t glen = sizeof(got);

	rc = try_set(fd, SOL_SOCKET, SO_MAX_PACING_RATE, buf, len);
	getsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &got, &glen);
	tap_ok(rc == 0 && got <= 1000000,
	       "SO_MAX_PACING_RATE %s is clamped (rc %s, the kernel keeps %llu)",
	       what, rc ? errname(rc) : "ok", (unsigned long long)got);
	close(fd);
}

int main(void)
{
	uint64_t wide = 0xffffffff00000001ULL;
	uint32_t unlimited = ~0U;

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		run(&probes[i]);
	pacing("as 8 bytes (low word 1)", &wide, sizeof(wide));
	pacing("as ~0U (unlimited)", &unlimited, sizeof(unlimited));
	return tap_done();
}
