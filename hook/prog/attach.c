// SPDX-License-Identifier: GPL-2.0-only
/*
 * Attaching with the legacy BPF_PROG_ATTACH and BPF_F_ALLOW_MULTI: the
 * attachment lives exactly as long as the cgroup, so when the runtime
 * removes the cgroup the programs and maps go with it, even if our
 * poststop never runs. ALLOW_MULTI lets other tools' programs and programs
 * in nested cgroups coexist, and keeps nested cgroups covered.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/kind.h"
#include "lib/log.h"
#include "prog/attach.h"
#include "prog/generic.h"
#include "prog/pin.h"
#include "prog/share.h"

/* Our programs' names all start so (see bpf/). */
#define OUR_PROG_PREFIX "sh_"
/* More programs on one cgroup and attach type than anyone attaches. */
#define QUERY_IDS_MAX 64

static int attach_one(int cg_fd, uint64_t cg_id, const struct sh_loaded *l,
		      enum sh_prog_kind kind, struct sh_progs *ret,
		      struct sh_error *err)
{
	const struct kind_info *k = kind_get(kind);
	struct sh_prog *p = &ret->prog[ret->nr];
	int r = kind_prog_info(l->fd[kind], &p->id, p->name);

	if (r)
		return error_errno(err, r, "cannot read the %s program",
				   k->name);
	if (bpf_prog_attach(l->fd[kind], cg_fd, k->type, BPF_F_ALLOW_MULTI))
		return error_errno(err, -errno, "cannot attach the %s program",
				   k->name);
	p->type = k->type;
	p->hash = l->hash[kind];
	ret->nr++;
	/* A generic program refuses every call until its state is written:
	 * from here, it enforces the policy. */
	return l->generic[kind] ?
		       generic_arm(&l->gen[kind], kind, l->eff, cg_id, err) :
		       0;
}

/* Whether program id is attached to the cgroup itself for this kind. */
static bool attached_here(int cg_fd, enum sh_prog_kind kind, __u32 id)
{
	__u32 ids[QUERY_IDS_MAX], n = ARRAY_SIZE(ids), flags = 0;

	if (bpf_prog_query(cg_fd, kind_get(kind)->type, 0, &flags, ids, &n))
		return true; /* cannot tell: keep the rules */
	for (__u32 i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* A generic kind: its rules id drawn first, and a state the cgroup kept
 * marked not ready, unless the program is attached there already (a
 * second prestart whose attachment was lost: that attach fails, and the
 * container keeps what it has). */
static int attach_kind(int cg_fd, uint64_t cg_id, const struct sh_loaded *l,
		       enum sh_prog_kind kind, struct sh_progs *ret,
		       struct sh_error *err)
{
	int r = 0;

	if (l->generic[kind] && !attached_here(cg_fd, kind, l->gen[kind].id))
		r = generic_prepare(&l->gen[kind], kind, l->eff, cg_id, err);
	return r ? r : attach_one(cg_fd, cg_id, l, kind, ret, err);
}

int attach_types(const struct sh_loaded *l,
		 enum bpf_attach_type types[SH_PROG_KINDS])
{
	int nr = 0;

	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (l->fd[k] >= 0)
			types[nr++] = kind_get(k)->type;
	return nr;
}

/*
 * Fresh copies become shareable once they are attached somewhere: through
 * the index, and, when preload has made a pin directory but had no pin
 * for this policy (a config changed, not yet preloaded), as a pin, so that
 * only the first container pays. The next preload unpins what the config
 * no longer needs.
 */
void attach_publish(const struct sh_loaded *l, const struct sh_progs *ret)
{
	if (l->footprint)
		return; /* record mode: this container's own copies */
	for (int i = 0, k = 0; k < SH_PROG_KINDS; k++) {
		struct sh_error err = { 0 };

		if (l->fd[k] < 0)
			continue;
		if (l->fresh[k])
			share_publish(kind_get(k)->name, l->hash[k],
				      ret->prog[i].id);
		if (l->fresh[k] && l->pins >= 0 &&
		    pin_add(l->pins, kind_get(k)->name, l->hash[k], l->fd[k],
			    &err))
			log_warn("%s", err.msg);
		i++;
	}
}

int attach_commit(int cg_fd, uint64_t cg_id, const struct sh_loaded *l,
		  struct sh_progs *ret, struct sh_error *err)
{
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	for (int k = 0; k < SH_PROG_KINDS && !r; k++)
		if (l->fd[k] >= 0)
			r = attach_kind(cg_fd, cg_id, l, k, ret, err);
	if (r) {
		struct sh_error undo = { 0 };

		if (attach_detach(cg_fd, ret, &undo))
			error_note(err, "%s", undo.msg);
		ret->nr = 0;
		return r;
	}
	ret->bypass_active = l->fd[SH_PROG_SOCK] >= 0 && l->bypass;
	return 0;
}

/* Checks the id still names our program: ids are not reused soon, but
 * detaching a stranger's program would be a security bug. */
static int detach_one(int cg_fd, const struct sh_prog *p, struct sh_error *err)
{
	_cleanup_close_ int fd = bpf_prog_get_fd_by_id(p->id);
	char name[SH_BPF_NAME_MAX];
	__u32 id;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (kind_prog_info(fd, &id, name) || strcmp(name, p->name))
		return 0;
	if (bpf_prog_detach2(fd, cg_fd, p->type) && errno != ENOENT)
		return error_errno(err, -errno, "cannot detach program %u (%s)",
				   p->id, kind_type_name(p->type));
	return 0;
}

int attach_detach(int cg_fd, const struct sh_progs *progs, struct sh_error *err)
{
	int r = 0;

	/* Goes on with the others: as much as can be undone, is. */
	for (int i = progs->nr - 1; i >= 0; i--) {
		int e = detach_one(cg_fd, &progs->prog[i], err);

		r = r ? r : e;
	}
	return r;
}

static void collect_ours(enum bpf_attach_type type, const __u32 *ids, __u32 n,
			 struct sh_progs *found)
{
	for (__u32 i = 0; i < n && found->nr < SH_PROG_KINDS; i++) {
		_cleanup_close_ int fd = bpf_prog_get_fd_by_id(ids[i]);
		struct sh_prog p = { .type = type };

		if (fd < 0 || kind_prog_info(fd, &p.id, p.name) ||
		    strncmp(p.name, OUR_PROG_PREFIX, strlen(OUR_PROG_PREFIX)))
			continue;
		found->prog[found->nr++] = p;
	}
}

int attach_query_ours(int cg_fd, struct sh_progs *found)
{
	memset(found, 0, sizeof(*found));
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		enum bpf_attach_type type = kind_get(k)->type;
		__u32 ids[QUERY_IDS_MAX], n = ARRAY_SIZE(ids), flags = 0;

		if (bpf_prog_query(cg_fd, type, 0, &flags, ids, &n))
			return -errno;
		collect_ours(type, ids, n, found);
	}
	return 0;
}

/*
 * Other tools' programs on the container's path. For one attach type the
 * kernel (kernel/bpf/cgroup.c) builds a cgroup's effective list from its
 * own programs, then, going up, those of ancestors attached with
 * BPF_F_ALLOW_MULTI; a non-multi ancestor counts only while nothing below
 * it on the path has programs. So our multi attach:
 *  - switches off, for this container, the nearest ancestor's program if
 *    it was attached with BPF_F_ALLOW_OVERRIDE (hierarchy_allows_attach
 *    lets us attach below it, compute_effective_progs then skips it);
 *  - fails with EPERM below an exclusive ancestor (attached with no flag),
 *    or next to a non-multi program on the cgroup itself;
 *  - leaves multi ancestors alone: their programs run after ours (except
 *    those attached with BPF_F_PREORDER, which run before), see what we
 *    wrote and may change it, bpf_set_retval() included.
 * Only the nearest cgroup with programs of the type matters: the walk
 * stops there, as hierarchy_allows_attach does.
 */

/* Only the first program of a cgroup is named; more fill ENOSPC. */
#define PATH_QUERY_IDS_MAX 64

struct path_prog {
	__u32 id;
	__u32 flags; /* the cgroup's attach flags for this type */
	char name[SH_BPF_NAME_MAX];
	char where[PATH_MAX]; /* the cgroup, below the cgroup2 mount */
	bool self; /* on the container's cgroup itself */
	bool found; /* some cgroup on the path has programs of the type */
};

/* 1 with the first program when the cgroup has some, 0 if none. */
static int query(int cg_fd, enum bpf_attach_type type, struct path_prog *p)
{
	__u32 ids[PATH_QUERY_IDS_MAX], n = ARRAY_SIZE(ids), flags = 0;

	if (bpf_prog_query(cg_fd, type, 0, &flags, ids, &n) && errno != ENOSPC)
		return -errno;
	if (!n)
		return 0;
	p->id = ids[0];
	p->flags = flags;
	kind_prog_name(p->id, p->name);
	return 1;
}

/* The parent directory while it is still in the cgroup2 hierarchy. */
static int parent_cgroup(int cg_fd, char *rel)
{
	struct statfs fs;
	char *slash = strrchr(rel, '/');
	int fd;

	if (!strcmp(rel, "/") || !slash)
		return -ENOENT;
	fd = openat(cg_fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &fs) < 0 || fs.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		return -ENOENT;
	}
	if (slash == rel)
		slash[1] = '\0';
	else
		*slash = '\0';
	return fd;
}

/* For each type, the nearest cgroup with programs of it, from the
 * container's up, in one walk: 0, or -errno with *failed the type's index. */
static int nearest(int cg_fd, const char *rel,
		   const enum bpf_attach_type *types, int nr,
		   struct path_prog *p, int *failed)
{
	_cleanup_close_ int fd = fcntl(cg_fd, F_DUPFD_CLOEXEC, 3);
	char where[PATH_MAX];
	bool self = true;
	int left = nr, r;

	snprintf(where, sizeof(where), "%s", rel);
	while (fd >= 0 && left) {
		for (int i = 0; i < nr; i++) {
			if (p[i].found)
				continue;
			r = query(fd, types[i], &p[i]);
			if (r < 0) {
				*failed = i;
				return r;
			}
			if (!r)
				continue;
			p[i].found = true;
			p[i].self = self;
			snprintf(p[i].where, sizeof(p[i].where), "%s", where);
			left--;
		}
		r = parent_cgroup(fd, where);
		close(fd);
		fd = r;
		self = false;
	}
	*failed = 0;
	return fd < 0 && fd != -ENOENT ? fd : 0;
}

static int refuse_non_multi(const char *rel, enum bpf_attach_type type,
			    const struct path_prog *p, struct sh_error *err)
{
	error_reason(err, SH_REASON_EXCLUSIVE_PROGRAM);
	if (p->self)
		return error_set(
			err, -EPERM,
			"cgroup %s already has %s program %u '%s' attached without BPF_F_ALLOW_MULTI: the kernel refuses ours next to it",
			rel, kind_type_name(type), p->id, p->name);
	return error_set(
		err, -EPERM,
		"cgroup %s, above the container's cgroup %s, has %s program %u '%s' attached exclusively (neither BPF_F_ALLOW_MULTI nor BPF_F_ALLOW_OVERRIDE): the kernel refuses any program below it",
		p->where, rel, kind_type_name(type), p->id, p->name);
}

static int check_type(const char *rel, enum bpf_attach_type type,
		      const struct path_prog *p, const struct sh_config *cfg,
		      struct sh_error *err)
{
	if (!p->found || (p->flags & BPF_F_ALLOW_MULTI))
		return 0;
	if (p->self || !(p->flags & BPF_F_ALLOW_OVERRIDE))
		return refuse_non_multi(rel, type, p, err);
	if (cfg->on_override_program == ON_OVERRIDE_PROGRAM_WARN) {
		log_warn(
			"cgroup %s has %s program %u '%s' attached with BPF_F_ALLOW_OVERRIDE: our program on cgroup %s switches it off for this container (on_override_program is 'warn')",
			p->where, kind_type_name(type), p->id, p->name, rel);
		return 0;
	}
	error_reason(err, SH_REASON_OVERRIDE_PROGRAM);
	error_cause(err, NULL, "on_override_program=refuse");
	return error_set(
		err, -EPERM,
		"cgroup %s has %s program %u '%s' attached with BPF_F_ALLOW_OVERRIDE: our program on cgroup %s would switch it off for this container; refusing because on_override_program is 'refuse' in %s",
		p->where, kind_type_name(type), p->id, p->name, rel, cfg->path);
}

int attach_path_progs_check(int cg_fd, const char *rel,
			    const enum bpf_attach_type *types, int nr,
			    const struct sh_config *cfg, struct sh_error *err)
{
	struct path_prog found[SH_PROG_KINDS] = { 0 };
	int failed, r;

	if (nr > SH_PROG_KINDS)
		return error_set(err, -EINVAL, "%d attach types to check", nr);
	r = nearest(cg_fd, rel, types, nr, found, &failed);
	if (r < 0)
		return error_errno(
			err, r, "cannot query the %s programs above cgroup %s",
			kind_type_name(types[failed]), rel);
	for (int i = 0; i < nr && !r; i++)
		r = check_type(rel, types[i], &found[i], cfg, err);
	return r;
}
