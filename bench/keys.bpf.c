// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reads kernel text, for the static-key check of sockbench keys. Every
 * cgroup BPF attach type has a host-wide static key
 * (cgroup_bpf_enabled_key[type]); while it is off, the kernel function
 * that would run the type's programs holds a NOP where the key's branch
 * is, and attaching the first program of that type anywhere patches it
 * into a jump. This host has no /proc/kcore, no data symbols in
 * /proc/kallsyms and no fentry (lockdown), so user space reads the
 * function's bytes through this program (BPF_PROG_TEST_RUN) and compares
 * them with the bytes while a program of that type is attached.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define SB_TEXT_MAX 8192

__u64 addr;
__u32 len;
__s32 err;
__u8 text[SB_TEXT_MAX];

SEC("syscall")
int sb_read_text(void *ctx)
{
	__u32 n = len;

	if (n > SB_TEXT_MAX)
		n = SB_TEXT_MAX;
	err = bpf_probe_read_kernel(text, n, (void *)addr);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
