// SPDX-License-Identifier: GPL-2.0-only
/*
 * escape: ways a workload might try to get out of its socket policy, run
 * from inside a policed container by tests/integration/72-escapes.sh.
 *
 * Like sockcheck, every step prints one line "key=value" (the errno name
 * when the kernel refuses, for example "detach=EPERM") and the program
 * exits 0 whatever the kernel decided; only usage errors and failures of
 * the probe itself exit non-zero. Built static, and also with -m32 and
 * -mx32.
 *
 *   escape bpf CGDIR PROG-ID   with the bpf() syscall: query the programs
 *                              on cgroup CGDIR, get an fd for PROG-ID,
 *                              load an allow-all cgroup/setsockopt
 *                              program, detach PROG-ID, and replace it
 *                              (BPF_F_REPLACE) with the one loaded
 *   escape uring-set mark|rcvbuf N
 *                              setsockopt(SO_MARK or SO_RCVBUF, N) on a
 *                              new TCP socket through io_uring
 *                              (IORING_OP_URING_CMD,
 *                              SOCKET_URING_OP_SETSOCKOPT, Linux >= 6.7),
 *                              then read the value back with getsockopt
 *   escape uring-get-mark      getsockopt(SO_MARK) through io_uring
 *   escape int80-set-mark N    setsockopt(SO_MARK, N) through the i386
 *                              syscall ABI (int $0x80) of a 64-bit process
 *   escape x32-set-mark N      setsockopt(SO_MARK, N) through the x32
 *                              syscall ABI (the number with
 *                              __X32_SYSCALL_BIT) of a 64-bit process,
 *                              then getsockopt(SO_MARK) the same way
 *   escape fd-serve PATH       make a TCP socket here, hand it to the
 *                              first client of unix socket PATH over
 *                              SCM_RIGHTS, wait until the client is done,
 *                              then print the socket's mark as seen here
 *   escape fd-take PATH N      receive a socket over unix socket PATH and
 *                              setsockopt(SO_MARK, N) / getsockopt on it
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "probe_util.h"

#define TIMEOUT_SECS 60

/* From include/uapi/linux/io_uring.h of Linux 6.7+ (the build host's
 * headers may be older): IORING_OP_URING_CMD is the 47th opcode, and
 * enum io_uring_socket_op counts SIOCINQ, SIOCOUTQ, GETSOCKOPT, SETSOCKOPT. */
#define ESC_IORING_OP_URING_CMD 46
#define ESC_SOCKET_URING_OP_GETSOCKOPT 2
#define ESC_SOCKET_URING_OP_SETSOCKOPT 3
#define ESC_IORING_OFF_SQ_RING 0ULL
#define ESC_IORING_OFF_CQ_RING 0x8000000ULL
#define ESC_IORING_OFF_SQES 0x10000000ULL
#define ESC_IORING_ENTER_GETEVENTS 1U

/* struct io_uring_sqe as a socket command reads it. */
struct esc_sqe {
	__u8 opcode;
	__u8 flags;
	__u16 ioprio;
	__s32 fd;
	__u32 cmd_op;
	__u32 pad1;
	__u32 level;
	__u32 optname;
	__u32 len;
	__u32 op_flags;
	__u64 user_data;
	__u16 buf_index;
	__u16 personality;
	__u32 optlen;
	__u64 optval;
	__u64 pad2;
};

_Static_assert(sizeof(struct esc_sqe) == 64, "io_uring_sqe is 64 bytes");
_Static_assert(offsetof(struct esc_sqe, cmd_op) == 8, "sqe->cmd_op");
_Static_assert(offsetof(struct esc_sqe, level) == 16, "sqe->level");
_Static_assert(offsetof(struct esc_sqe, optname) == 20, "sqe->optname");
_Static_assert(offsetof(struct esc_sqe, optlen) == 44, "sqe->optlen");
_Static_assert(offsetof(struct esc_sqe, optval) == 48, "sqe->optval");

struct esc_cqe {
	__u64 user_data;
	__s32 res;
	__u32 flags;
};

struct esc_sq_off {
	__u32 head, tail, ring_mask, ring_entries, flags, dropped, array, resv1;
	__u64 user_addr;
};

struct esc_cq_off {
	__u32 head, tail, ring_mask, ring_entries, overflow, cqes, flags, resv1;
	__u64 user_addr;
};

struct esc_uring_params {
	__u32 sq_entries, cq_entries, flags, sq_thread_cpu, sq_thread_idle;
	__u32 features, wq_fd, resv[3];
	struct esc_sq_off sq_off;
	struct esc_cq_off cq_off;
};

_Static_assert(sizeof(struct esc_uring_params) == 120, "io_uring_params");

static void print_mark(int fd, const char *key)
{
	socklen_t len = sizeof(int);
	int val = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_MARK, &val, &len) < 0)
		printf("%s=%s\n", key, errname(errno));
	else
		printf("%s=%d\n", key, val);
}

/* ---- bpf() ---- */

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Prints "KEY=ok" or "KEY=ERR" for the result of a bpf() call. */
static long report(const char *key, long r)
{
	if (r < 0)
		printf("%s=%s\n", key, errname(errno));
	else
		printf("%s=ok\n", key);
	return r;
}

static void bpf_query(int cg)
{
	union bpf_attr attr;
	__u32 ids[16];

	memset(&attr, 0, sizeof(attr));
	attr.query.target_fd = cg;
	attr.query.attach_type = BPF_CGROUP_SETSOCKOPT;
	attr.query.prog_ids = (__u64)(uintptr_t)ids;
	attr.query.prog_cnt = sizeof(ids) / sizeof(ids[0]);
	if (sys_bpf(BPF_PROG_QUERY, &attr) < 0)
		printf("query=%s\n", errname(errno));
	else
		printf("query=ok:%u\n", attr.query.prog_cnt);
}

static int bpf_get_fd(__u32 id)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_id = id;
	attr.open_flags = 0;
	return (int)report("get_fd", sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr));
}

/* An allow-all cgroup/setsockopt program: r0 = 1; exit. */
static int bpf_load_allow(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K,
		  .dst_reg = BPF_REG_0,
		  .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_SOCKOPT;
	attr.expected_attach_type = BPF_CGROUP_SETSOCKOPT;
	attr.insns = (__u64)(uintptr_t)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (__u64)(uintptr_t) "GPL";
	return (int)report("load", sys_bpf(BPF_PROG_LOAD, &attr));
}

static int cmd_bpf(const char *cgdir, const char *idstr)
{
	union bpf_attr attr;
	int cg, ours, mine, id;

	if (parse_int(idstr, &id) || id <= 0)
		return 2;
	cg = open(cgdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0) {
		printf("cgroup=%s\n", errname(errno));
		return 1;
	}
	bpf_query(cg);
	ours = bpf_get_fd((__u32)id);
	mine = bpf_load_allow();

	/* Without an fd for our program, name none: the kernel must still
	 * refuse rather than detach something. */
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = cg;
	attr.attach_bpf_fd = ours >= 0 ? ours : 0;
	attr.attach_type = BPF_CGROUP_SETSOCKOPT;
	report("detach", sys_bpf(BPF_PROG_DETACH, &attr));

	memset(&attr, 0, sizeof(attr));
	attr.target_fd = cg;
	attr.attach_bpf_fd = mine >= 0 ? mine : 0;
	attr.attach_type = BPF_CGROUP_SETSOCKOPT;
	attr.attach_flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE;
	attr.replace_bpf_fd = ours >= 0 ? ours : 0;
	report("replace", sys_bpf(BPF_PROG_ATTACH, &attr));
	return 0;
}

/* ---- io_uring ---- */

struct ring {
	int fd;
	struct esc_uring_params p;
	unsigned char *sq, *cq;
	struct esc_sqe *sqes;
	size_t sq_len, cq_len;
};

static int ring_setup(struct ring *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = (int)syscall(__NR_io_uring_setup, 4, &r->p);
	if (r->fd < 0) {
		printf("io_uring_setup=%s\n", errname(errno));
		return -1;
	}
	r->sq_len = r->p.sq_off.array + r->p.sq_entries * sizeof(__u32);
	r->cq_len = r->p.cq_off.cqes + r->p.cq_entries * sizeof(struct esc_cqe);
	r->sq = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		     ESC_IORING_OFF_SQ_RING);
	r->cq = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		     ESC_IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, r->p.sq_entries * sizeof(struct esc_sqe),
		       PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		       ESC_IORING_OFF_SQES);
	if (r->sq == MAP_FAILED || r->cq == MAP_FAILED ||
	    r->sqes == MAP_FAILED) {
		printf("io_uring_mmap=%s\n", errname(errno));
		return -1;
	}
	return 0;
}

/* Submits one socket command and returns its cqe->res. */
static int ring_sock_cmd(struct ring *r, int sock, __u32 op, int level,
			 int optname, void *optval, __u32 optlen)
{
	__u32 *tail = (__u32 *)(r->sq + r->p.sq_off.tail);
	__u32 mask = *(__u32 *)(r->sq + r->p.sq_off.ring_mask);
	__u32 *array = (__u32 *)(r->sq + r->p.sq_off.array);
	__u32 *head = (__u32 *)(r->cq + r->p.cq_off.head);
	struct esc_cqe *cqes = (struct esc_cqe *)(r->cq + r->p.cq_off.cqes);
	__u32 cmask = *(__u32 *)(r->cq + r->p.cq_off.ring_mask);
	__u32 t = *tail, h;
	struct esc_sqe *sqe = &r->sqes[t & mask];
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = ESC_IORING_OP_URING_CMD;
	sqe->fd = sock;
	sqe->cmd_op = op;
	sqe->level = (__u32)level;
	sqe->optname = (__u32)optname;
	sqe->optval = (__u64)(uintptr_t)optval;
	sqe->optlen = optlen;
	sqe->user_data = 1;
	array[t & mask] = t & mask;
	__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1,
		    ESC_IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
	res = cqes[h & cmask].res;
	__atomic_store_n(head, h + 1, __ATOMIC_RELEASE);
	return res;
}

/*
 * One SOL_SOCKET option command (op) on a new TCP socket, through a new
 * ring: 0 with the socket in *fd and the command's cqe->res in *res, or 1
 * (the reason printed) when the socket or the ring cannot be had.
 */
static int uring_sockopt(__u32 op, int opt, int *val, int *fd, int *res)
{
	struct ring r;

	*fd = tcp_socket();
	if (*fd < 0 || ring_setup(&r))
		return 1;
	*res = ring_sock_cmd(&r, *fd, op, SOL_SOCKET, opt, val, sizeof(*val));
	return 0;
}

static int cmd_uring_set(const char *what, int val)
{
	int opt = !strcmp(what, "mark") ? SO_MARK : SO_RCVBUF;
	socklen_t len = sizeof(int);
	int fd, res, got = 0;

	if (uring_sockopt(ESC_SOCKET_URING_OP_SETSOCKOPT, opt, &val, &fd, &res))
		return 1;
	printf("uring_setsockopt=%s\n", res < 0 ? errname(-res) : "ok");
	if (getsockopt(fd, SOL_SOCKET, opt, &got, &len) < 0)
		printf("value=%s\n", errname(errno));
	else
		printf("value=%d\n", got);
	return 0;
}

static int cmd_uring_get_mark(void)
{
	int fd, res, val = -1;

	if (uring_sockopt(ESC_SOCKET_URING_OP_GETSOCKOPT, SO_MARK, &val, &fd,
			  &res))
		return 1;
	if (res < 0)
		printf("uring_getsockopt=%s\n", errname(-res));
	else
		printf("uring_getsockopt=ok\nvalue=%d\n", val);
	return 0;
}

/* ---- the i386 syscall ABI from a 64-bit process ---- */

#ifdef __x86_64__
#define I386_NR_SETSOCKOPT 366

static long int80(long nr, long a1, long a2, long a3, long a4, long a5)
{
	long ret;

	asm volatile("int $0x80"
		     : "=a"(ret)
		     : "0"(nr), "b"(a1), "c"(a2), "d"(a3), "S"(a4), "D"(a5)
		     : "r8", "r9", "r10", "r11", "memory", "cc");
	return ret;
}

static int cmd_int80_set_mark(int mark)
{
	int fd = tcp_socket();
	int *val;
	long r;

	if (fd < 0)
		return 1;
	/* The i386 ABI passes 32-bit pointers. */
	val = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (val == MAP_FAILED) {
		printf("mmap=%s\n", errname(errno));
		return 1;
	}
	*val = mark;
	r = int80(I386_NR_SETSOCKOPT, fd, SOL_SOCKET, SO_MARK,
		  (long)(uintptr_t)val, sizeof(int));
	printf("int80_setsockopt=%s\n", r < 0 ? errname((int)-r) : "ok");
	print_mark(fd, "mark");
	return 0;
}
#else
static int cmd_int80_set_mark(int mark)
{
	(void)mark;
	printf("int80_setsockopt=unsupported\n");
	return 0;
}
#endif

/* ---- the x32 syscall ABI from a 64-bit process ---- */

#if defined(__x86_64__) && !defined(__ILP32__)
/* arch/x86/entry/syscalls/syscall_64.tbl: the x32 entries */
#define X32_SYSCALL_BIT 0x40000000L
#define X32_NR_SETSOCKOPT (X32_SYSCALL_BIT + 541)
#define X32_NR_GETSOCKOPT (X32_SYSCALL_BIT + 542)

static int cmd_x32_set_mark(int mark)
{
	int fd = tcp_socket();
	int *val;
	unsigned int *len;
	long r;

	if (fd < 0)
		return 1;
	/* x32 pointers are 32 bits wide. */
	val = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (val == MAP_FAILED) {
		printf("mmap=%s\n", errname(errno));
		return 1;
	}
	*val = mark;
	r = syscall(X32_NR_SETSOCKOPT, fd, SOL_SOCKET, SO_MARK, val,
		    sizeof(int));
	printf("x32_setsockopt=%s\n", r < 0 ? errname(errno) : "ok");
	len = (unsigned int *)(val + 1);
	*val = -1;
	*len = sizeof(int);
	r = syscall(X32_NR_GETSOCKOPT, fd, SOL_SOCKET, SO_MARK, val, len);
	if (r < 0)
		printf("x32_getsockopt=%s\n", errname(errno));
	else
		printf("x32_getsockopt=ok\nx32_mark=%d\n", *val);
	print_mark(fd, "mark");
	return 0;
}
#else
static int cmd_x32_set_mark(int mark)
{
	(void)mark;
	printf("x32_setsockopt=unsupported\n");
	return 0;
}
#endif

/* ---- a socket passed over SCM_RIGHTS ---- */

static int unix_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* A one-byte message with room for one fd in its control data. */
struct fd_msg {
	char byte;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg;
};

static void fd_msg_init(struct fd_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->byte = 'f';
	m->iov.iov_base = &m->byte;
	m->iov.iov_len = 1;
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	m->msg.msg_control = m->u.buf;
	m->msg.msg_controllen = sizeof(m->u.buf);
}

static int send_fd(int conn, int fd)
{
	struct fd_msg m;
	struct cmsghdr *c;

	fd_msg_init(&m);
	c = CMSG_FIRSTHDR(&m.msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(conn, &m.msg, 0) < 0 ? -errno : 0;
}

static int recv_fd(int conn)
{
	struct fd_msg m;
	struct cmsghdr *c;
	int fd;

	fd_msg_init(&m);
	if (recvmsg(conn, &m.msg, MSG_CMSG_CLOEXEC) <= 0)
		return -EPROTO;
	c = CMSG_FIRSTHDR(&m.msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static int cmd_fd_serve(const char *path)
{
	struct sockaddr_un sa;
	int sock, lis, conn, r;
	char buf[16];

	if (unix_addr(path, &sa))
		return 2;
	sock = tcp_socket();
	lis = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0 || lis < 0)
		return 1;
	unlink(path);
	if (bind(lis, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lis, 1) < 0) {
		printf("serve=%s\n", errname(errno));
		return 1;
	}
	printf("serve=ok\n");
	fflush(stdout);
	conn = accept4(lis, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0) {
		printf("accept=%s\n", errname(errno));
		return 1;
	}
	r = send_fd(conn, sock);
	printf("sent=%s\n", r ? errname(-r) : "ok");
	/* The client closes when done with the socket. */
	while (read(conn, buf, sizeof(buf)) > 0)
		;
	print_mark(sock, "server_mark");
	unlink(path);
	return 0;
}

static int cmd_fd_take(const char *path, int mark)
{
	struct sockaddr_un sa;
	int conn, fd;

	if (unix_addr(path, &sa))
		return 2;
	conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (conn < 0 || connect(conn, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("connect=%s\n", errname(errno));
		return 1;
	}
	fd = recv_fd(conn);
	if (fd < 0) {
		printf("received=%s\n", errname(-fd));
		return 1;
	}
	printf("received=ok\n");
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) < 0)
		printf("setsockopt=%s\n", errname(errno));
	else
		printf("setsockopt=ok\n");
	print_mark(fd, "mark");
	close(fd);
	close(conn);
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: escape bpf CGDIR PROG-ID | uring-set mark|rcvbuf N |\n"
		"       uring-get-mark | int80-set-mark N | x32-set-mark N |\n"
		"       fd-serve PATH |\n"
		"       fd-take PATH N\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd;
	int n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(TIMEOUT_SECS);
	if (argc < 2)
		return usage();
	cmd = argv[1];
	if (!strcmp(cmd, "bpf") && argc == 4)
		return cmd_bpf(argv[2], argv[3]);
	if (!strcmp(cmd, "uring-set") && argc == 4 &&
	    (!strcmp(argv[2], "mark") || !strcmp(argv[2], "rcvbuf")) &&
	    !parse_int(argv[3], &n))
		return cmd_uring_set(argv[2], n);
	if (!strcmp(cmd, "uring-get-mark") && argc == 2)
		return cmd_uring_get_mark();
	if (!strcmp(cmd, "int80-set-mark") && argc == 3 &&
	    !parse_int(argv[2], &n))
		return cmd_int80_set_mark(n);
	if (!strcmp(cmd, "x32-set-mark") && argc == 3 &&
	    !parse_int(argv[2], &n))
		return cmd_x32_set_mark(n);
	if (!strcmp(cmd, "fd-serve") && argc == 3)
		return cmd_fd_serve(argv[2]);
	if (!strcmp(cmd, "fd-take") && argc == 4 && !parse_int(argv[3], &n))
		return cmd_fd_take(argv[2], n);
	return usage();
}
