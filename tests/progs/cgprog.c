// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgprog: another tool's cgroup/setsockopt program, for the tests that
 * check what the hook does about programs already on the container's path.
 *
 *   cgprog attach CGROUP-DIR multi|override|exclusive NAME [PROGRAM]
 *       loads PROGRAM (deny-keepalive, the default, or undo-deny) named
 *       NAME, attaches it to the cgroup with BPF_F_ALLOW_MULTI,
 *       BPF_F_ALLOW_OVERRIDE or no flag, and prints "id=N". The attachment
 *       lives as long as the cgroup (or until detached); the program goes
 *       with its last attachment.
 *   cgprog detach CGROUP-DIR ID
 *   cgprog pin PATH KIND NAME
 *       loads a program that allows everything (return 1) named NAME and
 *       pins it at PATH (a BPF filesystem), as a stray or planted pin in
 *       the hook's pin directory would be. KIND: sock_create
 *       (CGROUP_SOCK, attaches as inet_sock_create), setsockopt or
 *       getsockopt (CGROUP_SOCKOPT, attaching as that), skb
 *       (CGROUP_SKB, ingress).
 *
 * The programs are a few instructions, written out here rather than built
 * from a .bpf.c, so the tests need neither clang nor libbpf. In C:
 *
 *   int deny_keepalive(struct bpf_sockopt *ctx)
 *   {
 *           return !(ctx->level == SOL_SOCKET &&
 *                    ctx->optname == SO_KEEPALIVE);
 *   }
 *
 *   int undo_deny(struct bpf_sockopt *ctx)   // what a later program can do
 *   {
 *           bpf_set_retval(0);
 *           return 1;
 *   }
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define INSN(c, d, s, o, i)                 \
	((struct bpf_insn){ .code = (c),    \
			    .dst_reg = (d), \
			    .src_reg = (s), \
			    .off = (o),     \
			    .imm = (i) })
#define LDX_W(d, s, off) INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, off, 0)
#define JNE_IMM(d, imm, off) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, off, imm)
#define MOV_IMM(d, imm) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, imm)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

#define CALL(fn) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, fn)

static const struct bpf_insn deny_keepalive[] = {
	LDX_W(2, 1, offsetof(struct bpf_sockopt, level)),
	JNE_IMM(2, SOL_SOCKET, 4),
	LDX_W(2, 1, offsetof(struct bpf_sockopt, optname)),
	JNE_IMM(2, SO_KEEPALIVE, 2),
	MOV_IMM(0, 0),
	EXIT(),
	MOV_IMM(0, 1),
	EXIT(),
};

static const struct bpf_insn undo_deny[] = {
	MOV_IMM(1, 0),
	CALL(BPF_FUNC_set_retval),
	MOV_IMM(0, 1),
	EXIT(),
};

static int load(const char *name, const char *program)
{
	const struct bpf_insn *insns = deny_keepalive;
	size_t nr = sizeof(deny_keepalive) / sizeof(deny_keepalive[0]);
	union bpf_attr attr;

	if (!strcmp(program, "undo-deny")) {
		insns = undo_deny;
		nr = sizeof(undo_deny) / sizeof(undo_deny[0]);
	} else if (strcmp(program, "deny-keepalive")) {
		errno = EINVAL;
		return -1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_SOCKOPT;
	attr.expected_attach_type = BPF_CGROUP_SETSOCKOPT;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = nr;
	attr.license = (unsigned long)"GPL";
	snprintf(attr.prog_name, sizeof(attr.prog_name), "%s", name);
	return (int)sys_bpf(BPF_PROG_LOAD, &attr);
}

static const struct bpf_insn allow_all[] = {
	MOV_IMM(0, 1),
	EXIT(),
};

static const struct {
	const char *kind;
	enum bpf_prog_type type;
	enum bpf_attach_type attach;
} pin_kinds[] = {
	{ "sock_create", BPF_PROG_TYPE_CGROUP_SOCK,
	  BPF_CGROUP_INET_SOCK_CREATE },
	{ "setsockopt", BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_SETSOCKOPT },
	{ "getsockopt", BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_GETSOCKOPT },
	{ "skb", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS },
};

static int cmd_pin(const char *path, const char *kind, const char *name)
{
	union bpf_attr attr;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(pin_kinds) / sizeof(pin_kinds[0]); i++)
		if (!strcmp(pin_kinds[i].kind, kind))
			break;
	if (i == sizeof(pin_kinds) / sizeof(pin_kinds[0])) {
		fprintf(stderr, "cgprog: unknown kind %s\n", kind);
		return 2;
	}
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = pin_kinds[i].type;
	attr.expected_attach_type = pin_kinds[i].attach;
	attr.insns = (unsigned long)allow_all;
	attr.insn_cnt = sizeof(allow_all) / sizeof(allow_all[0]);
	attr.license = (unsigned long)"GPL";
	snprintf(attr.prog_name, sizeof(attr.prog_name), "%s", name);
	fd = (int)sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		fprintf(stderr, "cgprog: load: %s\n", strerrorname_np(errno));
		return 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.pathname = (unsigned long)path;
	attr.bpf_fd = fd;
	if (sys_bpf(BPF_OBJ_PIN, &attr)) {
		fprintf(stderr, "cgprog: pin %s: %s\n", path,
			strerrorname_np(errno));
		return 1;
	}
	return 0;
}

static int prog_id(int fd)
{
	struct bpf_prog_info info;
	union bpf_attr attr;

	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (unsigned long)&info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr) ? -1 : (int)info.id;
}

static int attach_flags(const char *mode)
{
	if (!strcmp(mode, "multi"))
		return BPF_F_ALLOW_MULTI;
	if (!strcmp(mode, "override"))
		return BPF_F_ALLOW_OVERRIDE;
	if (!strcmp(mode, "exclusive"))
		return 0;
	return -1;
}

static int cmd_attach(int cg, const char *mode, const char *name,
		      const char *program)
{
	int flags = attach_flags(mode), fd = load(name, program);
	union bpf_attr attr;

	if (flags < 0 || fd < 0) {
		fprintf(stderr, "cgprog: %s\n",
			flags < 0 ? "bad mode" : strerror(errno));
		return 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = cg;
	attr.attach_bpf_fd = fd;
	attr.attach_type = BPF_CGROUP_SETSOCKOPT;
	attr.attach_flags = flags;
	if (sys_bpf(BPF_PROG_ATTACH, &attr)) {
		fprintf(stderr, "cgprog: attach: %s\n", strerrorname_np(errno));
		return 1;
	}
	printf("id=%d\n", prog_id(fd));
	return 0;
}

static int cmd_detach(int cg, const char *id_text)
{
	union bpf_attr attr;
	char *end;
	long id = strtol(id_text, &end, 10);
	int fd;

	if (*id_text == '\0' || *end != '\0' || id <= 0 || id > INT32_MAX) {
		fprintf(stderr, "cgprog: bad id\n");
		return 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.prog_id = id;
	fd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr);
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = cg;
	attr.attach_bpf_fd = fd;
	attr.attach_type = BPF_CGROUP_SETSOCKOPT;
	if (fd < 0 || sys_bpf(BPF_PROG_DETACH, &attr)) {
		fprintf(stderr, "cgprog: detach: %s\n", strerrorname_np(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int cg;

	if (argc == 5 && !strcmp(argv[1], "pin"))
		return cmd_pin(argv[2], argv[3], argv[4]);
	cg = argc > 2 ? open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if ((argc == 5 || argc == 6) && cg >= 0 && !strcmp(argv[1], "attach"))
		return cmd_attach(cg, argv[3], argv[4],
				  argc == 6 ? argv[5] : "deny-keepalive");
	if (argc == 4 && cg >= 0 && !strcmp(argv[1], "detach"))
		return cmd_detach(cg, argv[3]);
	fprintf(stderr,
		"usage: cgprog attach CGROUP multi|override|exclusive NAME [deny-keepalive|undo-deny]\n"
		"       cgprog detach CGROUP ID\n"
		"       cgprog pin PATH sock_create|setsockopt|getsockopt|skb NAME\n");
	return 2;
}
