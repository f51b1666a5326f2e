// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's floor for each attach point our hook uses: programs that
 * allow everything and touch nothing. sockbench attach-empty attaches them
 * with BPF_F_ALLOW_MULTI, as the hook attaches its own.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("cgroup/sock_create")
int sb_empty_sock(struct bpf_sock *ctx)
{
	return 1;
}

SEC("cgroup/setsockopt")
int sb_empty_set(struct bpf_sockopt *ctx)
{
	return 1;
}

SEC("cgroup/getsockopt")
int sb_empty_get(struct bpf_sockopt *ctx)
{
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
