// SPDX-License-Identifier: GPL-2.0-only
/*
 * faultshim.so: an LD_PRELOAD shim that injects faults into the hook's
 * bpf() calls. The hook links libbpf statically but libc dynamically, and
 * libbpf enters the kernel through libc's syscall(__NR_bpf, ...), so
 * interposing syscall() sees every bpf() command the hook makes.
 *
 *   FAULTSHIM=CMD:WHAT:ACTION
 *     CMD     load (BPF_PROG_LOAD) or attach (BPF_PROG_ATTACH)
 *     WHAT    any, sock_create, setsockopt or getsockopt: which attach
 *             type (attach) or expected attach type (load) to hit
 *     ACTION  rmcg    (attach only, once) before the real call, move every
 *                     process out of the target cgroup into its parent
 *                     and remove the cgroup
 *             ENAME   fail every matching call with that errno (EPERM,
 *                     EACCES, ENOENT, ENOSPC, EINVAL, ENOMEM) without
 *                     entering the kernel
 *   FAULTSHIM_LOG=FILE  one line per fault injected is appended there.
 *
 * On x86_64 the shim enters the kernel itself rather than through libc's
 * syscall(): valgrind's suppressions for libbpf (tests/san/valgrind.supp)
 * name the frames syscall <- sys_bpf_*, and so they still match.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SPEC_MAX 64

typedef long (*syscall_fn)(long, ...);

struct fault {
	int cmd;
	int type; /* attach type, or -1 for any */
	int err; /* errno to return, or 0 for rmcg */
	int fired;
};

static const struct {
	const char *name;
	int err;
} errnos[] = {
	{ "EPERM", EPERM },   { "EACCES", EACCES }, { "ENOENT", ENOENT },
	{ "ENOSPC", ENOSPC }, { "EINVAL", EINVAL }, { "ENOMEM", ENOMEM },
};

static void note(const char *fmt, ...)
{
	const char *path = getenv("FAULTSHIM_LOG");
	char line[PATH_MAX + 128];
	va_list ap;
	int fd, n;

	if (!path)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, line, n) != n)
		n = -1;
	close(fd);
}

static int parse_type(const char *s)
{
	if (!strcmp(s, "any"))
		return -1;
	if (!strcmp(s, "sock_create"))
		return BPF_CGROUP_INET_SOCK_CREATE;
	if (!strcmp(s, "setsockopt"))
		return BPF_CGROUP_SETSOCKOPT;
	if (!strcmp(s, "getsockopt"))
		return BPF_CGROUP_GETSOCKOPT;
	return -2;
}

static int parse_err(const char *s)
{
	size_t i;

	if (!strcmp(s, "rmcg"))
		return 0;
	for (i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (!strcmp(s, errnos[i].name))
			return errnos[i].err;
	return -1;
}

/* Returns the fault FAULTSHIM describes, or NULL if none or malformed. */
static struct fault *fault_spec(void)
{
	static struct fault f;
	static int parsed;
	char spec[SPEC_MAX], *what, *action;
	const char *env;

	if (parsed)
		return parsed > 0 ? &f : NULL;
	parsed = -1;
	env = getenv("FAULTSHIM");
	if (!env || strlen(env) >= sizeof(spec))
		return NULL;
	strcpy(spec, env);
	what = strchr(spec, ':');
	action = what ? strchr(what + 1, ':') : NULL;
	if (!action)
		return NULL;
	*what++ = '\0';
	*action++ = '\0';
	if (!strcmp(spec, "load"))
		f.cmd = BPF_PROG_LOAD;
	else if (!strcmp(spec, "attach"))
		f.cmd = BPF_PROG_ATTACH;
	else
		return NULL;
	f.type = parse_type(what);
	f.err = parse_err(action);
	if (f.type == -2 || f.err < 0 ||
	    (f.err == 0 && f.cmd != BPF_PROG_ATTACH))
		return NULL;
	parsed = 1;
	return &f;
}

/* Moves every process of CG into its parent, then removes CG. */
static void remove_cgroup(const char *cg)
{
	char procs[PATH_MAX + 16], parent[PATH_MAX + 16], pid[32];
	FILE *in;
	int moved = 0, fd;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	snprintf(parent, sizeof(parent), "%s", cg);
	*strrchr(parent, '/') = '\0';
	strcat(parent, "/cgroup.procs");
	in = fopen(procs, "re");
	while (in && fgets(pid, sizeof(pid), in)) {
		fd = open(parent, O_WRONLY | O_CLOEXEC);
		if (fd >= 0 && write(fd, pid, strlen(pid)) > 0)
			moved++;
		if (fd >= 0)
			close(fd);
	}
	if (in)
		fclose(in);
	if (rmdir(cg) == 0)
		note("attach: removed cgroup %s (moved %d process(es) out)", cg,
		     moved);
	else
		note("attach: cannot remove cgroup %s: %s", cg,
		     strerror(errno));
}

/* Returns 0 to go on with the real call, or -errno to fail it. */
static int inject(int cmd, const union bpf_attr *attr)
{
	struct fault *f = fault_spec();
	char link[64], cg[PATH_MAX];
	int type;
	ssize_t n;

	if (!f || f->cmd != cmd || !attr)
		return 0;
	/* libbpf's feature probes load other program types, and may leave
	 * expected_attach_type unset: look at it for ours only. */
	if (cmd == BPF_PROG_LOAD &&
	    attr->prog_type != BPF_PROG_TYPE_CGROUP_SOCK &&
	    attr->prog_type != BPF_PROG_TYPE_CGROUP_SOCKOPT)
		type = -3;
	else if (cmd == BPF_PROG_LOAD)
		type = (int)attr->expected_attach_type;
	else
		type = (int)attr->attach_type;
	if (type == -3 && f->type != -1)
		return 0;
	if (f->type != -1 && f->type != type)
		return 0;
	if (f->err) {
		note("%s (attach type %d): failing with errno %d",
		     cmd == BPF_PROG_LOAD ? "load" : "attach", type, f->err);
		return -f->err;
	}
	if (f->fired++)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%u", attr->target_fd);
	n = readlink(link, cg, sizeof(cg) - 1);
	if (n <= 0) {
		note("attach: cannot resolve target fd %u", attr->target_fd);
		return 0;
	}
	cg[n] = '\0';
	remove_cgroup(cg);
	return 0;
}

#ifdef __x86_64__
static inline __attribute__((always_inline)) long raw_syscall(long nr,
							      const long *a)
{
	register long r10 asm("r10") = a[3];
	register long r8 asm("r8") = a[4];
	register long r9 asm("r9") = a[5];
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"(nr), "D"(a[0]), "S"(a[1]), "d"(a[2]), "r"(r10),
		       "r"(r8), "r"(r9)
		     : "rcx", "r11", "memory");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
#else
static inline __attribute__((always_inline)) long raw_syscall(long nr,
							      const long *a)
{
	static syscall_fn real;

	if (!real)
		real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
#endif

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int i, r;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_bpf) {
		r = inject((int)a[0], (const union bpf_attr *)a[1]);
		if (r) {
			errno = -r;
			return -1;
		}
	}
	return raw_syscall(nr, a);
}
