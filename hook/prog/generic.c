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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_build_id.h"
#include "lib/kind.h"
#include "lib/cleanup.h"
#include "prog/generic.h"
#include "generic_map.h"
#include "getsockopt.skel.h"
#include "audit_mode_map.h"
#include "lib/log.h"
#include "prog/objects.h"
#include "prog/pin.h"
#include "prog/progcheck.h"
#include "setsockopt.skel.h"
#include "prog/share.h"
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

/* The state's size: the would-have counters only in audit mode. */
static __u32 state_size(enum sh_prog_kind kind, bool audit)
{
	if (kind == SH_PROG_SOCK)
		return audit ? sizeof(struct sh_gen_sock_state) :
			       offsetof(struct sh_gen_sock_state, wh);
	return audit ? sizeof(struct sh_gen_opt_state) :
		       offsetof(struct sh_gen_opt_state, wh);
}

#define NONE SIZE_MAX
/* Room for any kind's .rodata. */
#define GEN_RODATA_MAX                            \
	(sizeof(struct sock_create_bpf__rodata) + \
	 sizeof(struct setsockopt_bpf__rodata) +  \
	 sizeof(struct getsockopt_bpf__rodata))

/* Each kind's BPF object, and where the generic program's settings go in
 * its .rodata (the skeletons' layout). */
static const struct gen_object {
	const char *name; /* the skeleton's: its maps are named after it */
	size_t rodata_size, hash, audit, uses, page;
} gen_objects[SH_PROG_KINDS] = {
	[SH_PROG_SOCK] = { "sock_create_bpf",
			   sizeof(struct sock_create_bpf__rodata),
			   offsetof(struct sock_create_bpf__rodata,
				    policy_hash),
			   offsetof(struct sock_create_bpf__rodata, audit_mode),
			   NONE, NONE },
	[SH_PROG_SET] = { "setsockopt_bpf",
			  sizeof(struct setsockopt_bpf__rodata),
			  offsetof(struct setsockopt_bpf__rodata, policy_hash),
			  offsetof(struct setsockopt_bpf__rodata, audit_mode),
			  offsetof(struct setsockopt_bpf__rodata, rule_uses),
			  offsetof(struct setsockopt_bpf__rodata, page_size) },
	[SH_PROG_GET] = { "getsockopt_bpf",
			  sizeof(struct getsockopt_bpf__rodata),
			  offsetof(struct getsockopt_bpf__rodata, policy_hash),
			  offsetof(struct getsockopt_bpf__rodata, audit_mode),
			  offsetof(struct getsockopt_bpf__rodata, rule_uses),
			  offsetof(struct getsockopt_bpf__rodata, page_size) },
};

/* The specialised copies' maps: a generic load creates none of them. */
static const char *const specialised_maps[] = { "rules", "would_have",
						"footprint", "fp_overflow",
						"fp_domains" };

static void put32(void *ro, size_t off, __u32 v)
{
	if (off != NONE)
		memcpy((char *)ro + off, &v, sizeof(v));
}

/*
 * What a generic program's .rodata holds, byte for byte (len bytes of
 * it): its hash and mode; every rule use (the verifier keeps every path);
 * the running kernel's page. No policy: that comes from the maps.
 */
static void generic_rodata(enum sh_prog_kind kind, bool bypass, bool audit,
			   void *ro, size_t len)
{
	const struct gen_object *o = &gen_objects[kind];
	uint64_t hash = generic_hash(kind, bypass, audit);
	char full[GEN_RODATA_MAX] = { 0 };

	memcpy(full + o->hash, &hash, sizeof(hash));
	put32(full, o->audit, audit);
	put32(full, o->uses, ~0u);
	put32(full, o->page, (__u32)sysconf(_SC_PAGESIZE));
	memcpy(ro, full, len < o->rodata_size ? len : o->rodata_size);
}

static int set_rodata(struct bpf_object *obj, enum sh_prog_kind kind,
		      bool bypass, bool audit)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, ".rodata");
	_cleanup_free_ char *ro = NULL;
	size_t len = 0;

	if (!map || !bpf_map__initial_value(map, &len) || !len)
		return -ENOENT;
	ro = calloc(1, len);
	if (!ro)
		return -ENOMEM;
	generic_rodata(kind, bypass, audit, ro, len);
	return bpf_map__set_initial_value(map, ro, len);
}

/* Only the generic program of this kind and mode, with its own maps. */
static int generic_only(struct bpf_object *obj, enum sh_prog_kind kind,
			bool bypass, bool audit)
{
	const char *want = generic_prog_name(kind, bypass);
	struct bpf_program *prog;
	struct bpf_map *state;
	int r;

	bpf_object__for_each_program(prog, obj) bpf_program__set_autoload(
		prog, !strcmp(bpf_program__name(prog), want));
	for (size_t i = 0; i < ARRAY_SIZE(specialised_maps); i++) {
		struct bpf_map *m =
			bpf_object__find_map_by_name(obj, specialised_maps[i]);

		if (!m)
			continue;
		r = bpf_map__set_autocreate(m, /* autocreate= */ false);
		if (r)
			return r;
	}
	state = bpf_object__find_map_by_name(obj, "gen_state");
	if (!state)
		return -ENOENT;
	r = bpf_map__set_value_size(state, state_size(kind, audit));
	if (r)
		return r;
	return set_rodata(obj, kind, bypass, audit);
}

int generic_load(enum sh_prog_kind kind, bool bypass, bool audit)
{
	const struct gen_object *o = &gen_objects[kind];
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o->name);
	struct bpf_program *prog;
	struct bpf_object *obj;
	size_t sz;
	const void *elf = objects_elf(kind, &sz);
	int r, fd;

	obj = bpf_object__open_mem(elf, sz, &opts);
	if (!obj)
		return -errno;
	r = generic_only(obj, kind, bypass, audit);
	if (r)
		goto out;
	r = bpf_object__load(obj);
	if (r)
		goto out;
	prog = bpf_object__find_program_by_name(obj, generic_prog_name(kind,
								       bypass));
	if (!prog) {
		r = -ENOENT;
		goto out;
	}
	/* The program outlives the object: a copy of its fd. */
	fd = fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 3);
	r = fd < 0 ? -errno : fd;
out:
	bpf_object__close(obj);
	return r;
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

static int open_maps(enum sh_prog_kind kind, bool audit, struct generic_prog *g)
{
	const struct map_want state = { "gen_state",
					BPF_MAP_TYPE_CGROUP_STORAGE,
					sizeof(struct bpf_cgroup_storage_key),
					state_size(kind, audit) };
	const struct map_want rules = { "gen_rules", BPF_MAP_TYPE_HASH,
					sizeof(struct sh_gen_rule_key),
					sizeof(struct sh_opt_rule) };

	g->state_fd = kind_prog_find_map(g->fd, NULL, map_is, &state);
	if (g->state_fd < 0)
		return g->state_fd;
	if (kind == SH_PROG_SOCK)
		return 0;
	g->rules_fd = kind_prog_find_map(g->fd, NULL, map_is, &rules);
	return g->rules_fd < 0 ? g->rules_fd : 0;
}

/* The pinned program g->fd is the generic one this hook loads, with its
 * maps: fills g's id and map fds. */
static int check_pinned(struct generic_prog *g, enum sh_prog_kind kind,
			bool audit, const struct progcheck_want *want,
			char *name, struct sh_error *err)
{
	int r = progcheck_prog(g->fd, want, err);

	if (r)
		return r;
	r = kind_prog_info(g->fd, &g->id, name);
	if (r)
		return r;
	if (open_maps(kind, audit, g))
		return error_set(
			err, -ESTALE,
			"its state or rules map is not the generic one");
	return 0;
}

int generic_find(int pins, enum sh_prog_kind kind, bool bypass, bool audit,
		 struct generic_prog *g)
{
	uint64_t hash = generic_hash(kind, bypass, audit);
	char name[SH_BPF_NAME_MAX], pin[SH_PIN_NAME_MAX];
	char ro[GEN_RODATA_MAX];
	/* No rules map to compare: the generic one is written per cgroup. */
	const struct progcheck_want want = {
		.kind = kind,
		.prog_name = generic_prog_name(kind, bypass),
		.rodata = ro,
		.rodata_size = gen_objects[kind].rodata_size,
	};
	struct sh_error err = { 0 };
	int r;

	generic_init(g);
	generic_rodata(kind, bypass, audit, ro, sizeof(ro));
	if (pins < 0)
		return -ENOENT;
	g->fd = pin_get(pins, kind_get(kind)->name, hash);
	if (g->fd < 0) {
		g->fd = -1;
		return -ENOENT;
	}
	r = check_pinned(g, kind, audit, &want, name, &err);
	if (r) {
		pin_name(pin, sizeof(pin), kind_get(kind)->name, hash);
		log_warn(
			"pin %s/%s is not the generic %s program this hook loads: %s; loading the policy's programs instead",
			pin_dir(), pin, kind_get(kind)->name,
			err.msg[0] ? err.msg : strerror(-r));
		generic_close(g);
		return -ENOENT;
	}
	return 0;
}

static const struct sh_policy gen_none = { .name = "" };

/* The container's rules, under its attachment's rules id. */
static int put_rules(const struct generic_prog *g, enum sh_prog_kind kind,
		     const struct sh_effective *eff, struct sh_error *err)
{
	const struct sh_policy *p = eff->policy ? eff->policy : &gen_none;
	const struct sh_rule_entry *rules = kind == SH_PROG_SET ? p->set_rules :
								  p->get_rules;
	size_t n = kind == SH_PROG_SET ? p->nr_set : p->nr_get;

	for (size_t i = 0; i < n; i++) {
		struct sh_gen_rule_key key = { .rules = g->rules_id,
					       .level = rules[i].key.level,
					       .optname =
						       rules[i].key.optname };
		struct sh_opt_rule rule = rules[i].rule;

		if (eff->audit) /* audit mode: as a specialised copy numbers */
			rule.audit_slot = sh_wh_slot(i);
		if (bpf_map_update_elem(g->rules_fd, &key, &rule, BPF_ANY))
			return error_errno(
				err, -errno,
				"cannot give the generic %s program the rules of this container",
				kind_get(kind)->name);
	}
	return 0;
}

/* The hint of the state: a bit for each rule's (level, option). */
static __u64 opt_hint(enum sh_prog_kind kind, const struct sh_effective *eff)
{
	const struct sh_policy *p = eff->policy ? eff->policy : &gen_none;
	const struct sh_rule_entry *rules = kind == SH_PROG_SET ? p->set_rules :
								  p->get_rules;
	size_t n = kind == SH_PROG_SET ? p->nr_set : p->nr_get;
	__u64 hint = 0;

	for (size_t i = 0; i < n; i++)
		hint |= sh_gen_hint_bit(rules[i].key.level,
					rules[i].key.optname);
	return hint;
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
	if (!p)
		return;
	st->nr_deny = p->nr_deny;
	memcpy(st->deny, p->deny, sizeof(st->deny[0]) * p->nr_deny);
	st->set_mark = p->has_mark;
	st->mark = p->mark;
	st->set_priority = p->has_priority;
	st->priority = p->priority;
}

/* The attachment's state, ready or not. BPF_EXIST: only a state the
 * cgroup kept from an earlier attachment of this program (-ENOENT when
 * there is none). */
static int write_state(const struct generic_prog *g, enum sh_prog_kind kind,
		       const struct sh_effective *eff, uint64_t cg_id,
		       bool ready, __u64 flags)
{
	struct bpf_cgroup_storage_key key;
	union {
		struct sh_gen_sock_state sock;
		struct sh_gen_opt_state opt;
	} st;

	state_key(&key, kind, cg_id);
	if (kind == SH_PROG_SOCK) {
		sock_state(eff, &st.sock);
		st.sock.flags = ready ? SH_GEN_READY : 0;
	} else {
		memset(&st.opt, 0, sizeof(st.opt));
		st.opt.flags = ready ? SH_GEN_READY : 0;
		st.opt.default_deny = kind == SH_PROG_SET && eff->policy &&
				      eff->policy->default_deny;
		st.opt.rules = g->rules_id;
		st.opt.hint = opt_hint(kind, eff);
	}
	return bpf_map_update_elem(g->state_fd, &key, &st, flags) ? -errno : 0;
}

int generic_new_rules(struct generic_prog *g)
{
	return getrandom(&g->rules_id, sizeof(g->rules_id), 0) ==
			       sizeof(g->rules_id) ?
		       0 :
		       -errno;
}

int generic_prepare(const struct generic_prog *g, enum sh_prog_kind kind,
		    const struct sh_effective *eff, uint64_t cg_id,
		    struct sh_error *err)
{
	/* A state kept from an earlier attachment: refused, until ours is
	 * written after the attach. */
	int r = write_state(g, kind, eff, cg_id, /* ready= */ false, BPF_EXIST);

	if (r && r != -ENOENT)
		return error_errno(
			err, r, "cannot write the generic %s program's state",
			kind_get(kind)->name);
	return 0;
}

int generic_arm(const struct generic_prog *g, enum sh_prog_kind kind,
		const struct sh_effective *eff, uint64_t cg_id,
		struct sh_error *err)
{
	/* The rules id in a state that is not ready yet, then the rules, then
	 * ready: gc never drops the rules of an id a state names. */
	int r = write_state(g, kind, eff, cg_id, /* ready= */ false, BPF_ANY);

	if (r)
		goto fail;
	if (kind != SH_PROG_SOCK && put_rules(g, kind, eff, err))
		return err->code;
	r = write_state(g, kind, eff, cg_id, /* ready= */ true, BPF_ANY);
	if (r)
		goto fail;
	return 0;
fail:
	return error_errno(err, r,
			   "cannot write the generic %s program's state",
			   kind_get(kind)->name);
}

/* The rules ids the states of one program name (its attachments). */
struct live_ids {
	__u64 *id;
	size_t nr, cap;
};

static int add_live(struct live_ids *live, __u64 id)
{
	if (live->nr == live->cap) {
		size_t cap = live->cap ? 2 * live->cap : 64;
		__u64 *more = reallocarray(live->id, cap, sizeof(*more));

		if (!more)
			return -ENOMEM;
		live->id = more;
		live->cap = cap;
	}
	live->id[live->nr++] = id;
	return 0;
}

static bool is_live(const struct live_ids *live, __u64 id)
{
	for (size_t i = 0; i < live->nr; i++)
		if (live->id[i] == id)
			return true;
	return false;
}

static int read_live(const struct generic_prog *g, struct live_ids *live)
{
	struct bpf_cgroup_storage_key key, *prev = NULL;
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	_cleanup_free_ struct sh_gen_opt_state *st = NULL;

	if (bpf_obj_get_info_by_fd(g->state_fd, &info, &len))
		return -errno;
	st = calloc(1, info.value_size > sizeof(*st) ? info.value_size :
						       sizeof(*st));
	if (!st)
		return -ENOMEM;
	while (bpf_map_get_next_key(g->state_fd, prev, &key) == 0) {
		if (bpf_map_lookup_elem(g->state_fd, &key, st) == 0 &&
		    add_live(live, st->rules))
			return -ENOMEM;
		prev = &key;
	}
	/* The walk stops early when the key it stood on went (a cgroup
	 * freed meanwhile): the ids after it are not known then. */
	if (prev && bpf_map_lookup_elem(g->state_fd, prev, st))
		return -EAGAIN;
	return 0;
}

/*
 * In this order, so that no rule of a live attachment goes: the rules'
 * ids first, then the ids the states name (a prestart writes its id into
 * the state before its rules), then the rules whose id none names.
 */
static void sweep_program(const struct generic_prog *g)
{
	struct live_ids seen = { 0 }, live = { 0 };
	struct sh_gen_rule_key cur, next;
	bool have = false;

	while (bpf_map_get_next_key(g->rules_fd, have ? &cur : NULL, &next) ==
	       0) {
		if (!is_live(&seen, next.rules) && add_live(&seen, next.rules))
			goto out;
		cur = next;
		have = true;
	}
	if (read_live(g, &live))
		goto out;
	have = false;
	while (bpf_map_get_next_key(g->rules_fd, have ? &cur : NULL, &next) ==
	       0) {
		/* A rule written after the first pass is not one to drop;
		 * after a delete, the key after cur is the one after next. */
		if (is_live(&seen, next.rules) && !is_live(&live, next.rules) &&
		    bpf_map_delete_elem(g->rules_fd, &next) == 0)
			continue;
		cur = next;
		have = true;
	}
out:
	free(seen.id);
	free(live.id);
}

void generic_sweep(int pins)
{
	for (int mode = 0; mode < 2; mode++) {
		for (int k = SH_PROG_SET; k < SH_PROG_KINDS; k++) {
			struct generic_prog g;

			if (generic_find(pins, k, /* bypass= */ false, mode,
					 &g))
				continue;
			sweep_program(&g);
			generic_close(&g);
		}
	}
}
