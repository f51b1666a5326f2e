// SPDX-License-Identifier: GPL-2.0-only
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
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "lib/bpfinfo.h"
#include "lib/cleanup.h"
#include "lib/kind.h"
#include "lib/log.h"
#include "prog/path_progs.h"

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
	bpfinfo_prog_name(p->id, p->name);
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

int path_progs_check(int cg_fd, const char *rel,
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
