// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the per-CPU counters back: each program has a "counters" cgroup
 * storage map, found through the program's map ids, holding one entry per
 * attachment; status needs nothing but the attachment's program ids.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/names.h"
#include "config/render.h"
#include "generic_map.h"
#include "lib/kind.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "observe/counters.h"

const char *const counters_names[SH_CNT_MAX] = {
	[SH_CNT_SOCK_CREATED] = "sockets_created",
	[SH_CNT_SOCK_BYPASSED] = "sockets_bypassed",
	[SH_CNT_SOCK_DENIED] = "socket_creations_denied",
	[SH_CNT_SET_DENIED] = "setsockopt_denied",
	[SH_CNT_SET_CLAMPED] = "setsockopt_clamped",
	[SH_CNT_SET_FORCED] = "setsockopt_forced",
	[SH_CNT_GET_DENIED] = "getsockopt_denied",
	[SH_CNT_GET_FORCED] = "getsockopt_forced",
};

/* The container's own storage: key (cgroup id, attach type). */
static int add_map(int map_fd, uint64_t cg_id, enum bpf_attach_type type,
		   struct sh_counters *ret)
{
	struct bpf_cgroup_storage_key key;
	int ncpus = libbpf_num_possible_cpus();
	_cleanup_free_ struct sh_counter_values *vals = NULL;

	/* The key has tail padding, and all 16 bytes go to the kernel. */
	memset(&key, 0, sizeof(key));
	key.cgroup_inode_id = cg_id;
	key.attach_type = type;
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &key, vals))
		return -errno;
	for (int cpu = 0; cpu < ncpus; cpu++)
		for (int i = 0; i < SH_CNT_MAX; i++)
			ret->v[i] += vals[cpu].v[i];
	return 0;
}

static bool is_counters_map(const struct bpf_map_info *info, const void *data)
{
	(void)data;
	return !strcmp(info->name, "counters") &&
	       info->type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE &&
	       info->value_size == sizeof(struct sh_counter_values);
}

static int add_prog(const struct sh_prog *prog, uint64_t cg_id,
		    struct sh_counters *ret)
{
	_cleanup_close_ int fd = bpf_prog_get_fd_by_id(prog->id);
	_cleanup_close_ int map_fd = -1;

	if (fd < 0)
		return -errno;
	map_fd = kind_prog_find_map(fd, NULL, is_counters_map, NULL);
	if (map_fd < 0)
		return map_fd;
	return add_map(map_fd, cg_id, prog->type, ret);
}

int counters_read(const struct sh_progs *progs, uint64_t cg_id,
		  struct sh_counters *ret)
{
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	for (int i = 0; i < progs->nr; i++) {
		int e = add_prog(&progs->prog[i], cg_id, ret);

		r = r ? r : e;
	}
	return r;
}

/*
 * Audit mode's would-have counters: each program of an audit mode copy has
 * a "would_have" cgroup storage (one value per attachment, so per
 * container) that says what the policy would have done; read through the
 * attachment's program ids, like counters.c.
 */

/*
 * A specialised copy's would_have map, or a generic program's state in
 * audit mode, whose value ends with the same counters (generic_map.h).
 * Enforce mode values are shorter: nothing to read.
 */
static bool is_would_have_map(const struct bpf_map_info *info, const void *data)
{
	(void)data;
	if (info->type != BPF_MAP_TYPE_CGROUP_STORAGE)
		return false;
	if (!strcmp(info->name, "would_have"))
		return info->value_size == sizeof(struct sh_would_have);
	return !strcmp(info->name, "gen_state") &&
	       (info->value_size == sizeof(struct sh_gen_sock_state) ||
		info->value_size == sizeof(struct sh_gen_opt_state));
}

/* The counters of one attachment: the tail of its value. */
static int read_would_have(int map_fd, const struct sh_prog *prog,
			   uint64_t cg_id, struct sh_would_have *w)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	struct bpf_cgroup_storage_key key;
	_cleanup_free_ char *value = NULL;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	value = malloc(info.value_size);
	if (!value)
		return -ENOMEM;
	memset(&key, 0, sizeof(key));
	key.cgroup_inode_id = cg_id;
	key.attach_type = prog->type;
	if (bpf_map_lookup_elem(map_fd, &key, value))
		return -errno;
	memcpy(w, value + info.value_size - sizeof(*w), sizeof(*w));
	return 0;
}

static struct audit_mode_entry *next(struct audit_mode_counts *ret,
				     enum sh_prog_kind kind, uint64_t n)
{
	struct audit_mode_entry *e;

	if (!n || ret->nr >= AUDIT_MODE_MAX)
		return NULL;
	e = &ret->e[ret->nr++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->n = n;
	return e;
}

static void add_rules(const struct sh_would_have *w, enum sh_prog_kind kind,
		      struct audit_mode_counts *ret)
{
	struct audit_mode_entry *e;

	for (int i = 0; i < SH_WH_RULES; i++) {
		const struct sh_wh_entry *r = &w->rule[i];

		e = next(ret, kind, r->n);
		if (!e)
			continue;
		e->action = render_action_name(r->action);
		e->socket = kind == SH_PROG_SOCK && r->action == SH_ACTION_DENY;
		e->level = r->level;
		e->optname = r->optname;
		e->extra = r->extra;
	}
	e = next(ret, kind, w->rule_overflow);
	if (e) {
		e->action = "any";
		e->overflow = true;
	}
}

static void add_misses(const struct sh_would_have *w, enum sh_prog_kind kind,
		       struct audit_mode_counts *ret)
{
	struct audit_mode_entry *e;

	for (int i = 0; i < SH_WH_MISSES; i++) {
		const struct sh_wh_miss *m = &w->miss[i];

		e = next(ret, kind, m->key ? m->n : 0);
		if (!e)
			continue;
		e->action = "deny";
		e->miss = true;
		e->level = (int)((m->key >> 32) - 1);
		e->optname = (int)(__u32)m->key;
	}
	e = next(ret, kind, w->miss_overflow);
	if (e) {
		e->action = "deny";
		e->miss = e->overflow = true;
	}
}

static int add_audit_prog(const struct sh_prog *prog, uint64_t cg_id,
			  struct audit_mode_counts *ret)
{
	const struct kind_info *k = kind_by_type(prog->type);
	_cleanup_close_ int fd = bpf_prog_get_fd_by_id(prog->id);
	_cleanup_close_ int map_fd = -1;
	struct sh_would_have w;
	int r;

	if (fd < 0)
		return -errno;
	if (!k)
		return 0;
	map_fd = kind_prog_find_map(fd, NULL, is_would_have_map, NULL);
	if (map_fd < 0)
		return map_fd == -ENOENT ? 0 : map_fd;
	r = read_would_have(map_fd, prog, cg_id, &w);
	if (r)
		return r;
	add_rules(&w, k->kind, ret);
	add_misses(&w, k->kind, ret);
	return 0;
}

int counters_audit_read(const struct sh_progs *progs, uint64_t cg_id,
			struct audit_mode_counts *ret)
{
	int r = 0;

	ret->nr = 0;
	for (int i = 0; i < progs->nr; i++) {
		int e = add_audit_prog(&progs->prog[i], cg_id, ret);

		r = r ? r : e;
	}
	return r;
}

/* A would-have slot keeps SH_ANY for a field its rule leaves open. */
static void add_name(struct render_buf *t, const char *name, int v)
{
	render_named(t, v == SH_ANY ? "any" : name, v);
}

void counters_audit_level(const struct audit_mode_entry *e, char *buf,
			  size_t len)
{
	struct render_buf t;

	render_buf_init(&t, buf, len);
	if (e->overflow)
		return;
	if (e->socket)
		render_add(&t, "socket");
	else
		render_named(&t, names_level_name(e->level), e->level);
}

void counters_audit_option(const struct audit_mode_entry *e, char *buf,
			   size_t len)
{
	const struct sh_option_name *opt;
	struct render_buf t;

	render_buf_init(&t, buf, len);
	if (e->overflow) {
		render_add(&t, "other");
		return;
	}
	if (e->socket) {
		add_name(&t, names_family_name(e->level), e->level);
		add_name(&t, names_type_name(e->optname), e->optname);
		add_name(&t, names_protocol_name(e->extra), e->extra);
		return;
	}
	opt = names_option_by_value(e->level, e->optname);
	add_name(&t, opt ? opt->name : NULL, e->optname);
}

void counters_audit_text(const struct audit_mode_entry *e, char *buf,
			 size_t len)
{
	char level[32], option[96];

	counters_audit_level(e, level, sizeof(level));
	counters_audit_option(e, option, sizeof(option));
	if (e->overflow)
		snprintf(buf, len, "would %s %s (%s)", e->action,
			 e->miss ? "other options not allowed" :
				   "by other rules",
			 kind_get(e->kind)->name);
	else
		snprintf(buf, len, "would %s %s %s%s (%s)", e->action, level,
			 option, e->miss ? " (not allowed)" : "",
			 kind_get(e->kind)->name);
}

struct json_object *counters_audit_json(const struct audit_mode_counts *w)
{
	struct json_object *arr = json_object_new_array();
	char level[32], option[96];

	for (int i = 0; i < w->nr; i++) {
		const struct audit_mode_entry *e = &w->e[i];
		struct json_object *o = json_object_new_object();

		counters_audit_level(e, level, sizeof(level));
		counters_audit_option(e, option, sizeof(option));
		jsonw_str(o, "program", kind_get(e->kind)->name);
		jsonw_str(o, "action", e->action);
		jsonw_str(o, "level", level);
		jsonw_str(o, "option", option);
		jsonw_bool(o, "not_allowed", e->miss);
		jsonw_uint(o, "count", e->n);
		json_object_array_add(arr, o);
	}
	return arr;
}

uint64_t counters_audit_total(const struct audit_mode_counts *w)
{
	uint64_t n = 0;

	for (int i = 0; i < w->nr; i++)
		n += w->e[i].n;
	return n;
}
