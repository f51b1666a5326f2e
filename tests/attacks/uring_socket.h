/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * socket(2) through io_uring (IORING_OP_SOCKET, Linux 5.19): the kernel
 * makes the socket without a socket syscall, so a seccomp rule on socket's
 * arguments never sees it. One ring, one request, no liburing.
 */
#ifndef URING_SOCKET_H
#define URING_SOCKET_H

#include <errno.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The socket's fd, or -errno; *step names the call that failed. */
static int uring_socket(int family, int type, int protocol, const char **step)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	unsigned char *sq, *cq;
	uint32_t tail, head;
	int ring, res;

	*step = "io_uring_setup";
	ring = (int)syscall(__NR_io_uring_setup, 1, &p);
	if (ring < 0)
		return -errno;
	*step = "mmap";
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(uint32_t),
		  PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(*cqes),
		  PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		res = -errno;
		close(ring);
		return res;
	}
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_SOCKET;
	sqes[0].fd = family;
	sqes[0].off = (uint64_t)type;
	sqes[0].len = (uint32_t)protocol;
	((uint32_t *)(sq + p.sq_off.array))[0] = 0;
	tail = *(uint32_t *)(sq + p.sq_off.tail);
	__atomic_store_n((uint32_t *)(sq + p.sq_off.tail), tail + 1,
			 __ATOMIC_RELEASE);
	*step = "io_uring_enter";
	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) < 0) {
		res = -errno;
		close(ring);
		return res;
	}
	*step = "IORING_OP_SOCKET";
	cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	head = __atomic_load_n((uint32_t *)(cq + p.cq_off.head),
			       __ATOMIC_ACQUIRE);
	res = cqes[head & *(uint32_t *)(cq + p.cq_off.ring_mask)].res;
	close(ring);
	return res;
}

#endif /* URING_SOCKET_H */
