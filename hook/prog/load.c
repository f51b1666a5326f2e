// SPDX-License-Identifier: GPL-2.0-only
/*
 * A container's programs: the policy is frozen into .rodata (sock_create)
 * or into a frozen, read-only-to-BPF hash map (sockopt). Containers with
 * the same policy share one copy, found through share.c and verified by
 * the policy hash in .rodata, or pinned by `preload`; otherwise a copy is
 * loaded here. A copy loaded here is not pinned: the kernel frees it when
 * its last cgroup goes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "audit_mode_map.h"
#include "bpf_build_id.h"
#include "lib/cleanup.h"
#include "prog/generic.h"
#include "getsockopt.skel.h"
#include "config/names.h"
#include "lib/log.h"
#include "prog/load.h"
#include "prog/objects.h"
#include "prog/pin.h"
#include "prog/progcheck.h"
#include "setsockopt.skel.h"
#include "prog/share.h"
#include "sock_create.skel.h"

void load_init(struct sh_loaded *l)
{
	memset(l, 0, sizeof(*l));
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		l->fd[k] = -1;
		generic_init(&l->gen[k]);
	}
	l->pins = -1;
}

/* A specialised load creates none of the generic programs' maps. */
static int specialised_only(struct bpf_map *state, struct bpf_map *rules)
{
	int r = bpf_map__set_autocreate(state, /* autocreate= */ false);

	return r || !rules ?
		       r :
		       bpf_map__set_autocreate(rules, /* autocreate= */ false);
}

/*
 * No specialised copy at hand: the generic program of this kind and mode,
 * when preload has pinned it (generic.h). Record mode never comes here:
 * its copies carry the container's own footprint tables. Nor does a
 * policy whose pin failed its check (share_find(): -ESTALE): its fresh
 * copy is pinned in that pin's place (attach_publish()), so one
 * container's load mends the pin for the next ones.
 */
static int take_generic(enum sh_prog_kind kind, bool bypass,
			struct sh_loaded *l)
{
	int r;

	if (l->footprint || !l->at_start)
		return -ENOENT;
	r = generic_find(l->pins, kind, bypass, l->audit, &l->gen[kind]);
	if (!r && generic_new_rules(&l->gen[kind])) {
		r = -errno;
		generic_close(&l->gen[kind]);
	}
	if (r)
		return r;
	l->fd[kind] = l->gen[kind].fd;
	l->generic[kind] = true;
	return 0;
}

static uint64_t rules_hash(uint64_t h, const struct sh_rule_entry *rules,
			   size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h = share_hash(h, &rules[i].key, sizeof(rules[i].key));
		h = share_hash(h, &rules[i].rule, sizeof(rules[i].rule));
	}
	return h;
}

/* Record mode: the policy an unpoliced container is recorded under. */
static const struct sh_policy load_empty = { .name = "" };

/* The footprint table: full size when recording, else one entry the
 * verifier never sees touched. */
static int footprint_size(struct bpf_map *map, bool on)
{
	return bpf_map__set_max_entries(map, on ? SH_FP_MAX : 1);
}

/* The maps every specialised copy sizes before its load: no generic
 * state or rules (rules may be NULL), and its footprint table. */
static int size_maps(struct bpf_map *state, struct bpf_map *rules,
		     struct bpf_map *footprint, bool footprint_on)
{
	int r = specialised_only(state, rules);

	if (r)
		return r;
	return footprint_size(footprint, footprint_on);
}

/* A recording copy has its own tables: it must never be found by a
 * container that does not record (the hash differs), and is never looked
 * up by one that does (see obtain()). Other copies hash as they did. */
static uint64_t footprint_hash(uint64_t h, bool on)
{
	return on ? share_hash(h, "record", 6) : h;
}

/* Audit mode copies never pass for enforce ones, nor the other way round;
 * enforce copies hash as they always did. */
static uint64_t audit_hash(uint64_t h, bool audit)
{
	return audit ? share_hash(h, "audit", 5) : h;
}

/* The would-have storage: full size in audit mode, else a token 8 bytes
 * the verifier never sees touched. */
static int size_would_have(struct bpf_map *map, bool audit)
{
	return bpf_map__set_value_size(
		map, audit ? sizeof(struct sh_would_have) : sizeof(__u64));
}

static uint64_t sock_hash(const struct sh_policy *p, bool bypass)
{
	uint64_t h = share_hash(SH_BPF_BUILD_ID, "sock", 4);

	p = p ? p : &load_empty;
	h = share_hash(h, &bypass, sizeof(bypass));
	h = share_hash(h, &p->nr_deny, sizeof(p->nr_deny));
	h = share_hash(h, p->deny, sizeof(p->deny[0]) * p->nr_deny);
	h = share_hash(h, &p->has_mark, sizeof(p->has_mark));
	h = share_hash(h, &p->mark, sizeof(p->mark));
	h = share_hash(h, &p->has_priority, sizeof(p->has_priority));
	return share_hash(h, &p->priority, sizeof(p->priority));
}

/* What is frozen into .rodata: the same for a fresh load (the skeleton's
 * section) and for checking a copy found elsewhere (progcheck.h). */
static void fill_sock_rodata(struct sock_create_bpf__rodata *ro,
			     const struct sh_policy *p,
			     const struct sh_loaded *l)
{
	ro->policy_hash = l->hash[SH_PROG_SOCK];
	ro->footprint_on = l->footprint;
	ro->audit_mode = l->audit;
	if (!p)
		return;
	ro->nr_deny_rules = p->nr_deny;
	for (__u32 i = 0; i < p->nr_deny; i++)
		ro->deny_rules[i] = p->deny[i];
	ro->set_mark = p->has_mark;
	ro->mark = p->mark;
	ro->set_priority = p->has_priority;
	ro->priority = p->priority;
}

static int load_sock_create(const struct sh_effective *eff, bool bypass,
			    struct sh_loaded *l)
{
	struct sock_create_bpf *skel = objects_open_sock();
	int r;

	if (!skel)
		return -errno;
	fill_sock_rodata(skel->rodata, eff->policy, l);
	r = size_would_have(skel->maps.would_have, l->audit);
	if (r)
		goto fail;
	bpf_program__set_autoload(skel->progs.sh_sock_create, !bypass);
	bpf_program__set_autoload(skel->progs.sh_sock_bypass, bypass);
	bpf_program__set_autoload(skel->progs.sh_gen_sock,
				  /* autoload= */ false);
	bpf_program__set_autoload(skel->progs.sh_gen_sock_bp,
				  /* autoload= */ false);
	r = size_maps(skel->maps.gen_state, NULL, skel->maps.footprint,
		      l->footprint);
	if (r)
		goto fail;
	r = sock_create_bpf__load(skel);
	if (r)
		goto fail;
	l->sock = skel;
	l->fd[SH_PROG_SOCK] =
		bpf_program__fd(bypass ? skel->progs.sh_sock_bypass :
					 skel->progs.sh_sock_create);
	l->fresh[SH_PROG_SOCK] = true;
	return 0;
fail:
	sock_create_bpf__destroy(skel);
	return r;
}

/*
 * The kernel series that lets sock_create programs set
 * SK_BPF_BYPASS_PROT_MEM also added this sysctl: without it, prestart
 * knows the bypass variant will not load, without asking the verifier.
 */
static bool bypass_sysctl(void)
{
	return access("/proc/sys/net/core/bypass_prot_mem", F_OK) == 0;
}

static int obtain_sock_create(const struct sh_effective *eff, bool bypass,
			      struct sh_loaded *l)
{
	struct sock_create_bpf__rodata ro;
	const struct progcheck_want want = {
		.kind = SH_PROG_SOCK,
		.prog_name = bypass ? "sh_sock_bypass" : "sh_sock_create",
		.rodata = &ro,
		.rodata_size = sizeof(ro),
	};
	int fd;

	l->bypass = bypass;
	l->hash[SH_PROG_SOCK] = load_hash(eff, SH_PROG_SOCK, bypass);
	memset(&ro, 0, sizeof(ro));
	fill_sock_rodata(&ro, eff->policy, l);
	fd = l->footprint ? -ENOENT :
			    share_find(l->pins, kind_get(SH_PROG_SOCK)->name,
				       l->hash[SH_PROG_SOCK], &want,
				       &l->pinned[SH_PROG_SOCK]);
	if (fd >= 0) {
		l->fd[SH_PROG_SOCK] = fd;
		return 0;
	}
	if (fd != -ESTALE && !take_generic(SH_PROG_SOCK, bypass, l))
		return 0;
	if (bypass && l->at_start && !bypass_sysctl())
		return -EOPNOTSUPP; /* not worth a verifier run to learn it */
	return load_sock_create(eff, bypass, l);
}

/* Every action, domain and form the rules use: the programs' other paths
 * are dead code to the verifier. */
static __u32 rules_uses(const struct sh_rule_entry *rules, size_t n)
{
	__u32 uses = 0;

	for (size_t i = 0; i < n; i++) {
		const struct sh_opt_rule *r = &rules[i].rule;

		uses |= SH_USES_ACTION(r->action) | SH_USES_DOMAIN(r->domain) |
			SH_USES_SHORT(r->short_read) | SH_USES_GET(r->get_form);
	}
	return uses;
}

/* The programs see at most a page of optval: the running kernel's page. */
static __u32 kernel_page_size(void)
{
	return (__u32)sysconf(_SC_PAGESIZE);
}

static uint64_t sockopt_hash(const char *kind,
			     const struct sh_rule_entry *rules, size_t n)
{
	__u32 page = kernel_page_size();
	uint64_t h = share_hash(SH_BPF_BUILD_ID, kind, strlen(kind));

	h = share_hash(h, &page, sizeof(page));
	return rules_hash(h, rules, n);
}

/* Filled once, then frozen: a copy shared by containers must not change. */
static int fill_rules(struct bpf_map *map, const struct sh_rule_entry *rules,
		      size_t n, bool audit)
{
	for (size_t i = 0; i < n; i++) {
		struct sh_opt_rule rule = progcheck_rule(rules, i, audit);
		int r;

		r = bpf_map__update_elem(map, &rules[i].key,
					 sizeof(rules[i].key), &rule,
					 sizeof(rule), BPF_NOEXIST);
		if (r)
			return r;
	}
	return bpf_map_freeze(bpf_map__fd(map)) ? -errno : 0;
}

/* The part both sockopt objects share: size, load, fill and freeze. */
static int load_rules_object(struct bpf_object_skeleton *s,
			     struct bpf_map *rules, struct bpf_map *would_have,
			     const struct sh_rule_entry *entries, size_t n,
			     bool audit)
{
	int r = bpf_map__set_max_entries(rules, n ? n : 1);

	if (r)
		return r;
	r = size_would_have(would_have, audit);
	if (r)
		return r;
	r = bpf_object__load_skeleton(s);
	if (r)
		return r;
	return fill_rules(rules, entries, n, audit);
}

static void fill_set_rodata(struct setsockopt_bpf__rodata *ro,
			    const struct sh_policy *p,
			    const struct sh_loaded *l)
{
	ro->default_deny = p->default_deny;
	ro->rule_uses = rules_uses(p->set_rules, p->nr_set);
	ro->page_size = kernel_page_size();
	ro->policy_hash = l->hash[SH_PROG_SET];
	ro->footprint_on = l->footprint;
	ro->audit_mode = l->audit;
}

static void fill_get_rodata(struct getsockopt_bpf__rodata *ro,
			    const struct sh_policy *p,
			    const struct sh_loaded *l)
{
	ro->rule_uses = rules_uses(p->get_rules, p->nr_get);
	ro->page_size = kernel_page_size();
	ro->policy_hash = l->hash[SH_PROG_GET];
	ro->footprint_on = l->footprint;
	ro->audit_mode = l->audit;
}

#define LOAD_SOL_UDP 17

/* One option's domain at its slot (test_options.c checks that every int
 * option of the table has one). */
static int fill_domain(struct bpf_map *map, int level,
		       const struct sh_option_name *opt)
{
	struct sh_fp_domain d = { opt->domain, opt->special };
	int slot = sh_fp_domain_slot(level, opt->optname);
	__u32 k;

	if (slot < 0)
		return -ERANGE;
	k = (__u32)slot;
	return bpf_map__update_elem(map, &k, sizeof(k), &d, sizeof(d), BPF_ANY);
}

/* Record mode: how the kernel keeps each int option (names.c), at its
 * level and, for UDP's, at SOL_UDPLITE, which UDP's handler takes as its
 * own; frozen. One entry, never read, when not recording. */
static int fill_domains(struct bpf_map *map, bool on)
{
	int r = 0;

	if (!on)
		return 0;
	for (size_t i = 0; !r && i < names_option_count(); i++) {
		const struct sh_option_name *opt = names_option_at(i);

		if (opt->kind != OPT_INT)
			continue;
		r = fill_domain(map, opt->level, opt);
		if (!r && opt->level == LOAD_SOL_UDP)
			r = fill_domain(map, SOL_UDPLITE_LEVEL, opt);
	}
	if (r)
		return r;
	return bpf_map_freeze(bpf_map__fd(map)) ? -errno : 0;
}

static int load_setsockopt(const struct sh_policy *p, struct sh_loaded *l)
{
	struct setsockopt_bpf *skel = objects_open_set();
	int r;

	if (!skel)
		return -errno;
	fill_set_rodata(skel->rodata, p, l);
	bpf_program__set_autoload(skel->progs.sh_gen_set,
				  /* autoload= */ false);
	r = size_maps(skel->maps.gen_state, skel->maps.gen_rules,
		      skel->maps.footprint, l->footprint);
	if (!r && !l->footprint)
		r = bpf_map__set_max_entries(skel->maps.fp_domains, 1);
	if (r)
		goto fail;
	r = load_rules_object(skel->skeleton, skel->maps.rules,
			      skel->maps.would_have, p->set_rules, p->nr_set,
			      l->audit);
	if (!r)
		r = fill_domains(skel->maps.fp_domains, l->footprint);
	if (r)
		goto fail;
	l->set = skel;
	l->fd[SH_PROG_SET] = bpf_program__fd(skel->progs.sh_setsockopt);
	l->fresh[SH_PROG_SET] = true;
	return 0;
fail:
	setsockopt_bpf__destroy(skel);
	return r;
}

static int load_getsockopt(const struct sh_policy *p, struct sh_loaded *l)
{
	struct getsockopt_bpf *skel = objects_open_get();
	int r;

	if (!skel)
		return -errno;
	fill_get_rodata(skel->rodata, p, l);
	bpf_program__set_autoload(skel->progs.sh_gen_get,
				  /* autoload= */ false);
	r = size_maps(skel->maps.gen_state, skel->maps.gen_rules,
		      skel->maps.footprint, l->footprint);
	if (r)
		goto fail;
	r = load_rules_object(skel->skeleton, skel->maps.rules,
			      skel->maps.would_have, p->get_rules, p->nr_get,
			      l->audit);
	if (r)
		goto fail;
	l->get = skel;
	l->fd[SH_PROG_GET] = bpf_program__fd(skel->progs.sh_getsockopt);
	l->fresh[SH_PROG_GET] = true;
	return 0;
fail:
	getsockopt_bpf__destroy(skel);
	return r;
}

uint64_t load_hash(const struct sh_effective *eff, enum sh_prog_kind kind,
		   bool bypass)
{
	const struct sh_policy *p = eff->policy ? eff->policy : &load_empty;
	uint64_t h;

	switch (kind) {
	case SH_PROG_SOCK:
		h = sock_hash(eff->policy, bypass);
		break;
	case SH_PROG_SET:
		h = sockopt_hash("set", p->set_rules, p->nr_set);
		h = share_hash(h, &p->default_deny, sizeof(p->default_deny));
		break;
	default:
		h = sockopt_hash("get", p->get_rules, p->nr_get);
		break;
	}
	return footprint_hash(audit_hash(h, eff->audit),
			      eff->record[0] != '\0');
}

/* The program a shared copy of this kind must be, for progcheck.h. */
union sockopt_rodata {
	struct setsockopt_bpf__rodata set;
	struct getsockopt_bpf__rodata get;
};

static void sockopt_want(enum sh_prog_kind kind, const struct sh_policy *p,
			 const struct sh_loaded *l, union sockopt_rodata *ro,
			 struct progcheck_want *want)
{
	bool set = kind == SH_PROG_SET;

	memset(ro, 0, sizeof(*ro));
	if (set)
		fill_set_rodata(&ro->set, p, l);
	else
		fill_get_rodata(&ro->get, p, l);
	*want = (struct progcheck_want){
		.kind = kind,
		.prog_name = set ? "sh_setsockopt" : "sh_getsockopt",
		.rodata = ro,
		.rodata_size = set ? sizeof(ro->set) : sizeof(ro->get),
		.has_rules = true,
		.rules = set ? p->set_rules : p->get_rules,
		.nr_rules = set ? p->nr_set : p->nr_get,
		.audit = l->audit,
	};
}

/* A live copy with the same policy if there is one, else a fresh load. */
static int obtain(enum sh_prog_kind kind, uint64_t hash,
		  const struct sh_policy *p, struct sh_loaded *l)
{
	struct progcheck_want want;
	union sockopt_rodata ro;
	int fd;

	l->hash[kind] = hash;
	sockopt_want(kind, p, l, &ro, &want);
	fd = l->footprint ? -ENOENT :
			    share_find(l->pins, kind_get(kind)->name, hash,
				       &want, &l->pinned[kind]);
	if (fd >= 0) {
		l->fd[kind] = fd;
		return 0;
	}
	if (fd != -ESTALE && !take_generic(kind, /* bypass= */ false, l))
		return 0;
	return kind == SH_PROG_SET ? load_setsockopt(p, l) :
				     load_getsockopt(p, l);
}

static int obtain_setsockopt(const struct sh_effective *eff,
			     struct sh_loaded *l)
{
	const struct sh_policy *p = eff->policy ? eff->policy : &load_empty;

	return obtain(SH_PROG_SET,
		      load_hash(eff, SH_PROG_SET, /* bypass= */ false), p, l);
}

static int obtain_getsockopt(const struct sh_effective *eff,
			     struct sh_loaded *l)
{
	const struct sh_policy *p = eff->policy ? eff->policy : &load_empty;

	return obtain(SH_PROG_GET,
		      load_hash(eff, SH_PROG_GET, /* bypass= */ false), p, l);
}

static bool unsupported(int r)
{
	/* Verifier refusals; 524 is the kernel's ENOTSUPP. */
	return r == -EINVAL || r == -EACCES || r == -EOPNOTSUPP || r == -524;
}

int load_probe_bypass(void)
{
	struct sh_effective none = { 0 };
	struct sh_loaded l;
	int r;

	load_init(&l);
	r = obtain_sock_create(&none, /* bypass= */ true, &l);
	load_free(&l);
	if (r)
		return unsupported(r) ? 0 : r;
	return 1;
}

static int refuse_bypass(const struct sh_effective *eff, struct sh_error *err)
{
	char src[SH_SOURCE_TEXT_MAX];

	policy_source_text(eff, /* bypass= */ true, src, sizeof(src));
	error_reason(err, SH_REASON_BYPASS_PROT_MEM_UNSUPPORTED);
	if (eff->bypass_source == SRC_ANNOTATION)
		error_cause(err, eff->bypass_key, "true");
	else
		error_cause(err, NULL, src);
	return error_set(
		err, -EOPNOTSUPP,
		"bypass-prot-mem is requested (by %s) but this kernel lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19); refusing because on_unsupported is 'fail'",
		src);
}

static int obtain_sock(const struct sh_effective *eff, enum on_unsupported on,
		       struct sh_loaded *l, struct sh_error *err)
{
	struct sh_effective rest = *eff;
	int r;

	if (!eff->bypass)
		return obtain_sock_create(eff, /* bypass= */ false, l);
	r = obtain_sock_create(eff, /* bypass= */ true, l);
	if (!r || !unsupported(r))
		return r;
	if (on == ON_UNSUPPORTED_FAIL)
		return refuse_bypass(eff, err);
	log_warn(
		"bypass-prot-mem is requested but this kernel lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19); starting without it (on_unsupported is 'warn')");
	rest.bypass = false;
	if (!policy_needs(&rest, SH_PROG_SOCK))
		return 0;
	return obtain_sock_create(&rest, /* bypass= */ false, l);
}

static int obtain_kind(const struct sh_effective *eff, enum on_unsupported on,
		       enum sh_prog_kind kind, struct sh_loaded *l,
		       struct sh_error *err)
{
	int r;

	switch (kind) {
	case SH_PROG_SOCK:
		r = obtain_sock(eff, on, l, err);
		break;
	case SH_PROG_SET:
		r = obtain_setsockopt(eff, l);
		break;
	default:
		r = obtain_getsockopt(eff, l);
		break;
	}
	if (r)
		error_errno(err, r, "cannot load the %s program",
			    kind_get(kind)->name);
	return r;
}

/* Pins are an optimisation: a pin directory that is missing or refused
 * only means loading here (with a warning for the refused one). */
static int open_pins(void)
{
	struct sh_error err = { 0 };
	int fd = pin_dir_open(/* create= */ false, &err);

	if (fd < 0 && fd != -ENOENT)
		log_warn("%s; loading the programs instead", err.msg);
	return fd;
}

int load_policy(const struct sh_effective *eff, enum on_unsupported on,
		enum load_how how, struct sh_loaded *l, struct sh_error *err)
{
	int r = 0;

	load_init(l);
	l->at_start = how == LOAD_AT_START;
	l->footprint = eff->record[0] != '\0';
	l->audit = eff->audit;
	l->eff = eff;
	l->pins = open_pins();
	for (int k = 0; k < SH_PROG_KINDS && !r; k++)
		if (policy_needs(eff, k))
			r = obtain_kind(eff, on, k, l, err);
	if (r)
		load_free(l);
	return r;
}

void load_free(struct sh_loaded *l)
{
	/* Shared copies came as plain fds; fresh ones belong to skeletons,
	 * generic ones to l->gen. */
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		if (l->fd[k] >= 0 && !l->fresh[k] && !l->generic[k])
			close(l->fd[k]);
		generic_close(&l->gen[k]);
	}
	sock_create_bpf__destroy(l->sock);
	setsockopt_bpf__destroy(l->set);
	getsockopt_bpf__destroy(l->get);
	if (l->pins >= 0)
		close(l->pins);
	load_init(l);
}
