// SPDX-License-Identifier: GPL-2.0-only
/*
 * Policies that are valid but hold less than they seem to, each found by a
 * test (tests/integration/73-limits.sh, 74-attacks.sh):
 *  - a stamped mark or priority does not reach MPTCP subflows unless the
 *    workload first sets an option on the MPTCP socket;
 *  - a stamped priority is overwritten by SO_PRIORITY 0-6 (no privilege
 *    needed) and by IP_TOS (the kernel derives sk_priority from it);
 *  - IPv4 and IPv6 keep the same thing in different options: a rule on
 *    one does not cover IPv6 sockets, unless AF_INET6 is denied;
 *  - a clamp on SO_RCVBUF or SO_SNDBUF governs setsockopt calls, not TCP
 *    autotuning (85-sysctls.sh).
 */
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include "config/lint.h"

void lint_add(struct lint_warnings *w, const char *fmt, ...)
{
	va_list ap;

	if (w->nr == SH_LINT_WARNINGS_MAX) {
		w->dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(w->text[w->nr++], sizeof(w->text[0]), fmt, ap);
	va_end(ap);
}

static bool denies_socket(const struct sh_policy *p, int family, int protocol)
{
	for (__u32 i = 0; i < p->nr_deny; i++) {
		const struct sh_sock_rule *r = &p->deny[i];

		if ((r->family == SH_ANY || r->family == family) &&
		    r->type == SH_ANY &&
		    (r->protocol == SH_ANY || r->protocol == protocol))
			return true;
	}
	return false;
}

static const struct sh_rule_entry *rule_for(const struct sh_policy *p,
					    int level, int optname)
{
	for (size_t i = 0; i < p->nr_set; i++)
		if (p->set_rules[i].key.level == level &&
		    p->set_rules[i].key.optname == optname)
			return &p->set_rules[i];
	return NULL;
}

/* Denied or forced, explicitly or by allow-list mode. */
static bool holds_option(const struct sh_policy *p, int level, int optname)
{
	const struct sh_rule_entry *e = rule_for(p, level, optname);

	if (!e)
		return p->default_deny;
	return e->rule.action == SH_ACTION_DENY ||
	       e->rule.action == SH_ACTION_FORCE_INT;
}

static void lint_stamps(const struct sh_policy *p, struct lint_warnings *w)
{
	if ((p->has_mark || p->has_priority) &&
	    !(denies_socket(p, AF_INET, IPPROTO_MPTCP) &&
	      denies_socket(p, AF_INET6, IPPROTO_MPTCP)))
		lint_add(
			w,
			"policies.%s.socket: its %s does not reach MPTCP subflows unless the workload first sets an option on the MPTCP socket; add {\"protocol\": \"IPPROTO_MPTCP\"} to socket.deny",
			p->name, p->has_mark ? "mark" : "priority");
	if (p->has_priority && (!holds_option(p, SOL_SOCKET, SO_PRIORITY) ||
				!holds_option(p, IPPROTO_IP, IP_TOS)))
		lint_add(
			w,
			"policies.%s.socket.priority: any process may overwrite it with setsockopt(SO_PRIORITY) 0-6 or setsockopt(IP_TOS); deny (or force) SOL_SOCKET SO_PRIORITY and SOL_IP IP_TOS",
			p->name);
}

/* The same state, kept apart for IPv4 and IPv6 sockets. */
#define TWIN(v4, v6)             \
	{                        \
		v4, v6, #v4, #v6 \
	}
static const struct {
	int v4, v6;
	const char *v4_name, *v6_name;
} twins[] = {
	TWIN(IP_TTL, IPV6_UNICAST_HOPS),
	TWIN(IP_TOS, IPV6_TCLASS),
	TWIN(IP_MULTICAST_TTL, IPV6_MULTICAST_HOPS),
	TWIN(IP_MULTICAST_LOOP, IPV6_MULTICAST_LOOP),
	TWIN(IP_MTU_DISCOVER, IPV6_MTU_DISCOVER),
	TWIN(IP_RECVERR, IPV6_RECVERR),
	TWIN(IP_FREEBIND, IPV6_FREEBIND),
	TWIN(IP_TRANSPARENT, IPV6_TRANSPARENT),
};

static void lint_twins(const struct sh_policy *p, struct lint_warnings *w)
{
	if (p->default_deny || denies_socket(p, AF_INET6, 0))
		return;
	for (size_t i = 0; i < sizeof(twins) / sizeof(twins[0]); i++) {
		if (!rule_for(p, IPPROTO_IP, twins[i].v4) ||
		    rule_for(p, IPPROTO_IPV6, twins[i].v6))
			continue;
		lint_add(
			w,
			"policies.%s.setsockopt: the rule on SOL_IP %s does not cover IPv6 sockets, which keep the same in SOL_IPV6 %s; add a rule for it, or deny AF_INET6",
			p->name, twins[i].v4_name, twins[i].v6_name);
	}
}

/* An audit policy a workload may name: a way out of the default policy
 * (taken where the operator said so), or a container refused. */
static void lint_audit_allowed(const struct sh_config *cfg,
			       struct lint_warnings *w)
{
	for (size_t i = 0; i < cfg->nr_allowed; i++) {
		const struct sh_policy *p =
			config_find_policy(cfg, cfg->allowed_policies[i]);

		if (!p || !p->audit)
			continue;
		if (cfg->allow_audit_mode || p->audit_by_annotation)
			lint_add(
				w,
				"policies.%s is in audit mode and in annotations.allow_policies, with %s true: any workload that names it runs with nothing applied",
				p->name,
				p->audit_by_annotation ?
					"its audit_by_annotation" :
					"annotations.allow_audit_mode");
		else
			lint_add(
				w,
				"policies.%s is in audit mode and in annotations.allow_policies: a container that names it is refused (audit_mode_not_allowed) unless policies.%s.audit_by_annotation or annotations.allow_audit_mode is true",
				p->name, p->name);
	}
}

/* Audit mode applies nothing: say so, and who can ask for it. */
static void lint_audit_mode(const struct sh_config *cfg,
			    struct lint_warnings *w)
{
	for (size_t i = 0; i < cfg->nr_policies; i++)
		if (cfg->policies[i].audit)
			lint_add(
				w,
				"policies.%s.mode is 'audit': its programs count what they would deny, clamp or force and apply none of it",
				cfg->policies[i].name);
	if (cfg->allow_audit_mode)
		lint_add(
			w,
			"annotations.allow_audit_mode is true: any workload can lift its policy with sockopt-hook.io/mode=audit");
	lint_audit_allowed(cfg, w);
}

/* A pod sandbox must make no socket: one it makes is policed by nothing
 * else, and any container sharing its pid namespace can have it make
 * one (prestart.h). */
static void lint_sandbox(const struct sh_config *cfg, struct lint_warnings *w)
{
	const struct sh_policy *p = cfg->sandbox_policy;

	if (!p)
		lint_add(
			w,
			"sandbox_policy is \"\": pod sandboxes are not policed, and a container that shares its pod's pid namespace and runs as the pause process's uid can make the pause process create sockets no policy applies to (ptrace, then pidfd_getfd()); leave sandbox_policy out for the built-in '%s'",
			SH_SANDBOX_BUILTIN);
	else if (p->audit)
		lint_add(
			w,
			"sandbox_policy '%s' is in audit mode: it applies nothing, so pod sandboxes are not policed",
			p->name);
	else if (!denies_socket(p, AF_INET, SH_ANY) ||
		 !denies_socket(p, AF_INET6, SH_ANY))
		lint_add(
			w,
			"sandbox_policy '%s' lets the pause container create AF_INET or AF_INET6 sockets, which a container sharing its pid namespace can take (ptrace, then pidfd_getfd()) with only this policy on them; the pause process makes none: deny both families",
			p->name);
}

/* SO_RCVBUF keeps twice what it is given; autotuning needs no call. */
static void lint_buffer(const struct sh_policy *p, int optname,
			const char *option, const char *sysctl,
			long long node_max, struct lint_warnings *w)
{
	const struct sh_rule_entry *e = rule_for(p, SOL_SOCKET, optname);
	char node[64];

	if (p->audit || !e || e->rule.action != SH_ACTION_CLAMP ||
	    (node_max > 0 && node_max <= 2 * (long long)e->rule.max))
		return;
	if (node_max > 0)
		snprintf(node, sizeof(node), "%lld on this node", node_max);
	else
		snprintf(node, sizeof(node), "unreadable here");
	lint_add(
		w,
		"policies.%s.setsockopt: the clamp on %s (max %lld) governs setsockopt calls only: TCP autotuning grows the %s buffer of a socket that never sets %s up to %s's max (%s); to bound it, set that max to at most %lld on the node (a new network namespace copies it, and a pod sysctl past both is refused)",
		p->name, option, (long long)e->rule.max,
		optname == SO_RCVBUF ? "receive" : "send", option, sysctl, node,
		2 * (long long)e->rule.max);
}

void lint_autotuning(const struct sh_config *cfg, long long tcp_rmem_max,
		     long long tcp_wmem_max, struct lint_warnings *w)
{
	for (size_t i = 0; i < cfg->nr_policies; i++) {
		lint_buffer(&cfg->policies[i], SO_RCVBUF, "SO_RCVBUF",
			    "net.ipv4.tcp_rmem", tcp_rmem_max, w);
		lint_buffer(&cfg->policies[i], SO_SNDBUF, "SO_SNDBUF",
			    "net.ipv4.tcp_wmem", tcp_wmem_max, w);
	}
}

void lint_policies(const struct sh_config *cfg, struct lint_warnings *w)
{
	for (size_t i = 0; i < cfg->nr_policies; i++) {
		lint_stamps(&cfg->policies[i], w);
		lint_twins(&cfg->policies[i], w);
	}
	lint_audit_mode(cfg, w);
	lint_sandbox(cfg, w);
}
