// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each container gets its own copy of the programs it needs: the policy is
 * frozen into .rodata (sock_create) or a read-only-to-BPF hash map
 * (sockopt), so there is no shared state to corrupt or to race on, and the
 * kernel frees everything when the cgroup goes away.
 */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "getsockopt.skel.h"
#include "load.h"
#include "log.h"
#include "setsockopt.skel.h"
#include "sock_create.skel.h"

static void fill_sock_rodata(struct sock_create_bpf *skel,
			     const struct sh_policy *p)
{
	if (!p)
		return;
	skel->rodata->nr_deny_rules = p->nr_deny;
	for (__u32 i = 0; i < p->nr_deny; i++)
		skel->rodata->deny_rules[i] = p->deny[i];
	skel->rodata->set_mark = p->has_mark;
	skel->rodata->mark = p->mark;
	skel->rodata->set_priority = p->has_priority;
	skel->rodata->priority = p->priority;
}

int load_sock_create(const struct sh_effective *eff, bool bypass,
		     struct sh_loaded *l)
{
	struct sock_create_bpf *skel = sock_create_bpf__open();
	int r;

	if (!skel)
		return -errno;
	fill_sock_rodata(skel, eff->policy);
	bpf_program__set_autoload(skel->progs.sh_sock_create, !bypass);
	bpf_program__set_autoload(skel->progs.sh_sock_bypass, bypass);
	r = sock_create_bpf__load(skel);
	if (r) {
		sock_create_bpf__destroy(skel);
		return r;
	}
	l->sock = skel;
	l->bypass = bypass;
	return 0;
}

static int fill_rules(struct bpf_map *map, const struct sh_rule_entry *rules,
		      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = bpf_map__update_elem(
			map, &rules[i].key, sizeof(rules[i].key),
			&rules[i].rule, sizeof(rules[i].rule), BPF_NOEXIST);
		if (r)
			return r;
	}
	return 0;
}

int load_setsockopt(const struct sh_effective *eff, struct sh_loaded *l)
{
	const struct sh_policy *p = eff->policy;
	struct setsockopt_bpf *skel = setsockopt_bpf__open();
	int r;

	if (!skel)
		return -errno;
	skel->rodata->default_deny = p->default_deny;
	r = bpf_map__set_max_entries(skel->maps.rules,
				     p->nr_set ? p->nr_set : 1);
	if (!r)
		r = setsockopt_bpf__load(skel);
	if (!r)
		r = fill_rules(skel->maps.rules, p->set_rules, p->nr_set);
	if (r) {
		setsockopt_bpf__destroy(skel);
		return r;
	}
	l->set = skel;
	return 0;
}

int load_getsockopt(const struct sh_effective *eff, struct sh_loaded *l)
{
	const struct sh_policy *p = eff->policy;
	struct getsockopt_bpf *skel = getsockopt_bpf__open();
	int r;

	if (!skel)
		return -errno;
	r = bpf_map__set_max_entries(skel->maps.rules, p->nr_get);
	if (!r)
		r = getsockopt_bpf__load(skel);
	if (!r)
		r = fill_rules(skel->maps.rules, p->get_rules, p->nr_get);
	if (r) {
		getsockopt_bpf__destroy(skel);
		return r;
	}
	l->get = skel;
	return 0;
}

void loaded_free(struct sh_loaded *l)
{
	sock_create_bpf__destroy(l->sock);
	setsockopt_bpf__destroy(l->set);
	getsockopt_bpf__destroy(l->get);
	memset(l, 0, sizeof(*l));
}
