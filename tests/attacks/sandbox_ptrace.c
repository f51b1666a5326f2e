// SPDX-License-Identifier: GPL-2.0-only
/*
 * sandbox_ptrace: a socket is policed by the cgroup it was created in.
 * A container that shares its pod's pid namespace (shareProcessNamespace)
 * and runs as the pause process's uid can trace the pause process without
 * any capability (same uid, and the pause process has none), make it call
 * socket(), and take the socket with pidfd_getfd(): the socket belongs to
 * the sandbox's cgroup, and only the sandbox's policy applies to it, even
 * when this container calls setsockopt on it.
 *
 *   sandbox_ptrace PID WANT
 *
 * PID is the pause process in this container's pid namespace (1). WANT:
 *   escapes  the sandbox is not policed: socket(AF_INET) and (denied by
 *            the container's policy) socket(AF_INET6) made there open,
 *            SO_RCVBUF 4 MiB reads back what the kernel keeps with no
 *            policy (twice the request, capped by net.core.rmem_max), and
 *            a congestion control other than reno stays (the container's
 *            policy forces reno)
 *   EPERM    socket(AF_INET) and socket(AF_INET6) in the sandbox fail
 *            with EPERM (sandbox_policy)
 *   clamp:N  the sandbox's own policy, which allows sockets and clamps
 *            SO_RCVBUF to N: both sockets open (the container's
 *            socket.deny does not apply), SO_RCVBUF 4 MiB reads back 2 x N
 *            (the sandbox's clamp, not the container's), the congestion
 *            control stays (the container's forced reno does not apply)
 * Either way the container's own sockets are checked to be policed
 * (restricted: SO_RCVBUF clamped, reno forced, AF_INET6 denied), and the
 * pause process is left as it was: in the state it had before it was
 * traced (sleeping in its wait), no longer traced.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "attack.h"

#define BIG_RCVBUF (4 << 20)
#define CLAMPED_MAX (2 * 65536) /* the kernel doubles what it keeps */
#define CC_MAX 16
#define X86_SYSCALL_INSN 0x050f /* 0f 05, little-endian */

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#ifdef __x86_64__
/* Stopped inside a syscall (sigsuspend), the pause process's rip is just
 * past its syscall instruction: run one more syscall from there, one step,
 * then put every register back. */
static long inject(pid_t pid, long nr, long a0, long a1, long a2)
{
	struct user_regs_struct saved, regs;
	long insn;
	int status;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &saved) < 0)
		return -errno;
	errno = 0;
	insn = ptrace(PTRACE_PEEKTEXT, pid, (void *)(saved.rip - 2), NULL);
	if (errno || (insn & 0xffff) != X86_SYSCALL_INSN)
		return -ENOEXEC;
	regs = saved;
	regs.rip = saved.rip - 2;
	regs.orig_rax = (unsigned long long)-1; /* no syscall restart */
	regs.rax = (unsigned long long)nr;
	regs.rdi = (unsigned long long)a0;
	regs.rsi = (unsigned long long)a1;
	regs.rdx = (unsigned long long)a2;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0 ||
	    ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0 ||
	    waitpid(pid, &status, __WALL) < 0 || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
		return -EIO;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &saved) < 0)
		return -EIO;
	return (long)regs.rax;
}
#else
static long inject(pid_t pid, long nr, long a0, long a1, long a2)
{
	(void)pid, (void)nr, (void)a0, (void)a1, (void)a2;
	return -ENOSYS;
}
#endif

/* A socket made by pid, as an fd of ours; -errno when it cannot be made. */
static int steal_socket(pid_t pid, int pidfd, int family, int type)
{
	long theirs = inject(pid, SYS_socket, family, type, 0);
	int ours;

	if (theirs < 0)
		return (int)theirs;
	ours = (int)syscall(SYS_pidfd_getfd, pidfd, (int)theirs, 0);
	if (ours < 0)
		ours = -errno;
	inject(pid, SYS_close, theirs, 0, 0);
	return ours;
}

/* The first congestion control this container may set that is not reno
 * (unprivileged processes get tcp_allowed_congestion_control), or "". */
static void other_cc(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_allowed_congestion_control",
			"re");
	char name[CC_MAX];

	buf[0] = '\0';
	while (f && fscanf(f, "%15s", name) == 1)
		if (strcmp(name, "reno")) {
			snprintf(buf, len, "%s", name);
			break;
		}
	if (f)
		fclose(f);
}

static void read_cc(int fd, char *buf, socklen_t len)
{
	buf[0] = '\0';
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, buf, &len) < 0)
		snprintf(buf, len, "%s", errname(errno));
	buf[len - 1] = '\0';
}

/* What a socket holds after this container asks for a big buffer and cc. */
static void try_options(int fd, const char *cc, int *rcvbuf, char *got,
			socklen_t len)
{
	try_set_int(fd, SOL_SOCKET, SO_RCVBUF, BIG_RCVBUF);
	*rcvbuf = read_int(fd, SOL_SOCKET, SO_RCVBUF);
	if (cc[0])
		try_set(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (int)strlen(cc));
	read_cc(fd, got, len);
}

static void check_own(const char *cc)
{
	int fd = new_socket(AF_INET, SOCK_STREAM, 0), six, rcvbuf;
	char got[CC_MAX];

	if (fd < 0) {
		tap_ok(false, "own socket(AF_INET): opens");
		return;
	}
	try_options(fd, cc, &rcvbuf, got, sizeof(got));
	tap_ok(rcvbuf <= CLAMPED_MAX,
	       "control: own socket's SO_RCVBUF %d reads back %d (clamped)",
	       BIG_RCVBUF, rcvbuf);
	if (cc[0])
		tap_ok(!strcmp(got, "reno"),
		       "control: own socket's TCP_CONGESTION %s reads back %s (forced reno)",
		       cc, got);
	close(fd);
	six = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	tap_ok(six < 0 && errno == EPERM,
	       "control: own socket(AF_INET6): %s (socket.deny)",
	       six < 0 ? errname(errno) : "ok");
	if (six >= 0)
		close(six);
}

/* What SO_RCVBUF of BIG_RCVBUF reads back with no policy: twice the
 * request, capped by net.core.rmem_max (sock_setsockopt). -1 when that
 * cannot be read. */
static int unpoliced_rcvbuf(void)
{
	FILE *f = fopen("/proc/sys/net/core/rmem_max", "re");
	int max = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &max) != 1)
		max = -1;
	fclose(f);
	if (max < 0)
		return -1;
	return 2 * (max < BIG_RCVBUF ? max : BIG_RCVBUF);
}

/* want_rcvbuf: what SO_RCVBUF must read back on the sandbox's socket;
 * what: why. */
static void check_escape(pid_t pid, int pidfd, const char *cc, int want_rcvbuf,
			 const char *what)
{
	int fd = steal_socket(pid, pidfd, AF_INET, SOCK_STREAM);
	int six = steal_socket(pid, pidfd, AF_INET6, SOCK_STREAM);
	char got[CC_MAX];
	int rcvbuf = 0;

	tap_ok(fd >= 0,
	       "socket(AF_INET) made in the sandbox, taken with pidfd_getfd: %s",
	       fd >= 0 ? "ok" : errname(-fd));
	tap_ok(six >= 0,
	       "socket(AF_INET6) made in the sandbox: %s (the container's socket.deny does not apply)",
	       six >= 0 ? "ok" : errname(-six));
	if (fd < 0)
		return;
	try_options(fd, cc, &rcvbuf, got, sizeof(got));
	tap_ok(rcvbuf == want_rcvbuf,
	       "the container sets SO_RCVBUF %d on it: reads back %d, want %d (%s)",
	       BIG_RCVBUF, rcvbuf, want_rcvbuf, what);
	if (cc[0])
		tap_ok(!strcmp(got, cc),
		       "the container sets TCP_CONGESTION %s on it: reads back %s (its forced reno does not apply)",
		       cc, got);
	close(fd);
	if (six >= 0)
		close(six);
}

static void check_denied(pid_t pid, int pidfd)
{
	int fd = steal_socket(pid, pidfd, AF_INET, SOCK_STREAM);
	int six = steal_socket(pid, pidfd, AF_INET6, SOCK_STREAM);

	tap_ok(fd == -EPERM,
	       "socket(AF_INET) in the sandbox: %s (sandbox_policy)",
	       fd >= 0 ? "ok" : errname(-fd));
	tap_ok(six == -EPERM, "socket(AF_INET6) in the sandbox: %s",
	       six >= 0 ? "ok" : errname(-six));
	if (fd >= 0)
		close(fd);
	if (six >= 0)
		close(six);
}

/* The process's state letter (/proc/PID/stat) and TracerPid. */
static int proc_state(pid_t pid, char *state, int *tracer)
{
	char path[64], line[256];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		n += sscanf(line, "State: %c", state) == 1;
		n += sscanf(line, "TracerPid: %d", tracer) == 1;
	}
	fclose(f);
	return n == 2 ? 0 : -EBADMSG;
}

/* Seized, stopped at an interrupt inside its wait. */
static bool seize(pid_t pid)
{
	int status;

	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) < 0) {
		tap_ok(false, "PTRACE_SEIZE of the pause process %d: %s", pid,
		       errname(errno));
		return false;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) < 0 ||
	    waitpid(pid, &status, __WALL) < 0 || !WIFSTOPPED(status)) {
		tap_ok(false, "the pause process stops: %s", errname(errno));
		return false;
	}
	tap_ok(true, "uid %d without capabilities traces the pause process %d",
	       (int)getuid(), pid);
	return true;
}

int main(int argc, char **argv)
{
	char cc[CC_MAX], before = '?', after = '?';
	int pidfd, clamp = 0, tracer = -1;
	pid_t pid;

	if (argc != 3 ||
	    (strcmp(argv[2], "escapes") && strcmp(argv[2], "EPERM") &&
	     strncmp(argv[2], "clamp:", 6))) {
		fprintf(stderr,
			"usage: sandbox_ptrace PID escapes|EPERM|clamp:N\n");
		return 2;
	}
	pid = atoi(argv[1]);
	if (!strncmp(argv[2], "clamp:", 6))
		clamp = atoi(argv[2] + 6);
	other_cc(cc, sizeof(cc));
	if (!cc[0])
		tap_diag(
			"no congestion control but reno may be set here: that check is skipped");
	check_own(cc);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		tap_ok(false, "pidfd_open(%d): %s", pid, errname(errno));
		return tap_done();
	}
	if (proc_state(pid, &before, &tracer))
		tap_diag("no state of the pause process %d: %s", pid,
			 errname(errno));
	if (seize(pid)) {
		if (!strcmp(argv[2], "escapes"))
			check_escape(pid, pidfd, cc, unpoliced_rcvbuf(),
				     "no policy applies");
		else if (clamp > 0)
			check_escape(
				pid, pidfd, cc, 2 * clamp,
				"the sandbox's clamp, not the container's");
		else
			check_denied(pid, pidfd);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	}
	close(pidfd);
	/* PTRACE_DETACH resumes it; it goes back to its wait. */
	for (int i = 0; i < 100; i++) {
		if (proc_state(pid, &after, &tracer) == 0 && after == before &&
		    tracer == 0)
			break;
		usleep(10000);
	}
	tap_ok(before == 'S' && after == before && tracer == 0,
	       "the pause process is left as it was: state %c before, %c after, traced by %d",
	       before, after, tracer);
	return tap_done();
}
