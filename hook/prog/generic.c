// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generic programs: loaded by preload, found by prestart in the pin
 * directory, told each container's policy through their maps. A prestart
 * on this path makes only map syscalls and the attach: no program load,
 * no libbpf feature probe (maps are created unnamed for that reason).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_build_id.h"
#include "bpfinfo.h"
#include "cleanup.h"
#include "generic.h"
#include "generic_map.h"
#include "getsockopt.skel.h"
#include "audit_mode_map.h"
#include "log.h"
#include "pin.h"
#include "setsockopt.skel.h"
#include "share.h"
#include "sock_create.skel.h"

#define GEN_PREFIX "sh_gen_"

uint64_t generic_hash(enum sh_prog_kind kind, bool bypass, bool audit)
{
	const char *name = kind_get(kind)->name;
	__u32 page = (__u32)sysconf(_SC_PAGESIZE);
	uint64_t h = share_hash(SH_BPF_BUILD_ID, "generic", 7);

	h = share_hash(h, name, strlen(name));
	h = share_hash(h, &bypass, sizeof(bypass));
	h = share_hash(h, &audit, sizeof(audit));
	return share_hash(h, &page, sizeof(page));
}

const char *generic_prog_name(enum sh_prog_kind kind, bool bypass)
{
	switch (kind) {
	case SH_PROG_SOCK:
		return bypass ? "sh_gen_sock_bp" : "sh_gen_sock";
	case SH_PROG_SET:
		return "sh_gen_set";
	default:
		return "sh_gen_get";
	}
}

bool generic_is_name(const char *prog_name)
{
	return !strncmp(prog_name, GEN_PREFIX, strlen(GEN_PREFIX));
}

bool generic_is_pin(const char *kind_name, uint64_t hash)
{
	const struct kind_info *k = kind_by_name(kind_name);

	for (int mode = 0; k && mode < 4; mode++)
		if (hash == generic_hash(k->kind, mode & 1, mode & 2))
			return true;
	return false;
}

/* The loaded program outlives its skeleton: a copy of its fd. */
static int dup_cloexec(int fd)
{
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	return copy < 0 ? -errno : copy;
}

/* The state's size: the would-have counters only in audit mode. */
static __u32 state_size(enum sh_prog_kind kind, bool audit)
{
	if (kind == SH_PROG_SOCK)
		return audit ? sizeof(struct sh_gen_sock_state) :
			       offsetof(struct sh_gen_sock_state, wh);
	return audit ? sizeof(struct sh_gen_opt_state) :
		       offsetof(struct sh_gen_opt_state, wh);
}

/* A generic load creates none of a specialised copy's maps. */
static int generic_only(struct bpf_map *const *unused, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = bpf_map__set_autocreate(unused[i], false);

		if (r)
			return r;
	}
	return 0;
}

static int load_sock(bool bypass, bool audit, uint64_t hash)
{
	struct sock_create_bpf *skel = sock_create_bpf__open();
	int r, fd;

	if (!skel)
		return -errno;
	struct bpf_map *const unused[] = { skel->maps.would_have,
					   skel->maps.footprint,
					   skel->maps.fp_overflow };
	struct bpf_program *prog = bypass ? skel->progs.sh_gen_sock_bp :
					    skel->progs.sh_gen_sock;

	skel->rodata->policy_hash = hash;
	skel->rodata->audit_mode = audit;
	bpf_program__set_autoload(skel->progs.sh_sock_create, false);
	bpf_program__set_autoload(skel->progs.sh_sock_bypass, false);
	bpf_program__set_autoload(bypass ? skel->progs.sh_gen_sock :
					   skel->progs.sh_gen_sock_bp,
				  false);
	r = generic_only(unused, ARRAY_SIZE(unused));
	if (!r)
		r = bpf_map__set_value_size(skel->maps.gen_state,
					    state_size(SH_PROG_SOCK, audit));
	if (!r)
		r = sock_create_bpf__load(skel);
	fd = r ? r : dup_cloexec(bpf_program__fd(prog));
	sock_create_bpf__destroy(skel);
	return fd;
}

static int load_set(bool audit, uint64_t hash)
{
	struct setsockopt_bpf *skel = setsockopt_bpf__open();
	int r, fd;

	if (!skel)
		return -errno;
	struct bpf_map *const unused[] = { skel->maps.rules,
					   skel->maps.would_have,
					   skel->maps.footprint,
					   skel->maps.fp_overflow };

	skel->rodata->policy_hash = hash;
	skel->rodata->audit_mode = audit;
	skel->rodata->rule_uses = ~0u;
	skel->rodata->page_size = (__u32)sysconf(_SC_PAGESIZE);
	bpf_program__set_autoload(skel->progs.sh_setsockopt, false);
	r = generic_only(unused, ARRAY_SIZE(unused));
	if (!r)
		r = bpf_map__set_value_size(skel->maps.gen_state,
					    state_size(SH_PROG_SET, audit));
	if (!r)
		r = setsockopt_bpf__load(skel);
	fd = r ? r : dup_cloexec(bpf_program__fd(skel->progs.sh_gen_set));
	setsockopt_bpf__destroy(skel);
	return fd;
}

static int load_get(bool audit, uint64_t hash)
{
	struct getsockopt_bpf *skel = getsockopt_bpf__open();
	int r, fd;

	if (!skel)
		return -errno;
	struct bpf_map *const unused[] = { skel->maps.rules,
					   skel->maps.would_have,
					   skel->maps.footprint,
					   skel->maps.fp_overflow };

	skel->rodata->policy_hash = hash;
	skel->rodata->audit_mode = audit;
	skel->rodata->rule_uses = ~0u;
	skel->rodata->page_size = (__u32)sysconf(_SC_PAGESIZE);
	bpf_program__set_autoload(skel->progs.sh_getsockopt, false);
	r = generic_only(unused, ARRAY_SIZE(unused));
	if (!r)
		r = bpf_map__set_value_size(skel->maps.gen_state,
					    state_size(SH_PROG_GET, audit));
	if (!r)
		r = getsockopt_bpf__load(skel);
	fd = r ? r : dup_cloexec(bpf_program__fd(skel->progs.sh_gen_get));
	getsockopt_bpf__destroy(skel);
	return fd;
}

int generic_load(enum sh_prog_kind kind, bool bypass, bool audit)
{
	uint64_t hash = generic_hash(kind, bypass, audit);

	switch (kind) {
	case SH_PROG_SOCK:
		return load_sock(bypass, audit, hash);
	case SH_PROG_SET:
		return load_set(audit, hash);
	default:
		return load_get(audit, hash);
	}
}

void generic_init(struct generic_prog *g)
{
	g->fd = g->state_fd = g->rules_fd = -1;
	g->id = 0;
}

void generic_close(struct generic_prog *g)
{
	if (g->fd >= 0)
		close(g->fd);
	if (g->state_fd >= 0)
		close(g->state_fd);
	if (g->rules_fd >= 0)
		close(g->rules_fd);
	generic_init(g);
}

/* What a map of the program must be before the hook writes to it. */
struct map_want {
	const char *name;
	__u32 type, key_size, value_size;
};

static bool map_is(const struct bpf_map_info *info, const void *data)
{
	const struct map_want *w = data;

	return !strcmp(info->name, w->name) && info->type == w->type &&
	       info->key_size == w->key_size &&
	       info->value_size == w->value_size;
}

/* The hash frozen into .rodata: the first field of sock_create's, the
 * field after the three ints of the sockopt programs'. */
static bool rodata_is(const struct bpf_map_info *info, const void *data)
{
	(void)data;
	return strstr(info->name, ".rodata") && info->max_entries == 1 &&
	       info->value_size >= 2 * sizeof(uint64_t) &&
	       (info->map_flags & BPF_F_RDONLY_PROG);
}

static size_t hash_offset(enum sh_prog_kind kind)
{
	if (kind == SH_PROG_SOCK)
		return offsetof(struct sock_create_bpf__rodata, policy_hash);
	if (kind == SH_PROG_SET)
		return offsetof(struct setsockopt_bpf__rodata, policy_hash);
	return offsetof(struct getsockopt_bpf__rodata, policy_hash);
}

static int check_rodata(int prog_fd, enum sh_prog_kind kind, uint64_t hash)
{
	_cleanup_close_ int fd =
		bpfinfo_find_map(prog_fd, NULL, rodata_is, NULL);
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info), zero = 0;
	_cleanup_free_ char *value = NULL;
	uint64_t found;

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return -ESTALE;
	value = calloc(1, info.value_size);
	if (!value || hash_offset(kind) + sizeof(found) > info.value_size ||
	    bpf_map_lookup_elem(fd, &zero, value))
		return -ESTALE;
	memcpy(&found, value + hash_offset(kind), sizeof(found));
	return found == hash ? 0 : -ESTALE;
}

static int open_maps(enum sh_prog_kind kind, bool audit, struct generic_prog *g)
{
	const struct map_want state = { "gen_state",
					BPF_MAP_TYPE_CGROUP_STORAGE,
					sizeof(struct bpf_cgroup_storage_key),
					state_size(kind, audit) };
	const struct map_want rules = { "gen_rules", BPF_MAP_TYPE_HASH_OF_MAPS,
					sizeof(__u64), sizeof(__u32) };

	g->state_fd = bpfinfo_find_map(g->fd, NULL, map_is, &state);
	if (g->state_fd < 0)
		return g->state_fd;
	if (kind == SH_PROG_SOCK)
		return 0;
	g->rules_fd = bpfinfo_find_map(g->fd, NULL, map_is, &rules);
	return g->rules_fd < 0 ? g->rules_fd : 0;
}

int generic_find(int pins, enum sh_prog_kind kind, bool bypass, bool audit,
		 struct generic_prog *g)
{
	uint64_t hash = generic_hash(kind, bypass, audit);
	char name[SH_BPF_NAME_MAX], pin[SH_PIN_NAME_MAX];
	int r;

	generic_init(g);
	if (pins < 0)
		return -ENOENT;
	g->fd = pin_get(pins, kind_get(kind)->name, hash);
	if (g->fd < 0) {
		g->fd = -1;
		return -ENOENT;
	}
	r = bpfinfo_prog(g->fd, &g->id, name);
	if (!r && strcmp(name, generic_prog_name(kind, bypass)))
		r = -ESTALE;
	if (!r)
		r = check_rodata(g->fd, kind, hash);
	if (!r)
		r = open_maps(kind, audit, g);
	if (r) {
		pin_name(pin, sizeof(pin), kind_get(kind)->name, hash);
		log_warn(
			"pin %s/%s is not the generic %s program this hook loads (%s): loading the policy's programs instead",
			pin_dir(), pin, kind_get(kind)->name, strerror(-r));
		generic_close(g);
		return -ENOENT;
	}
	return 0;
}

static const struct sh_policy gen_none = { .name = "" };

/* The container's own rules map: filled, frozen, then named in the
 * program's gen_rules under its cgroup id. */
static int put_rules(const struct generic_prog *g, enum sh_prog_kind kind,
		     const struct sh_effective *eff, uint64_t cg_id,
		     struct sh_error *err)
{
	const struct sh_policy *p = eff->policy ? eff->policy : &gen_none;
	const struct sh_rule_entry *rules = kind == SH_PROG_SET ? p->set_rules :
								  p->get_rules;
	size_t n = kind == SH_PROG_SET ? p->nr_set : p->nr_get;
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_RDONLY_PROG);
	_cleanup_close_ int fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL,
						sizeof(struct sh_opt_key),
						sizeof(struct sh_opt_rule),
						n ? (__u32)n : 1, &opts);
	int r = fd < 0 ? -errno : 0;

	for (size_t i = 0; !r && i < n; i++) {
		struct sh_opt_rule rule = rules[i].rule;

		if (eff->audit) /* audit mode: as a specialised copy numbers */
			rule.audit_slot = sh_wh_slot(i);

		if (bpf_map_update_elem(fd, &rules[i].key, &rule, BPF_NOEXIST))
			r = -errno;
	}
	if (!r && bpf_map_freeze(fd))
		r = -errno;
	if (!r && bpf_map_update_elem(g->rules_fd, &cg_id, &fd, BPF_ANY))
		r = -errno;
	if (r)
		return error_errno(
			err, r,
			"cannot give the generic %s program the rules of this container",
			kind_get(kind)->name);
	return 0;
}

static void state_key(struct bpf_cgroup_storage_key *key,
		      enum sh_prog_kind kind, uint64_t cg_id)
{
	/* The key has tail padding, and all 16 bytes go to the kernel. */
	memset(key, 0, sizeof(*key));
	key->cgroup_inode_id = cg_id;
	key->attach_type = kind_get(kind)->type;
}

static void sock_state(const struct sh_effective *eff,
		       struct sh_gen_sock_state *st)
{
	const struct sh_policy *p = eff->policy;

	memset(st, 0, sizeof(*st));
	st->flags = SH_GEN_READY;
	if (!p)
		return;
	st->nr_deny = p->nr_deny;
	memcpy(st->deny, p->deny, sizeof(st->deny[0]) * p->nr_deny);
	st->set_mark = p->has_mark;
	st->mark = p->mark;
	st->set_priority = p->has_priority;
	st->priority = p->priority;
}

/* BPF_EXIST: only a state the cgroup has kept from an earlier attachment
 * of this program; -ENOENT when there is none. */
static int write_state(const struct generic_prog *g, enum sh_prog_kind kind,
		       const struct sh_effective *eff, uint64_t cg_id,
		       __u64 flags)
{
	struct bpf_cgroup_storage_key key;
	union {
		struct sh_gen_sock_state sock;
		struct sh_gen_opt_state opt;
	} st;

	state_key(&key, kind, cg_id);
	if (kind == SH_PROG_SOCK) {
		sock_state(eff, &st.sock);
	} else {
		memset(&st.opt, 0, sizeof(st.opt));
		st.opt.flags = SH_GEN_READY;
		st.opt.default_deny = kind == SH_PROG_SET && eff->policy &&
				      eff->policy->default_deny;
		st.opt.rules = cg_id;
	}
	return bpf_map_update_elem(g->state_fd, &key, &st, flags) ? -errno : 0;
}

int generic_prepare(const struct generic_prog *g, enum sh_prog_kind kind,
		    const struct sh_effective *eff, uint64_t cg_id,
		    struct sh_error *err)
{
	int r = kind == SH_PROG_SOCK ? 0 : put_rules(g, kind, eff, cg_id, err);

	if (r)
		return r;
	r = write_state(g, kind, eff, cg_id, BPF_EXIST);
	if (r && r != -ENOENT) {
		generic_forget(g->id, cg_id);
		return error_errno(
			err, r, "cannot write the generic %s program's state",
			kind_get(kind)->name);
	}
	return 0;
}

int generic_arm(const struct generic_prog *g, enum sh_prog_kind kind,
		const struct sh_effective *eff, uint64_t cg_id,
		struct sh_error *err)
{
	int r = write_state(g, kind, eff, cg_id, BPF_ANY);

	if (r)
		return error_errno(
			err, r, "cannot write the generic %s program's state",
			kind_get(kind)->name);
	return 0;
}

void generic_forget(__u32 prog_id, uint64_t cg_id)
{
	const struct map_want rules = { "gen_rules", BPF_MAP_TYPE_HASH_OF_MAPS,
					sizeof(__u64), sizeof(__u32) };
	_cleanup_close_ int fd = -1, map = -1;
	char name[SH_BPF_NAME_MAX];

	if (!prog_id)
		return;
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return; /* gone, and its maps with it */
	map = bpfinfo_find_map(fd, name, map_is, &rules);
	if (map < 0 || !generic_is_name(name))
		return;
	if (bpf_map_delete_elem(map, &cg_id) && errno != ENOENT)
		log_warn(
			"cannot drop the rules of cgroup %llu from program %u: %s",
			(unsigned long long)cg_id, prog_id, strerror(errno));
}

static void sweep_map(int map, generic_gone_fn gone, void *data)
{
	__u64 key, next, *prev = NULL;

	/* A key deleted while walking: start again from the one before. */
	while (bpf_map_get_next_key(map, prev, &next) == 0) {
		if (gone(next, data) && bpf_map_delete_elem(map, &next) == 0)
			continue;
		key = next;
		prev = &key;
	}
}

void generic_sweep(int pins, generic_gone_fn gone, void *data)
{
	for (int mode = 0; mode < 2; mode++) {
		for (int k = SH_PROG_SET; k < SH_PROG_KINDS; k++) {
			struct generic_prog g;

			if (generic_find(pins, k, false, mode, &g))
				continue;
			sweep_map(g.rules_fd, gone, data);
			generic_close(&g);
		}
	}
}
