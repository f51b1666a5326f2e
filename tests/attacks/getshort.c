// SPDX-License-Identifier: GPL-2.0-only
/*
 * getsockopt runs after the kernel has copied the real value to the
 * caller's buffer. A forced value must overwrite every byte the caller
 * gets, and come back with the length a real value would have had, for
 * every buffer size: a 2-byte SO_MARK buffer must not show the real low
 * bytes, a short TCP_CONGESTION buffer not the real name.
 *
 * Policy "getforce": socket mark 7; getsockopt force SO_MARK 0,
 * TCP_CONGESTION "reno", IP_TTL 5, SO_MAX_PACING_RATE 12345.
 *
 * "getshort hold" makes one TCP listener on 127.0.0.1, prints "held" and
 * keeps it until stdin ends: the suite reads the mark the kernel really
 * stamped through sock_diag (ss -e), which no getsockopt rule hides.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>

#include "attack.h"

static void get_bytes(int fd, int level, int opt, int cap, unsigned char *out,
		      int *outlen)
{
	socklen_t len = (socklen_t)cap;

	memset(out, 0xee, 32);
	*outlen = getsockopt(fd, level, opt, out, &len) < 0 ? -errno : (int)len;
}

static void mark(int cap)
{
	int fd = new_socket(AF_INET, SOCK_STREAM, 0), len;
	unsigned char b[32];
	bool zero = true;

	get_bytes(fd, SOL_SOCKET, SO_MARK, cap, b, &len);
	for (int i = 0; i < cap && i < 4; i++)
		zero &= b[i] == 0;
	tap_ok(len == (cap < 4 ? cap : 4) && zero &&
		       b[cap < 4 ? cap : 4] == 0xee,
	       "getsockopt(SO_MARK) into %d bytes shows only the forced 0 (optlen %d, bytes %02x %02x %02x %02x)",
	       cap, len, b[0], b[1], b[2], b[3]);
	close(fd);
}

static void congestion(int cap)
{
	int fd = new_socket(AF_INET, SOCK_STREAM, 0), len,
	    want = cap < 16 ? cap : 16;
	unsigned char b[32];
	char pad[16] = "reno";

	get_bytes(fd, IPPROTO_TCP, TCP_CONGESTION, cap, b, &len);
	tap_ok(len == want && !memcmp(b, pad, want) && b[want] == 0xee,
	       "getsockopt(TCP_CONGESTION) into %d bytes shows \"%.*s\" of the forced reno (optlen %d)",
	       cap, len > 0 ? len : 0, (char *)b, len);
	close(fd);
}

static void ttl(int cap)
{
	int fd = new_socket(AF_INET, SOCK_DGRAM, 0), len, v = 0;
	unsigned char b[32];

	get_bytes(fd, IPPROTO_IP, IP_TTL, cap, b, &len);
	memcpy(&v, b, cap < 4 ? 1 : 4);
	tap_ok((cap < 4 ? len == 1 && b[0] == 5 : len == 4 && v == 5) &&
		       b[len > 0 ? len : 0] == 0xee,
	       "getsockopt(IP_TTL) into %d bytes comes back as IPv4 would send a TTL of 5 (optlen %d, first byte %d)",
	       cap, len, b[0]);
	close(fd);
}

static void pacing(int cap)
{
	int fd = new_socket(AF_INET, SOCK_STREAM, 0), len;
	unsigned char b[32];
	uint64_t v = 0;

	try_set_int(fd, SOL_SOCKET, SO_MAX_PACING_RATE, 999999);
	get_bytes(fd, SOL_SOCKET, SO_MAX_PACING_RATE, cap, b, &len);
	memcpy(&v, b, len == 8 ? 8 : 4);
	tap_ok(len == (cap >= 8 ? 8 : 4) && v == 12345,
	       "getsockopt(SO_MAX_PACING_RATE) into %d bytes shows the forced 12345 (optlen %d)",
	       cap, len);
	close(fd);
}

static int hold(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = new_socket(AF_INET, SOCK_STREAM, 0);
	char c;

	if (!tap_ok(fd >= 0 && !bind(fd, (void *)&a, sizeof(a)) &&
			    !listen(fd, 1),
		    "a TCP listener on 127.0.0.1 is up (%s)",
		    fd >= 0 ? "ok" : errname(errno)))
		return tap_done();
	printf("held\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	close(fd);
	return tap_done();
}

int main(int argc, char **argv)
{
	static const int caps[] = { 1, 2, 3, 4, 8, 16, 64 };

	if (argc > 1 && !strcmp(argv[1], "hold"))
		return hold();

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		mark(caps[i]);
		congestion(caps[i]);
		ttl(caps[i]);
	}
	pacing(4);
	pacing(8);
	return tap_done();
}
