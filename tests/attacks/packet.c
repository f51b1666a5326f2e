// SPDX-License-Identifier: GPL-2.0-only
/*
 * packet: a packet socket writes whole frames, and cgroup/sock_create never
 * sees it (it runs from inet_create and inet6_create only), so no socket
 * deny rule, mark or priority stamp, and no TTL or TOS rule, applies to
 * what it sends.
 *
 *   packet HOW WANT
 *
 * HOW is how the packet socket is made:
 *   af_packet    socket(AF_PACKET, SOCK_RAW, 0)
 *   sock_packet  socket(AF_INET, SOCK_PACKET, 0): net/socket.c turns this
 *                obsolete form into AF_PACKET
 *   uring        IORING_OP_SOCKET(AF_PACKET, SOCK_RAW): no socket syscall
 *   int80        the i386 socket syscall, through int $0x80
 *   socketcall   the i386 socketcall(SYS_SOCKET), arguments in memory
 *   af_xdp       socket(AF_XDP, SOCK_RAW, 0), which also sends raw frames
 * WANT "sent": the socket opens, and a hand-made UDP/IPv4 frame with TTL
 * 255 and TOS 0xb8 reaches a receiver on 127.0.0.1 carrying exactly those,
 * with neither the mark nor the priority that a datagram from an inet
 * socket carries (the stamp). The frame comes from 192.0.2.7 (the kernel
 * drops a local source arriving on lo), and the kernel drops a frame for
 * 127/8 arriving on lo unless net.ipv4.conf.lo.route_localnet is 1: the
 * suite sets it in the container's netns.
 * WANT "opens": the socket opens (nothing is sent).
 * WANT an errno name: making the socket fails with it.
 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sys/mman.h>

#include "attack.h"
#include "rx.h"
#include "uring_socket.h"

#define EVIL_TTL 255
#define EVIL_TOS 0xb8 /* DSCP EF */
#define FRAME_SOURCE 0xc0000207 /* 192.0.2.7: a local source is dropped */

#ifdef __x86_64__
#define I386_NR_SOCKETCALL 102
#define I386_NR_SOCKET 359
#define SYS_SOCKET 1

static long int80(long nr, long a1, long a2, long a3)
{
	long ret;

	asm volatile("int $0x80"
		     : "=a"(ret)
		     : "0"(nr), "b"(a1), "c"(a2), "d"(a3)
		     : "r8", "r9", "r10", "r11", "memory", "cc");
	return ret;
}

/* socketcall passes its arguments as an array of 32-bit words. */
static long socketcall_socket(int family, int type, int protocol)
{
	unsigned int *args = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1,
				  0);

	if (args == MAP_FAILED)
		return -errno;
	args[0] = (unsigned int)family;
	args[1] = (unsigned int)type;
	args[2] = (unsigned int)protocol;
	return int80(I386_NR_SOCKETCALL, SYS_SOCKET, (long)(uintptr_t)args, 0);
}
#endif

static int fd_or_errno(int fd)
{
	return fd < 0 ? -errno : fd;
}

/* The packet socket's fd or -errno; *step names what failed. */
static int open_packet(const char *how, const char **step)
{
	*step = how;
	if (!strcmp(how, "af_packet"))
		return fd_or_errno(
			socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
	if (!strcmp(how, "sock_packet"))
		return fd_or_errno(
			socket(AF_INET, SOCK_PACKET | SOCK_CLOEXEC, 0));
	if (!strcmp(how, "af_xdp"))
		return fd_or_errno(socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0));
	if (!strcmp(how, "uring"))
		return uring_socket(AF_PACKET, SOCK_RAW, 0, step);
#ifdef __x86_64__
	if (!strcmp(how, "int80"))
		return (int)int80(I386_NR_SOCKET, AF_PACKET, SOCK_RAW, 0);
	if (!strcmp(how, "socketcall"))
		return (int)socketcall_socket(AF_PACKET, SOCK_RAW, 0);
#endif
	return -EINVAL;
}

static uint16_t ip_checksum(const void *hdr, size_t len)
{
	const uint16_t *w = hdr;
	uint32_t sum = 0;

	for (; len > 1; len -= 2)
		sum += *w++;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Ethernet (all-zero addresses, which lo accepts) + IPv4 + UDP + 1 byte. */
static size_t make_frame(unsigned char *f, const struct sockaddr_in *dst)
{
	struct ethhdr *eth = (struct ethhdr *)f;
	struct iphdr *ip = (struct iphdr *)(eth + 1);
	struct udphdr *udp = (struct udphdr *)(ip + 1);
	size_t ip_len = sizeof(*ip) + sizeof(*udp) + 1;

	memset(f, 0, sizeof(*eth) + ip_len);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = EVIL_TOS;
	ip->tot_len = htons((uint16_t)ip_len);
	ip->ttl = EVIL_TTL;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = htonl(FRAME_SOURCE);
	ip->daddr = dst->sin_addr.s_addr;
	ip->check = ip_checksum(ip, sizeof(*ip));
	udp->source = htons(9);
	udp->dest = dst->sin_port;
	udp->len = htons((uint16_t)(sizeof(*udp) + 1)); /* no checksum */
	((unsigned char *)(udp + 1))[0] = 'f';
	return sizeof(*eth) + ip_len;
}

static int send_frame(int fd, const char *how, const struct rx *rx)
{
	unsigned char frame[128];
	size_t len = make_frame(frame, (const struct sockaddr_in *)&rx->addr);
	struct sockaddr_ll ll = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_IP),
				  .sll_ifindex = (int)if_nametoindex("lo") };
	struct sockaddr_pkt pkt = { .spkt_family = AF_PACKET,
				    .spkt_device = "lo",
				    .spkt_protocol = htons(ETH_P_IP) };
	ssize_t n;

	if (!strcmp(how, "sock_packet"))
		n = sendto(fd, frame, len, 0, (struct sockaddr *)&pkt,
			   sizeof(pkt));
	else
		n = sendto(fd, frame, len, 0, (struct sockaddr *)&ll,
			   sizeof(ll));
	return n == (ssize_t)len ? 0 : -errno;
}

/* What a plain datagram from an inet socket carries: the stamp, if any. */
static struct rx_seen plain_datagram(struct rx *rx)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct rx_seen seen = { -1, -1, -1, -1 };

	if (fd >= 0 && rx_send_plain(rx, fd, &seen) == 0)
		rx_describe("a datagram from an inet socket", &seen);
	close(fd);
	return seen;
}

static void check_frame(int fd, const char *how, struct rx *rx)
{
	struct rx_seen plain = plain_datagram(rx), seen;
	int err = -send_frame(fd, how, rx);

	if (!err)
		err = -rx_read(rx, &seen);
	if (!tap_ok(!err, "%s: the hand-made frame is sent and received (%s)",
		    how, err ? errname(err) : "ok"))
		return;
	rx_describe("the frame", &seen);
	tap_ok(seen.ttl == EVIL_TTL && seen.tos == EVIL_TOS,
	       "%s: the receiver sees TTL %lld and TOS %#llx (want %d and "
	       "%#x)",
	       how, seen.ttl, seen.tos, EVIL_TTL, EVIL_TOS);
	tap_ok(seen.mark == 0 && seen.priority == 0 && plain.mark > 0 &&
		       plain.priority > 0,
	       "%s: the frame carries mark %lld and priority %lld, a "
	       "datagram from an inet socket the stamp, %lld and %lld",
	       how, seen.mark, seen.priority, plain.mark, plain.priority);
}

int main(int argc, char **argv)
{
	const char *step;
	struct rx rx;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: packet af_packet|sock_packet|uring|"
				"int80|socketcall|af_xdp sent|opens|ERRNO\n");
		return 2;
	}
	if (rx_open(&rx, AF_INET))
		return 1;
	fd = open_packet(argv[1], &step);
	if (!strcmp(argv[2], "opens")) {
		tap_ok(fd >= 0, "%s: the socket opens (%s)", argv[1],
		       fd < 0 ? errname(-fd) : "ok");
		return tap_done();
	}
	if (strcmp(argv[2], "sent")) {
		tap_ok(fd < 0 && !strcmp(errname(-fd), argv[2]),
		       "%s: the socket is refused: %s gives %s (want %s)",
		       argv[1], step, fd < 0 ? errname(-fd) : "a socket",
		       argv[2]);
		return tap_done();
	}
	if (tap_ok(fd >= 0, "%s: a packet socket opens (%s)", argv[1],
		   fd < 0 ? errname(-fd) : "ok"))
		check_frame(fd, argv[1], &rx);
	return tap_done();
}
