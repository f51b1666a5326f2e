// SPDX-License-Identifier: GPL-2.0-only
/*
 * Record mode's footprint, in three parts.
 *
 * The tables: a recording container's programs are its own copies
 * (load.c), and their footprint tables are pinned on the BPF filesystem
 * at prestart, named by the container's id and init start time. The
 * runtime may remove the cgroup (and with it the programs) before
 * poststop runs, or never run poststop: the pins keep the tables until
 * poststop, gc or the reaper writes the proposed policy and removes them
 * (teardown.c).
 *
 * The policy: a footprint becomes a policy in the operator config's own
 * schema. It never proposes less than the container ran under:
 *  - every deny and force of the running policy (setsockopt), its
 *    getsockopt rules, socket denies and stamps (mark, priority) and its
 *    bypass_prot_mem are kept as the config had them;
 *  - allow-list mode ("default": "deny"); per setsockopt option the policy
 *    let through, a clamp to the values seen (within the running clamp)
 *    for an int quantity, else an allow;
 *  - a call the policy refused is never allowed;
 *  - SOCK_RAW and AF_INET6 are denied when the container never created
 *    one (and the socket table neither overflowed nor went unread).
 * What no config can express is dropped (a negative level or option), and
 * the kernel's aliases are folded (SOL_UDPLITE is SOL_UDP's handler, the
 * *_NEW options are the y2038 twins of the old ones), so that the config
 * parser, which the caller runs on the result, takes it.
 *
 * The JSON and text: in `record`'s output and in each recording file's
 * provenance, from which `record merge` reads it back. Names where the
 * hook knows one, numbers otherwise, as the operator config has them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "config/config.h"
#include "config/names.h"
#include "config/render.h"
#include "getsockopt.skel.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "prog/pin.h"
#include "prog/progcheck.h"
#include "prog/share.h"
#include "record/footprint.h"
#include "setsockopt.skel.h"
#include "sock_create.skel.h"

#define FP_PIN_PATH_MAX PATH_MAX

void footprint_fill(struct sh_attachment *att, const struct sh_effective *eff,
		    const struct sh_config *cfg)
{
	if (!eff->record[0])
		return;
	snprintf(att->footprint, sizeof(att->footprint), "%s", eff->record);
	snprintf(att->footprint_dir, sizeof(att->footprint_dir), "%s",
		 cfg->record_dir);
}

void footprint_recording_id(const struct sh_attachment *att, char buf[17])
{
	uint64_t h = share_hash(0, att->id, strlen(att->id));

	h = share_hash(h, &att->pid_start, sizeof(att->pid_start));
	snprintf(buf, 17, "%016" PRIx64, h);
}

/* "<recording id>-<kind>[-over]" */
static void pin_path(const struct sh_attachment *att, int kind, bool over,
		     char *buf, size_t len)
{
	char id[17];

	footprint_recording_id(att, id);
	snprintf(buf, len, "%s%s/%s-%s%s", pin_dir(), SH_FOOTPRINT_PIN_SUFFIX,
		 id, kind_get(kind)->name, over ? "-over" : "");
}

/* Ours alone, on a BPF filesystem: whatever is read there becomes a
 * policy. */
static int pin_dir_ready(struct sh_error *err)
{
	_cleanup_close_ int fd = -1;
	char dir[FP_PIN_PATH_MAX];
	struct statfs fs;
	struct stat st;
	int r;

	snprintf(dir, sizeof(dir), "%s%s", pin_dir(), SH_FOOTPRINT_PIN_SUFFIX);
	r = pin_bpffs_ensure("footprint pin directory", dir, err);
	if (r)
		return r;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return error_errno(err, -errno, "cannot create %s", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_errno(err, -errno, "cannot open %s", dir);
	if (fstatfs(fd, &fs) || fstat(fd, &st))
		return error_errno(err, -errno, "cannot stat %s", dir);
	if (fs.f_type != BPF_FS_MAGIC || st.st_uid != 0 || (st.st_mode & 0022))
		return error_set(
			err, -EPERM,
			"%s is not a root-only directory on a BPF filesystem",
			dir);
	return 0;
}

static int pin_one(int map_fd, const char *path, struct sh_error *err)
{
	unlink(path); /* a stale pin of the same name: replaced */
	if (bpf_obj_pin(map_fd, path))
		return error_errno(err, -errno, "cannot pin %s", path);
	return 0;
}

void footprint_unpin(const struct sh_attachment *att)
{
	char path[FP_PIN_PATH_MAX];

	if (!att->footprint[0])
		return;
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		pin_path(att, k, /* over= */ false, path, sizeof(path));
		unlink(path);
		pin_path(att, k, /* over= */ true, path, sizeof(path));
		unlink(path);
	}
}

static void kind_maps(const struct sh_loaded *l, int k, struct bpf_map **map,
		      struct bpf_map **over)
{
	*map = *over = NULL;
	if (k == SH_PROG_SOCK && l->sock) {
		*map = l->sock->maps.footprint;
		*over = l->sock->maps.fp_overflow;
	} else if (k == SH_PROG_SET && l->set) {
		*map = l->set->maps.footprint;
		*over = l->set->maps.fp_overflow;
	} else if (k == SH_PROG_GET && l->get) {
		*map = l->get->maps.footprint;
		*over = l->get->maps.fp_overflow;
	}
}

int footprint_pin(const struct sh_loaded *l, const struct sh_attachment *att,
		  struct sh_error *err)
{
	char path[FP_PIN_PATH_MAX];
	struct bpf_map *map, *over;
	int r;

	if (!att->footprint[0])
		return 0;
	r = pin_dir_ready(err);
	if (r)
		goto unpin;
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		kind_maps(l, k, &map, &over);
		if (!map)
			continue;
		pin_path(att, k, /* over= */ false, path, sizeof(path));
		r = pin_one(bpf_map__fd(map), path, err);
		if (r)
			goto unpin;
		pin_path(att, k, /* over= */ true, path, sizeof(path));
		r = pin_one(bpf_map__fd(over), path, err);
		if (r)
			goto unpin;
	}
	return 0;
unpin:
	footprint_unpin(att);
	return r;
}

/* The table's 8-byte key as an entry's key: the kind is the table's. */
static struct sh_fp_key entry_key(int k, const struct sh_fp_map_key *mk)
{
	if (k == SH_PROG_SOCK)
		return (struct sh_fp_key){ SH_FP_SOCK, mk->a,
					   (__s32)((__u32)mk->b >> 16),
					   (__s32)((__u32)mk->b & 0xffff) };
	return (struct sh_fp_key){ k == SH_PROG_SET ? SH_FP_SET : SH_FP_GET,
				   mk->a, mk->b, 0 };
}

static int read_table(int fd, int k, struct footprint *fp)
{
	struct sh_fp_map_key key, next;
	struct footprint_entry e;
	void *prev = NULL;
	int r;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &e.v))
			continue; /* removed meanwhile: nothing removes them */
		e.key = entry_key(k, &key);
		r = footprint_policy_add(fp, &e);
		if (r)
			return r;
	}
	return errno == ENOENT ? 0 : -errno;
}

/* A pinned table is read only once it has the shape of ours: a map of
 * another shape under the name would be read past our buffers. */
static int check_pinned(int fd, const struct progcheck_map *shape,
			const char *path)
{
	struct sh_error err = { 0 };

	if (!progcheck_map(fd, shape, &err))
		return 0;
	log_warn("pinned footprint table %s is not one of ours (%s): not read",
		 path, err.msg);
	return -ESTALE;
}

static int read_kind(const struct sh_attachment *att, int k,
		     struct footprint *fp)
{
	static const struct progcheck_map table = {
		BPF_MAP_TYPE_HASH, sizeof(struct sh_fp_map_key),
		sizeof(struct sh_fp_value), SH_FP_MAX, false
	};
	static const struct progcheck_map overflow = {
		BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(__u64), 1, false
	};
	char path[FP_PIN_PATH_MAX];
	_cleanup_close_ int fd = -1, over = -1;
	__u32 zero = 0;
	int r;

	pin_path(att, k, /* over= */ false, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = check_pinned(fd, &table, path);
	if (r)
		return r;
	pin_path(att, k, /* over= */ true, path, sizeof(path));
	over = bpf_obj_get(path);
	if (over < 0)
		return -errno;
	r = check_pinned(over, &overflow, path);
	if (r)
		return r;
	if (bpf_map_lookup_elem(over, &zero, &fp->overflow[k]))
		return -errno;
	r = read_table(fd, k, fp);
	fp->kind_read[k] = !r;
	return r;
}

int footprint_read(const struct sh_attachment *att, struct footprint *fp,
		   struct sh_error *err)
{
	bool any = false;
	int r;

	memset(fp, 0, sizeof(*fp));
	if (!att->footprint[0])
		return error_set(err, -ENOENT,
				 "container %s is not being recorded", att->id);
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		r = read_kind(att, k, fp);
		if (r)
			return error_errno(err, r,
					   "cannot read the %s footprint of %s",
					   kind_get(k)->name, att->id);
		any |= fp->kind_read[k];
	}
	if (!any)
		return error_set(err, -ENOENT,
				 "no footprint tables of %s under %s%s",
				 att->id, pin_dir(), SH_FOOTPRINT_PIN_SUFFIX);
	footprint_policy_sort(fp);
	return 0;
}

/* The policy. */

#define FP_AF_INET6 10
#define FP_SOCK_RAW 3
#define FP_SOL_SOCKET 1
#define FP_SOL_UDP 17

/* What the proposal is made of. */
struct proposal {
	const struct footprint *fp;
	struct json_object *running; /* the running policy's JSON, or NULL */
	struct sh_config cfg; /* running, parsed */
	const struct sh_policy *p; /* in cfg, or NULL */
	struct footprint_entry *set; /* setsockopt entries, folded */
	size_t nr_set;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct sh_fp_key *x = &((const struct footprint_entry *)a)->key;
	const struct sh_fp_key *y = &((const struct footprint_entry *)b)->key;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return x->c < y->c ? -1 : x->c > y->c;
}

void footprint_policy_sort(struct footprint *fp)
{
	qsort(fp->e, fp->nr, sizeof(fp->e[0]), entry_cmp);
}

void footprint_policy_merge_value(struct sh_fp_value *into,
				  const struct sh_fp_value *v)
{
	into->count += v->count;
	into->refused = into->refused > ~0U - v->refused ?
				~0U :
				into->refused + v->refused;
	if (!v->has_value)
		return;
	if (!into->has_value || v->min < into->min)
		into->min = v->min;
	if (!into->has_value || v->max > into->max)
		into->max = v->max;
	into->has_value = v->has_value;
}

static const struct sh_option_name *entry_option(const struct sh_fp_key *k)
{
	return names_option_by_value(
		k->a == SOL_UDPLITE_LEVEL ? FP_SOL_UDP : k->a, k->b);
}

/* The kernel's value of every int in [min, max], as a range of the
 * domain's type that holds them all. */
static void raw_to_kept(enum sh_domain domain, long long special,
			long long *min, long long *max)
{
	long long lo = *min, hi = *max;

	switch (domain) {
	case SH_DOM_U32: /* (u32)v: the negative ints are the top half */
		if (hi < 0 || lo >= 0) {
			lo = (uint32_t)lo;
			hi = (uint32_t)hi;
		} else {
			lo = 0;
			hi = UINT32_MAX;
		}
		break;
	case SH_DOM_U8: /* the low byte: in order unless it wraps */
		if ((unsigned long long)hi - (unsigned long long)lo >=
			    UINT8_MAX ||
		    (lo & 0xff) > (hi & 0xff)) {
			lo = 0;
			hi = UINT8_MAX;
		} else {
			lo &= 0xff;
			hi &= 0xff;
		}
		break;
	case SH_DOM_BOOL: { /* 0, or 1 for any other int */
		bool zero = lo <= 0 && hi >= 0, other = lo != 0 || hi != 0;

		lo = !zero;
		hi = other;
		break;
	}
	case SH_DOM_NEG_TO: /* every negative int is special */
		if (hi < 0)
			lo = hi = special;
		else if (lo < 0) {
			lo = special < 0 ? special : 0;
			hi = special > hi ? special : hi;
		}
		break;
	case SH_DOM_M1_TO: /* -1 is special */
		if (lo == -1 && hi == -1) {
			lo = hi = special;
		} else if (lo <= -1 && hi >= -1) {
			lo = lo == -1 ? 0 : lo;
			hi = hi == -1 ? -2 : hi;
			lo = special < lo ? special : lo;
			hi = special > hi ? special : hi;
		}
		break;
	case SH_DOM_PACING: /* a 4-byte rate is a u32, ~0U unlimited */
		if (lo >= 0)
			break;
		lo = hi >= 0 ? 0 : (uint32_t)lo;
		hi = hi >= -1 ? INT64_MAX : (uint32_t)hi;
		break;
	default:
		break;
	}
	*min = lo;
	*max = hi;
}

void footprint_policy_typed(struct footprint_entry *e)
{
	const struct sh_option_name *opt = entry_option(&e->key);
	struct sh_fp_value *v = &e->v;
	long long lo = v->min, hi = v->max, dmin, dmax;

	if (e->key.kind != SH_FP_SET || !v->has_value)
		return;
	if (lo > hi) { /* two CPUs' first notes, raced: both values seen */
		lo = v->max;
		hi = v->min;
	}
	if (opt && opt->kind == OPT_INT) {
		if (v->has_value == SH_FP_RAW)
			raw_to_kept(opt->domain, opt->special, &lo, &hi);
		names_option_domain_range(opt->domain, &dmin, &dmax);
		lo = lo < dmin ? dmin : lo > dmax ? dmax : lo;
		hi = hi < dmin ? dmin : hi > dmax ? dmax : hi;
		if (lo > hi) { /* not an int's range: all the type holds */
			lo = dmin;
			hi = dmax;
		}
	}
	v->min = lo;
	v->max = hi;
	v->has_value = SH_FP_KEPT;
}

int footprint_policy_add(struct footprint *fp, const struct footprint_entry *e)
{
	struct footprint_entry typed = *e;

	footprint_policy_typed(&typed);
	for (size_t i = 0; i < fp->nr; i++) {
		if (entry_cmp(&fp->e[i], &typed))
			continue;
		footprint_policy_merge_value(&fp->e[i].v, &typed.v);
		return 0;
	}
	if (fp->nr == ARRAY_SIZE(fp->e))
		return -E2BIG;
	fp->e[fp->nr++] = typed;
	return 0;
}

/* A copy of the running policy's key, for the proposal. */
static void copy_key(struct json_object *to, struct json_object *from,
		     const char *key)
{
	struct json_object *v, *copy = NULL;

	if (from && json_object_object_get_ex(from, key, &v) &&
	    !json_object_deep_copy(v, &copy, NULL))
		json_object_object_add(to, key, copy);
}

/* The *_NEW options, as the old ones they stand for (SOL_SOCKET). */
static int fold_option(int level, int optname)
{
	static const int twins[][2] = {
		{ 63, 29 }, /* SO_TIMESTAMP_NEW: SO_TIMESTAMP_OLD */
		{ 64, 35 }, /* SO_TIMESTAMPNS_NEW */
		{ 65, 37 }, /* SO_TIMESTAMPING_NEW */
		{ 66, 20 }, /* SO_RCVTIMEO_NEW */
		{ 67, 21 }, /* SO_SNDTIMEO_NEW */
	};

	for (size_t i = 0; level == FP_SOL_SOCKET && i < ARRAY_SIZE(twins); i++)
		if (optname == twins[i][0])
			return twins[i][1];
	return optname;
}

/* The setsockopt entries as the config can say them: folded, merged. */
static int fold_set(struct proposal *pr)
{
	const struct footprint *fp = pr->fp;

	pr->set = calloc(fp->nr ? fp->nr : 1, sizeof(*pr->set));
	if (!pr->set)
		return -ENOMEM;
	for (size_t i = 0; i < fp->nr; i++) {
		struct footprint_entry typed = fp->e[i];
		struct sh_fp_key k = typed.key;
		size_t j;

		if (k.kind != SH_FP_SET || k.a < 0 || k.b < 0)
			continue; /* no config can name a negative one */
		footprint_policy_typed(&typed);
		k.a = k.a == SOL_UDPLITE_LEVEL ? FP_SOL_UDP : k.a;
		k.b = fold_option(k.a, k.b);
		for (j = 0; j < pr->nr_set; j++)
			if (pr->set[j].key.a == k.a && pr->set[j].key.b == k.b)
				break;
		if (j == pr->nr_set)
			pr->set[pr->nr_set++] =
				(struct footprint_entry){ .key = k };
		footprint_policy_merge_value(&pr->set[j].v, &typed.v);
	}
	return 0;
}

/*
 * Let through, and never refused: under one policy a call is refused every
 * time or never, and the programs' plain stores can leave a count above 0
 * for a refused call when two CPUs race, never a refused count at 0.
 */
static bool let_through(const struct sh_fp_value *v)
{
	return v->count && !v->refused;
}

static const struct footprint_entry *seen_set(const struct proposal *pr,
					      int level, int optname)
{
	for (size_t i = 0; i < pr->nr_set; i++)
		if (pr->set[i].key.a == level && pr->set[i].key.b == optname &&
		    let_through(&pr->set[i].v))
			return &pr->set[i];
	return NULL;
}

static long long clip(long long v, long long min, long long max)
{
	return v < min ? min : v > max ? max : v;
}

static bool clampable(const struct sh_option_name *opt,
		      const struct sh_fp_value *v)
{
	return opt && v->has_value && opt->kind == OPT_INT && !opt->read_only &&
	       opt->domain != SH_DOM_BOOL;
}

/* A rule in the config's words, rendered as explain renders the config's
 * own (render.c). */
static struct json_object *proposed_rule(int level, int optname, __u32 action,
					 long long min, long long max)
{
	const struct sh_option_name *opt =
		names_option_by_value(level, optname);
	struct sh_rule_entry r = {
		.option_name = opt ? opt->name : NULL,
		.key = { .level = level, .optname = optname },
		.rule = { .action = action, .min = min, .max = max },
		.alias_of = -1,
	};

	return render_rule_json(&r);
}

/* The values seen, as a clamp within [min, max]: what the kernel got
 * (the footprint holds them as it keeps them, footprint_policy_typed()). */
static struct json_object *clamp_rule(const struct footprint_entry *e,
				      long long min, long long max)
{
	return proposed_rule(e->key.a, e->key.b, SH_ACTION_CLAMP,
			     clip(e->v.min, min, max),
			     clip(e->v.max, min, max));
}

/* An option the policy left alone: a clamp to the values seen, or an
 * allow. */
static struct json_object *seen_rule(const struct footprint_entry *e)
{
	const struct sh_option_name *opt =
		names_option_by_value(e->key.a, e->key.b);

	if (!clampable(opt, &e->v))
		return proposed_rule(e->key.a, e->key.b, SH_ACTION_ALLOW, 0, 0);
	return clamp_rule(e, LLONG_MIN, LLONG_MAX);
}

static const struct sh_rule_entry *running_rule(const struct proposal *pr,
						int level, int optname,
						bool explicit_only)
{
	const struct sh_policy *p = pr->p;

	for (size_t i = 0; p && i < p->nr_set; i++)
		if (p->set_rules[i].key.level == level &&
		    p->set_rules[i].key.optname == optname &&
		    (!explicit_only || p->set_rules[i].alias_of < 0))
			return &p->set_rules[i];
	return NULL;
}

/* A rule the operator wrote: denies and forces as they are, a clamp or
 * an allow only for an option the container used. */
static struct json_object *explicit_rule(const struct proposal *pr,
					 const struct sh_rule_entry *re,
					 struct json_object *raw)
{
	const struct footprint_entry *e =
		seen_set(pr, re->key.level, re->key.optname);
	const struct sh_opt_rule *r = &re->rule;
	struct json_object *copy = NULL;

	if (r->action == SH_ACTION_ALLOW)
		return e ? seen_rule(e) : NULL;
	if (r->action == SH_ACTION_CLAMP && !e)
		return NULL;
	if (r->action == SH_ACTION_CLAMP && e->v.has_value)
		return clamp_rule(e, r->min, r->max);
	if (json_object_deep_copy(raw, &copy, NULL))
		return NULL;
	return copy;
}

/* An option without a rule of the operator's: what it ran under. */
static struct json_object *observed_rule(const struct proposal *pr,
					 const struct footprint_entry *e)
{
	const struct sh_rule_entry *re = running_rule(
		pr, e->key.a, e->key.b, /* explicit_only= */ false);

	if (!let_through(&e->v) ||
	    running_rule(pr, e->key.a, e->key.b, /* explicit_only= */ true))
		return NULL; /* refused, or the operator's rule says */
	if (!re || re->rule.action == SH_ACTION_ALLOW)
		return seen_rule(e);
	/* Carried over from another option's rule: a deny or force is
	 * carried over again from the rule kept, a clamp stays within. */
	if (re->rule.action != SH_ACTION_CLAMP)
		return NULL;
	if (!e->v.has_value)
		return NULL; /* the clamp carried over still holds it */
	return clamp_rule(e, re->rule.min, re->rule.max);
}

static struct json_object *set_rules(const struct proposal *pr)
{
	struct json_object *arr = json_object_new_array(), *raw = NULL, *r;
	const struct sh_policy *p = pr->p;

	if (pr->running)
		json_object_object_get_ex(pr->running, "setsockopt", &raw);
	/* The operator's rules come first in the parsed list, in order. */
	for (size_t i = 0; p && raw && i < p->nr_set; i++) {
		if (p->set_rules[i].alias_of >= 0)
			continue;
		r = explicit_rule(pr, &p->set_rules[i],
				  json_object_array_get_idx(raw, i));
		if (r)
			json_object_array_add(arr, r);
	}
	for (size_t i = 0; i < pr->nr_set; i++) {
		r = observed_rule(pr, &pr->set[i]);
		if (r)
			json_object_array_add(arr, r);
	}
	return arr;
}

/* A socket of this family (or type) the policy let the container make;
 * -1 matches any. */
static bool made_sock(const struct footprint *fp, int family, int type)
{
	for (size_t i = 0; i < fp->nr; i++)
		if (fp->e[i].key.kind == SH_FP_SOCK &&
		    let_through(&fp->e[i].v) &&
		    (family < 0 || fp->e[i].key.a == family) &&
		    (type < 0 || fp->e[i].key.b == type))
			return true;
	return false;
}

static bool denies(const struct sh_policy *p, int family, int type)
{
	for (__u32 i = 0; p && i < p->nr_deny; i++)
		if (p->deny[i].family == family && p->deny[i].type == type &&
		    p->deny[i].protocol == SH_ANY)
			return true;
	return false;
}

static void deny_unused(const struct proposal *pr, struct json_object *deny,
			int family, int type)
{
	struct sh_sock_rule d = {
		.family = family >= 0 ? family : SH_ANY,
		.type = type >= 0 ? type : SH_ANY,
		.protocol = SH_ANY,
	};

	if (made_sock(pr->fp, family, type) || denies(pr->p, family, type) ||
	    json_object_array_length(deny) >= SH_MAX_SOCKET_RULES)
		return;
	json_object_array_add(deny, render_sock_json(&d));
}

/* The running policy's socket section, and denies of what the container
 * surely never made: nothing when the table overflowed or was not read. */
static struct json_object *socket_json(const struct proposal *pr)
{
	struct json_object *s = json_object_new_object(), *running = NULL;
	struct json_object *deny;

	if (pr->running)
		json_object_object_get_ex(pr->running, "socket", &running);
	copy_key(s, running, "deny");
	copy_key(s, running, "mark");
	copy_key(s, running, "priority");
	if (!json_object_object_get_ex(s, "deny", &deny)) {
		deny = json_object_new_array();
		json_object_object_add(s, "deny", deny);
	}
	if (pr->fp->kind_read[SH_PROG_SOCK] &&
	    !pr->fp->overflow[SH_PROG_SOCK]) {
		deny_unused(pr, deny, -1, FP_SOCK_RAW);
		deny_unused(pr, deny, FP_AF_INET6, -1);
	}
	return s;
}

/* The running policy, parsed by the config parser: its rules as the
 * programs had them, aliases and all. */
static int parse_running(struct proposal *pr, struct sh_error *err)
{
	_cleanup_json_ struct json_object *root = NULL;
	struct json_object *policies;
	const char *text;

	if (!pr->running)
		return 0;
	root = json_object_new_object();
	policies = json_object_new_object();
	json_object_object_add(root, "policies", policies);
	json_object_object_add(policies, "running",
			       json_object_get(pr->running));
	text = json_object_to_json_string(root);
	if (config_parse("the running policy", text, strlen(text), &pr->cfg,
			 err))
		return err->code;
	pr->p = config_find_policy(&pr->cfg, "running");
	return 0;
}

static struct json_object *build(const struct proposal *pr, const char *name)
{
	struct json_object *root = json_object_new_object();
	struct json_object *policies = json_object_new_object();
	struct json_object *p = json_object_new_object();

	jsonw_str(p, "default", "deny");
	copy_key(p, pr->running, "bypass_prot_mem");
	json_object_object_add(p, "socket", socket_json(pr));
	json_object_object_add(p, "setsockopt", set_rules(pr));
	copy_key(p, pr->running, "getsockopt");
	json_object_object_add(policies, name, p);
	json_object_object_add(root, "policies", policies);
	return root;
}

struct json_object *footprint_policy_propose(const struct footprint *fp,
					     struct json_object *running,
					     const char *name,
					     struct sh_error *err)
{
	struct proposal pr = { .fp = fp, .running = running };
	struct json_object *out = NULL;

	if (parse_running(&pr, err))
		return NULL;
	if (fold_set(&pr))
		error_set(err, -ENOMEM, "out of memory");
	else
		out = build(&pr, name);
	free(pr.set);
	if (pr.running)
		config_free(&pr.cfg);
	return out;
}

/* The JSON and text. */

static const char *const call_names[] = {
	[SH_FP_SET] = "setsockopt",
	[SH_FP_GET] = "getsockopt",
	[SH_FP_SOCK] = "socket",
};

static const char *option_name(int level, int optname)
{
	const struct sh_option_name *opt =
		names_option_by_value(level, optname);

	return opt ? opt->name : NULL;
}

static struct json_object *entry_json(const struct footprint_entry *e)
{
	struct json_object *o = json_object_new_object();
	const struct sh_fp_key *k = &e->key;

	jsonw_str(o, "call", call_names[k->kind % 3]);
	if (k->kind == SH_FP_SOCK) {
		jsonw_named(o, "family", names_family_name(k->a), k->a);
		jsonw_named(o, "type", names_type_name(k->b), k->b);
		jsonw_named(o, "protocol", names_protocol_name(k->c), k->c);
	} else {
		jsonw_named(o, "level", names_level_name(k->a), k->a);
		jsonw_named(o, "option", option_name(k->a, k->b), k->b);
	}
	jsonw_int(o, "count", (int64_t)e->v.count);
	jsonw_int(o, "refused", e->v.refused);
	if (e->v.has_value) {
		jsonw_int(o, "min", e->v.min);
		jsonw_int(o, "max", e->v.max);
	}
	return o;
}

struct json_object *footprint_json_entries(const struct footprint *fp)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < fp->nr; i++)
		json_object_array_add(arr, entry_json(&fp->e[i]));
	return arr;
}

struct json_object *footprint_json_overflow(const struct footprint *fp)
{
	struct json_object *over = json_object_new_object();

	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (fp->kind_read[k])
			jsonw_int(over, kind_get(k)->name,
				  (int64_t)fp->overflow[k]);
	return over;
}

/* A name (looked up) or a number; -EINVAL for anything else. */
static int get_named(struct json_object *o, const char *key,
		     int (*lookup)(const char *, int *), int *ret)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return -EINVAL;
	if (json_object_is_type(v, json_type_int)) {
		int64_t n = json_object_get_int64(v);

		if (n < INT_MIN || n > INT_MAX)
			return -EINVAL;
		*ret = (int)n;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string) || !lookup)
		return -EINVAL;
	return lookup(json_object_get_string(v), ret) ? -EINVAL : 0;
}

static int get_u64(struct json_object *o, const char *key, uint64_t max,
		   uint64_t *ret)
{
	struct json_object *v;
	int64_t n;

	*ret = 0;
	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	n = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || n < 0 ||
	    (uint64_t)n > max)
		return -EINVAL;
	*ret = (uint64_t)n;
	return 0;
}

static int get_range(struct json_object *o, bool kept, struct sh_fp_value *v)
{
	struct json_object *min, *max;
	bool has_min = json_object_object_get_ex(o, "min", &min);
	bool has_max = json_object_object_get_ex(o, "max", &max);

	if (!has_min && !has_max)
		return 0;
	if (!has_min || !has_max || !json_object_is_type(min, json_type_int) ||
	    !json_object_is_type(max, json_type_int))
		return -EINVAL;
	v->min = json_object_get_int64(min);
	v->max = json_object_get_int64(max);
	v->has_value = kept ? SH_FP_KEPT : SH_FP_RAW;
	return v->min <= v->max ? 0 : -EINVAL;
}

static int option_value(const char *name, int level, int *ret)
{
	const struct sh_option_name *opt;

	if (names_option_find(level, name, &opt))
		return -ENOENT;
	*ret = opt->optname;
	return 0;
}

static int json_key(struct json_object *o, struct sh_fp_key *k)
{
	const char *call =
		json_object_get_string(json_object_object_get(o, "call"));
	char option[80];
	struct json_object *v;

	for (k->kind = 0; k->kind < ARRAY_SIZE(call_names); k->kind++)
		if (call && !strcmp(call, call_names[k->kind]))
			break;
	if (k->kind == SH_FP_SOCK)
		return get_named(o, "family", names_family, &k->a)     ?:
			       get_named(o, "type", names_type, &k->b) ?:
			       get_named(o, "protocol", names_protocol, &k->c);
	if (k->kind >= ARRAY_SIZE(call_names) ||
	    get_named(o, "level", names_level, &k->a))
		return -EINVAL;
	k->c = 0;
	if (!get_named(o, "option", NULL, &k->b))
		return 0;
	if (!json_object_object_get_ex(o, "option", &v) ||
	    !json_object_is_type(v, json_type_string))
		return -EINVAL;
	snprintf(option, sizeof(option), "%s", json_object_get_string(v));
	return option_value(option, k->a, &k->b) ? -EINVAL : 0;
}

static int entry_from_json(struct json_object *o, bool kept,
			   struct footprint_entry *e)
{
	uint64_t count, refused;

	memset(e, 0, sizeof(*e));
	if (!json_object_is_type(o, json_type_object) || json_key(o, &e->key))
		return -EINVAL;
	if (get_u64(o, "count", UINT64_MAX >> 1, &count) ||
	    get_u64(o, "refused", UINT32_MAX, &refused) ||
	    get_range(o, kept, &e->v))
		return -EINVAL;
	e->v.count = count;
	e->v.refused = (__u32)refused;
	return 0;
}

static int overflow_from_json(struct json_object *over, struct footprint *fp)
{
	uint64_t n;

	if (!json_object_is_type(over, json_type_object))
		return -EINVAL;
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		if (!json_object_object_get_ex(over, kind_get(k)->name, NULL))
			continue;
		if (get_u64(over, kind_get(k)->name, UINT64_MAX >> 1, &n))
			return -EINVAL;
		fp->kind_read[k] = true;
		fp->overflow[k] += n;
	}
	return 0;
}

#define VALUES_KEPT "kept"

void footprint_json_add(struct json_object *prov, const struct footprint *fp)
{
	jsonw_str(prov, "values", VALUES_KEPT);
	json_object_object_add(prov, "footprint", footprint_json_entries(fp));
	json_object_object_add(prov, "overflow", footprint_json_overflow(fp));
}

int footprint_json_read(struct json_object *prov, struct footprint *fp,
			struct sh_error *err)
{
	struct json_object *entries = json_object_object_get(prov, "footprint");
	struct json_object *overflow = json_object_object_get(prov, "overflow");
	struct json_object *values = NULL;
	struct footprint_entry e;
	bool kept = false;
	size_t n;
	int r;

	if (json_object_object_get_ex(prov, "values", &values)) {
		if (!json_object_is_type(values, json_type_string) ||
		    strcmp(json_object_get_string(values), VALUES_KEPT))
			return error_set(err, -EBADMSG,
					 "its \"values\" is not \"%s\"",
					 VALUES_KEPT);
		kept = true;
	}
	if (!json_object_is_type(entries, json_type_array) ||
	    overflow_from_json(overflow, fp))
		return error_set(err, -EBADMSG,
				 "its footprint or overflow is not what "
				 "the hook writes");
	n = json_object_array_length(entries);
	for (size_t i = 0; i < n; i++) {
		if (entry_from_json(json_object_array_get_idx(entries, i), kept,
				    &e))
			return error_set(
				err, -EBADMSG,
				"footprint entry %zu is not what the hook writes",
				i);
		r = footprint_policy_add(fp, &e);
		if (r)
			return error_set(err, r, "more than %d distinct calls",
					 SH_FOOTPRINT_MAX);
	}
	return 0;
}

void footprint_json_entry_text(const struct footprint_entry *e, char *buf,
			       size_t len)
{
	const struct sh_fp_key *k = &e->key;
	struct render_buf t;

	render_buf_init(&t, buf, len);
	if (k->kind == SH_FP_SOCK) {
		render_add(&t, "socket");
		render_named(&t, names_family_name(k->a), k->a);
		render_named(&t, names_type_name(k->b), k->b);
		render_named(&t, names_protocol_name(k->c), k->c);
	} else {
		render_add(&t, "%s", call_names[k->kind % 3]);
		render_named(&t, names_level_name(k->a), k->a);
		render_named(&t, option_name(k->a, k->b), k->b);
	}
	render_add(&t, " count %llu", (unsigned long long)e->v.count);
	if (e->v.refused)
		render_add(&t, " refused %u", e->v.refused);
	if (e->v.has_value)
		render_add(&t, " values %lld..%lld", (long long)e->v.min,
			   (long long)e->v.max);
}
