// SPDX-License-Identifier: GPL-2.0-only
/*
 * The caveats of the security model (docs/security.md), each asked of one
 * container: what it has attached, how its cgroup came to be, and what
 * else the kernel runs for it. The texts name the mitigation.
 */
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>

#include "observe/caveats.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

static const char *const ids[CAVEATS_MAX] = {
	[CAVEATS_STALE_RECORD] = "stale_record",
	[CAVEATS_HOOK_MADE_CGROUP] = "hook_made_cgroup",
	[CAVEATS_COMPAT_SYSCALLS] = "compat_syscalls",
	[CAVEATS_PACKET_SOCKETS] = "packet_sockets",
	[CAVEATS_MPTCP_SUBFLOWS] = "mptcp_subflows",
	[CAVEATS_BYPASS_FELL_BACK] = "bypass_fell_back",
	[CAVEATS_OTHER_PROGRAMS] = "other_programs",
	[CAVEATS_SOCK_DIAG] = "sock_diag",
	[CAVEATS_KERNEL_SOCKETS] = "kernel_sockets",
	[CAVEATS_ROUTE_METRICS] = "route_metrics",
};

const char *caveats_name(enum caveats_id id)
{
	return ids[id];
}

static void add(struct caveats *out, enum caveats_id id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(struct caveats *out, enum caveats_id id, const char *fmt, ...)
{
	struct caveat *c = &out->c[out->nr++];
	va_list ap;

	c->id = ids[id];
	va_start(ap, fmt);
	vsnprintf(c->text, sizeof(c->text), fmt, ap);
	va_end(ap);
}

static bool has_kind(const struct sh_record *rec, enum sh_prog_kind kind)
{
	for (int i = 0; i < rec->progs.nr; i++)
		if (rec->progs.prog[i].type == kind_get(kind)->type)
			return true;
	return false;
}

static bool mark_or_priority(const struct sh_policy *p)
{
	return p && (p->has_mark || p->has_priority);
}

/* A stamped mark or priority that MPTCP subflows do not carry. */
static bool mptcp_open(const struct sh_policy *p)
{
	if (!p || (!p->has_mark && !p->has_priority))
		return false;
	for (__u32 i = 0; i < p->nr_deny; i++)
		if (p->deny[i].protocol == IPPROTO_MPTCP ||
		    (p->deny[i].protocol == SH_ANY &&
		     p->deny[i].family == SH_ANY && p->deny[i].type == SH_ANY))
			return false;
	return true;
}

/* A rule on what a route's metrics also set: the congestion control
 * (RTAX_CC_ALGO) and the TTL or hop limit (RTAX_HOPLIMIT). */
static bool route_governed(const struct sh_policy *p)
{
	static const struct sh_opt_key keys[] = {
		{ IPPROTO_TCP, 13 }, /* TCP_CONGESTION */
		{ IPPROTO_IP, 2 }, /* IP_TTL */
		{ IPPROTO_IPV6, 16 }, /* IPV6_UNICAST_HOPS */
	};

	if (!p)
		return false;
	for (size_t i = 0; i < p->nr_set; i++)
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (p->set_rules[i].key.level == keys[k].level &&
			    p->set_rules[i].key.optname == keys[k].optname &&
			    p->set_rules[i].rule.action != SH_ACTION_ALLOW)
				return true;
	return false;
}

static void kernel_caveats(const struct caveats_input *in, struct caveats *out)
{
	const struct sh_record *rec = in->rec;

	if (has_kind(rec, SH_PROG_SET) || has_kind(rec, SH_PROG_GET))
		add(out, CAVEATS_COMPAT_SYSCALLS,
		    "32-bit compat syscalls (a -m32 binary, int $0x80, io_uring of a 32-bit process) skip the setsockopt/getsockopt programs: use a seccomp profile that lists only the native ABI (examples/seccomp-no-compat.json)");
	if (has_kind(rec, SH_PROG_SOCK))
		add(out, CAVEATS_PACKET_SOCKETS,
		    "cgroup/sock_create sees only AF_INET/AF_INET6: AF_PACKET sockets (also through SOCK_PACKET, io_uring and the i386 socket/socketcall syscalls) get no deny rule, mark or priority: drop CAP_NET_RAW or use examples/seccomp-no-packet.json (or seccomp-socket-allowlist.json)");
	if (has_kind(rec, SH_PROG_SOCK) && in->families && in->families[0])
		add(out, CAVEATS_KERNEL_SOCKETS,
		    "this kernel offers %s: their TCP/UDP goes through sockets the kernel makes itself, with no deny rule, mark or priority: allow only the families the workload needs with seccomp (examples/seccomp-socket-allowlist.json)",
		    in->families);
	if (has_kind(rec, SH_PROG_GET) || mark_or_priority(in->policy))
		add(out, CAVEATS_SOCK_DIAG,
		    "sock_diag netlink (ss -tie) shows each socket's real congestion control, TOS, priority and, with CAP_NET_ADMIN, mark, whatever getsockopt rules return: block NETLINK_SOCK_DIAG with seccomp (examples/seccomp-socket-allowlist.json)");
	if (mptcp_open(in->policy))
		add(out, CAVEATS_MPTCP_SUBFLOWS,
		    "the policy stamps a mark or priority but does not deny IPPROTO_MPTCP: MPTCP subflows may go out without the stamp");
	if (has_kind(rec, SH_PROG_SET) && route_governed(in->policy))
		add(out, CAVEATS_ROUTE_METRICS,
		    "a route's metrics (congctl, hoplimit) give sockets that never call setsockopt their congestion control and TTL, and a locked congctl replaces a forced TCP_CONGESTION at connect(): a container with CAP_NET_ADMIN in its network namespace can set them; drop CAP_NET_ADMIN");
}

void caveats_collect(const struct caveats_input *in, struct caveats *out)
{
	const struct sh_record *rec = in->rec;

	out->nr = 0;
	if (!in->live)
		add(out, CAVEATS_STALE_RECORD,
		    "the cgroup %s is gone: the record is stale (gc releases it)",
		    rec->cg.rel);
	if (rec->cg.created)
		add(out, CAVEATS_HOOK_MADE_CGROUP,
		    "NOT policed: the hook made this cgroup, so processes started with runc/crun exec stay outside it, in %s or the runtime's cgroup: run the runtime with a cgroup manager, or set on_shared_cgroup \"refuse\"",
		    rec->cg.parent_rel);
	kernel_caveats(in, out);
	if (rec->bypass && !rec->progs.bypass_active)
		add(out, CAVEATS_BYPASS_FELL_BACK,
		    "bypass-prot-mem was asked for (by %s) but this kernel lacks SK_BPF_BYPASS_PROT_MEM: sockets are charged to tcp_mem",
		    rec->bypass_source);
	if (in->other_programs && in->other_programs[0])
		add(out, CAVEATS_OTHER_PROGRAMS,
		    "other programs run for this cgroup too (%s): on an ancestor with BPF_F_ALLOW_MULTI they run after ours and can undo its verdicts",
		    in->other_programs);
}
