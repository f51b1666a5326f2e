// SPDX-License-Identifier: GPL-2.0-only
/*
 * Values longer or shorter than an int. The setsockopt program sees at
 * most a page; for a longer value the kernel ignores the program's copy
 * unless the program sets optlen, and hands the handler the caller's
 * untouched buffer. IPv4 reads a single byte for an optlen below 4.
 *
 * Policy "attacks": SO_RCVBUF clamp max 65536, TCP_CONGESTION force
 * "reno", IP_TTL clamp max 32.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>

#include "attack.h"

#define BIG 8192

static void rcvbuf(int len)
{
	int fd = new_socket(AF_INET, SOCK_STREAM, 0), got;
	char *buf = calloc(1, BIG);
	int want = 4 << 20, rc;

	memcpy(buf, &want, sizeof(want));
	rc = try_set(fd, SOL_SOCKET, SO_RCVBUF, buf, len);
	got = read_int(fd, SOL_SOCKET, SO_RCVBUF);
	tap_ok(rc == 0 && got > 0 && got <= 2 * 65536,
	       "SO_RCVBUF of 4 MiB in a %d-byte buffer is clamped (rc %s, the kernel keeps %d)",
	       len, rc ? errname(rc) : "ok", got);
	free(buf);
	close(fd);
}

static void congestion(int len)
{
	int fd = new_socket(AF_INET, SOCK_STREAM, 0), rc;
	char *buf = calloc(1, BIG), cc[16] = "";
	socklen_t cclen = sizeof(cc);

	strcpy(buf, "cubic");
	rc = try_set(fd, IPPROTO_TCP, TCP_CONGESTION, buf, len);
	getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &cclen);
	tap_ok(rc == 0 && !strcmp(cc, "reno"),
	       "TCP_CONGESTION \"cubic\" in a %d-byte buffer is forced to reno (rc %s, the kernel uses %s)",
	       len, rc ? errname(rc) : "ok", cc);
	free(buf);
	close(fd);
}

static void ttl_byte(int family)
{
	int fd = new_socket(family, SOCK_DGRAM, 0), got, rc;
	unsigned char ttl = 255;

	rc = try_set(fd, IPPROTO_IP, IP_TTL, &ttl, 1);
	got = read_int(fd, IPPROTO_IP, IP_TTL);
	tap_ok(rc == 0 && got >= 1 && got <= 32,
	       "a 1-byte IP_TTL of 255 on an %s socket is clamped (rc %s, TTL %d)",
	       family == AF_INET ? "AF_INET" : "AF_INET6",
	       rc ? errname(rc) : "ok", got);
	close(fd);
}

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);

	rcvbuf(BIG);
	rcvbuf((int)page + 1);
	congestion(BIG);
	congestion((int)page + 1);
	ttl_byte(AF_INET);
	ttl_byte(AF_INET6);
	return tap_done();
}
