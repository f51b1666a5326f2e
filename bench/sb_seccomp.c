// SPDX-License-Identifier: GPL-2.0-only
/*
 * The peer: a classic-BPF seccomp filter that refuses
 * setsockopt(SOL_SOCKET, SO_MARK) with EPERM and allows everything else,
 * which is as much of our policy as seccomp can express (it sees the
 * syscall's arguments, not the option's value, so it can deny but cannot
 * clamp or force). Written out by hand, as libseccomp would generate it.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "sockbench.h"

#if defined(__x86_64__)
#define SB_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SB_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "sockbench: add this architecture's AUDIT_ARCH_*"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SB_ARG_LO(n) (offsetof(struct seccomp_data, args[n]))
#else
#define SB_ARG_LO(n) (offsetof(struct seccomp_data, args[n]) + 4)
#endif

int sb_seccomp_deny_so_mark(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SB_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setsockopt, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SB_ARG_LO(1)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOL_SOCKET, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SB_ARG_LO(2)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SO_MARK, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		sb_err("cannot install the seccomp filter: %s",
		       strerror(errno));
		return -errno;
	}
	return 0;
}
