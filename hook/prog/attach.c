// SPDX-License-Identifier: GPL-2.0-only
/*
 * Attaching with the legacy BPF_PROG_ATTACH and BPF_F_ALLOW_MULTI: the
 * attachment lives exactly as long as the cgroup, so when the runtime
 * removes the cgroup the programs and maps go with it, even if our
 * poststop never runs. ALLOW_MULTI lets other tools' programs and programs
 * in nested cgroups coexist, and keeps nested cgroups covered.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "lib/cleanup.h"
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
		      enum sh_prog_kind kind, struct sh_progs *out,
		      struct sh_error *err)
{
	const struct kind_info *k = kind_get(kind);
	struct sh_prog *p = &out->prog[out->nr];
	int r = bpfinfo_prog(l->fd[kind], &p->id, p->name);

	if (r)
		return error_errno(err, r, "cannot read the %s program",
				   k->name);
	if (bpf_prog_attach(l->fd[kind], cg_fd, k->type, BPF_F_ALLOW_MULTI))
		return error_errno(err, -errno, "cannot attach the %s program",
				   k->name);
	p->type = k->type;
	p->hash = l->hash[kind];
	out->nr++;
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
 * second prestart whose record was lost: that attach fails, and the
 * container keeps what it has). */
static int attach_kind(int cg_fd, uint64_t cg_id, const struct sh_loaded *l,
		       enum sh_prog_kind kind, struct sh_progs *out,
		       struct sh_error *err)
{
	int r = 0;

	if (l->generic[kind] && !attached_here(cg_fd, kind, l->gen[kind].id))
		r = generic_prepare(&l->gen[kind], kind, l->eff, cg_id, err);
	return r ? r : attach_one(cg_fd, cg_id, l, kind, out, err);
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
void attach_publish(const struct sh_loaded *l, const struct sh_progs *out)
{
	if (l->footprint)
		return; /* record mode: this container's own copies */
	for (int i = 0, k = 0; k < SH_PROG_KINDS; k++) {
		struct sh_error err = { 0 };

		if (l->fd[k] < 0)
			continue;
		if (l->fresh[k])
			share_publish(kind_get(k)->name, l->hash[k],
				      out->prog[i].id);
		if (l->fresh[k] && l->pins >= 0 &&
		    pin_add(l->pins, kind_get(k)->name, l->hash[k], l->fd[k],
			    &err))
			log_warn("%s", err.msg);
		i++;
	}
}

int attach_commit(int cg_fd, uint64_t cg_id, const struct sh_loaded *l,
		  struct sh_progs *out, struct sh_error *err)
{
	int r = 0;

	memset(out, 0, sizeof(*out));
	for (int k = 0; k < SH_PROG_KINDS && !r; k++)
		if (l->fd[k] >= 0)
			r = attach_kind(cg_fd, cg_id, l, k, out, err);
	if (r) {
		struct sh_error undo = { 0 };

		if (attach_detach(cg_fd, out, &undo))
			error_note(err, "%s", undo.msg);
		out->nr = 0;
		return r;
	}
	out->bypass_active = l->fd[SH_PROG_SOCK] >= 0 && l->bypass;
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
	if (bpfinfo_prog(fd, &id, name) || strcmp(name, p->name))
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

		if (fd < 0 || bpfinfo_prog(fd, &p.id, p.name) ||
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
