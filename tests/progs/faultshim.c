// SPDX-License-Identifier: GPL-2.0-only
/*
 * faultshim.so: an LD_PRELOAD shim that injects faults into the hook's
 * bpf() calls. The hook links libbpf statically but libc dynamically, and
 * libbpf enters the kernel through libc's syscall(__NR_bpf, ...), so
 * interposing syscall() sees every bpf() command the hook makes.
 *
 *   FAULTSHIM=CMD:WHAT:ACTION
 *     CMD     load (BPF_PROG_LOAD), attach (BPF_PROG_ATTACH), or open
 *             (open/open64/openat of the directory FAULTSHIM_CG)
 *     WHAT    any, sock_create, setsockopt or getsockopt: which attach
 *             type (attach) or expected attach type (load) to hit; any
 *             for open
 *     ACTION  rmcg    (attach only, once) before the real call, move every
 *                     process out of the target cgroup into its parent
 *                     and remove the cgroup
 *             mvpid   (attach only, once) before the real call, move every
 *                     process out of the target cgroup into its parent
 *             swap    (open only, once) before the real call, replace the
 *                     cgroup FAULTSHIM_CG with a new one of the same name:
 *                     its processes, and FAULTSHIM_PID if set, move into
 *                     the new one, which also gets the programs attached
 *                     to the cgroup FAULTSHIM_COPY_FROM if set
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SPEC_MAX 64
#define CMD_OPEN -100
#define MAX_MOVED 64

typedef long (*syscall_fn)(long, ...);
typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

/* The next definition of libc function NAME (libc's own), looked up once. */
#define REAL(type, name)                                      \
	({                                                    \
		static type real_;                            \
		if (!real_)                                   \
			real_ = (type)dlsym(RTLD_NEXT, name); \
		real_;                                        \
	})

enum action { ACT_FAIL, ACT_RMCG, ACT_MVPID, ACT_SWAP };

struct fault {
	int cmd;
	int type; /* attach type, or -1 for any */
	enum action act;
	int err; /* errno to return, for ACT_FAIL */
	int fired;
};

static long raw_bpf(int cmd, union bpf_attr *attr);

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

static int parse_action(const char *s, struct fault *f)
{
	static const struct {
		const char *name;
		enum action act;
	} acts[] = { { "rmcg", ACT_RMCG },
		     { "mvpid", ACT_MVPID },
		     { "swap", ACT_SWAP } };
	size_t i;

	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		if (!strcmp(s, acts[i].name)) {
			f->act = acts[i].act;
			return 0;
		}
	}
	f->act = ACT_FAIL;
	for (i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++) {
		if (!strcmp(s, errnos[i].name)) {
			f->err = errnos[i].err;
			return 0;
		}
	}
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
	else if (!strcmp(spec, "open"))
		f.cmd = CMD_OPEN;
	else
		return NULL;
	f.type = parse_type(what);
	if (f.type == -2 || parse_action(action, &f) ||
	    ((f.act == ACT_RMCG || f.act == ACT_MVPID) &&
	     f.cmd != BPF_PROG_ATTACH) ||
	    ((f.act == ACT_SWAP) != (f.cmd == CMD_OPEN)))
		return NULL;
	parsed = 1;
	return &f;
}

/* The pids in CG (at most MAX_MOVED); returns how many. */
static int read_pids(const char *cg, long *pids)
{
	char procs[PATH_MAX + 16], line[32];
	FILE *in;
	int n = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	in = fopen(procs, "re");
	while (in && n < MAX_MOVED && fgets(line, sizeof(line), in))
		pids[n++] = strtol(line, NULL, 10);
	if (in)
		fclose(in);
	return n;
}

/* Writes each pid into CG's cgroup.procs; returns how many moved. */
static int move_pids(const char *cg, const long *pids, int n)
{
	char procs[PATH_MAX + 16], pid[32];
	int moved = 0, fd, len;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	for (int i = 0; i < n; i++) {
		len = snprintf(pid, sizeof(pid), "%ld", pids[i]);
		fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd >= 0 && write(fd, pid, len) == len)
			moved++;
		if (fd >= 0)
			close(fd);
	}
	return moved;
}

static void parent_of(const char *cg, char *parent, size_t len)
{
	snprintf(parent, len, "%s", cg);
	*strrchr(parent, '/') = '\0';
}

/* Moves every process of CG into its parent; with rm, removes CG. */
static void empty_cgroup(const char *cg, int rm)
{
	char parent[PATH_MAX];
	long pids[MAX_MOVED];
	int n = read_pids(cg, pids), moved;

	parent_of(cg, parent, sizeof(parent));
	moved = move_pids(parent, pids, n);
	if (!rm)
		note("attach: moved %d process(es) out of cgroup %s", moved,
		     cg);
	else if (rmdir(cg) == 0)
		note("attach: removed cgroup %s (moved %d process(es) out)", cg,
		     moved);
	else
		note("attach: cannot remove cgroup %s: %s", cg,
		     strerror(errno));
}

/* Attaches what FROM has of our three types to the cgroup TO. */
static int copy_progs(const char *from, const char *to)
{
	static const int types[] = { BPF_CGROUP_INET_SOCK_CREATE,
				     BPF_CGROUP_SETSOCKOPT,
				     BPF_CGROUP_GETSOCKOPT };
	int src = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int dst = open(to, O_RDONLY | O_DIRECTORY | O_CLOEXEC), copied = 0;

	for (size_t t = 0; src >= 0 && dst >= 0 && t < 3; t++) {
		__u32 ids[16];
		union bpf_attr q = { .query = { .target_fd = src,
						.attach_type = types[t],
						.prog_ids = (unsigned long)ids,
						.prog_cnt = 16 } };

		if (raw_bpf(BPF_PROG_QUERY, &q))
			continue;
		for (__u32 i = 0; i < q.query.prog_cnt; i++) {
			union bpf_attr g = { .prog_id = ids[i] };
			int fd = (int)raw_bpf(BPF_PROG_GET_FD_BY_ID, &g);
			union bpf_attr a = { .target_fd = dst,
					     .attach_bpf_fd = fd,
					     .attach_type = types[t],
					     .attach_flags =
						     BPF_F_ALLOW_MULTI };

			if (fd >= 0 && raw_bpf(BPF_PROG_ATTACH, &a) == 0)
				copied++;
			if (fd >= 0)
				close(fd);
		}
	}
	if (src >= 0)
		close(src);
	if (dst >= 0)
		close(dst);
	return copied;
}

/* A new cgroup under the old one's name, with its processes. */
static void swap_cgroup(const char *cg)
{
	char parent[PATH_MAX];
	const char *extra = getenv("FAULTSHIM_PID");
	const char *from = getenv("FAULTSHIM_COPY_FROM");
	long pids[MAX_MOVED + 1];
	int n = read_pids(cg, pids), moved, copied = 0;

	if (extra)
		pids[n++] = strtol(extra, NULL, 10);
	parent_of(cg, parent, sizeof(parent));
	move_pids(parent, pids, n);
	if (rmdir(cg) || mkdir(cg, 0755)) {
		note("open: cannot replace cgroup %s: %s", cg, strerror(errno));
		return;
	}
	moved = move_pids(cg, pids, n);
	if (from)
		copied = copy_progs(from, cg);
	note("open: replaced cgroup %s (moved %d process(es) in, attached %d program(s))",
	     cg, moved, copied);
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
	if (f->act == ACT_FAIL) {
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
	empty_cgroup(cg, f->act == ACT_RMCG);
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
	return REAL(syscall_fn, "syscall")(nr, a[0], a[1], a[2], a[3], a[4],
					   a[5]);
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

static long raw_bpf(int cmd, union bpf_attr *attr)
{
	long a[6] = { cmd, (long)attr, sizeof(*attr), 0, 0, 0 };

	return raw_syscall(__NR_bpf, a);
}

/* swap: once, before the first open of FAULTSHIM_CG. */
static void before_open(const char *path)
{
	struct fault *f = fault_spec();
	const char *cg = getenv("FAULTSHIM_CG");

	if (!f || f->cmd != CMD_OPEN || f->fired || !cg || !path ||
	    strcmp(path, cg))
		return;
	f->fired = 1;
	swap_cgroup(cg);
}

/*
 * The mode argument of an open-like call whose flags parameter is FLAGS:
 * there is one only when the call may create a file.
 */
#define OPEN_MODE(flags)                             \
	({                                           \
		mode_t mode_ = 0;                    \
		va_list ap_;                         \
		va_start(ap_, flags);                \
		if ((flags) & (O_CREAT | O_TMPFILE)) \
			mode_ = va_arg(ap_, mode_t); \
		va_end(ap_);                         \
		mode_;                               \
	})

int open(const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags);

	before_open(path);
	return REAL(open_fn, "open")(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags);

	before_open(path);
	return REAL(open_fn, "open64")(path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags);

	before_open(path);
	return REAL(openat_fn, "openat")(dir, path, flags, mode);
}
