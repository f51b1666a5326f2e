// SPDX-License-Identifier: GPL-2.0-only
/*
 * One transition from a set of programs on a cgroup (one per attach type
 * at most) to another: swaps and attaches first, detaches last, and on a
 * failure the steps done are undone in reverse. The legacy attach with
 * BPF_F_ALLOW_MULTI | BPF_F_REPLACE keeps the attachment's flags and its
 * place among other tools' programs.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "lib/bpfinfo.h"
#include "lib/cleanup.h"
#include "prog/replace.h"

/* The program of each kind on one side of a transition, -1 for none. */
struct side {
	int fd[SH_PROG_KINDS];
	__u32 id[SH_PROG_KINDS];
};

enum step { STEP_NONE, STEP_SWAP, STEP_ADD, STEP_DROP };

static void side_init(struct side *s)
{
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		s->fd[k] = -1;
		s->id[k] = 0;
	}
}

static void side_close(struct side *s)
{
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (s->fd[k] >= 0)
			close(s->fd[k]);
	side_init(s);
}

/* The recorded programs, each still ours (an id names the program only
 * while it lives, and ids are reused). */
static int side_of_progs(const struct sh_progs *p, struct side *s,
			 struct sh_error *err)
{
	side_init(s);
	for (int i = 0; i < p->nr; i++) {
		const struct kind_info *k = kind_by_type(p->prog[i].type);
		char name[SH_BPF_NAME_MAX];
		int fd = bpf_prog_get_fd_by_id(p->prog[i].id);
		__u32 id;

		if (fd < 0 || !k || bpfinfo_prog(fd, &id, name) ||
		    strcmp(name, p->prog[i].name)) {
			if (fd >= 0)
				close(fd);
			side_close(s);
			return error_set(
				err, -ESTALE,
				"its %s program %u (%s) is gone: it is no longer what its record says (see status)",
				kind_type_name(p->prog[i].type), p->prog[i].id,
				p->prog[i].name);
		}
		s->fd[k->kind] = fd;
		s->id[k->kind] = id;
	}
	return 0;
}

static int side_of_loaded(const struct sh_loaded *l, struct side *s,
			  struct sh_error *err)
{
	char name[SH_BPF_NAME_MAX];

	side_init(s);
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		if (l->fd[k] < 0)
			continue;
		if (bpfinfo_prog(l->fd[k], &s->id[k], name))
			return error_errno(err, -errno,
					   "cannot read the %s program",
					   kind_get(k)->name);
		s->fd[k] = l->fd[k];
	}
	return 0;
}

static int swap(int cg_fd, enum sh_prog_kind k, int from, int to)
{
	LIBBPF_OPTS(bpf_prog_attach_opts, opts,
		    .flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE,
		    .replace_prog_fd = from);

	return bpf_prog_attach_opts(to, cg_fd, kind_get(k)->type, &opts) ?
		       -errno :
		       0;
}

static int add(int cg_fd, enum sh_prog_kind k, int fd)
{
	return bpf_prog_attach(fd, cg_fd, kind_get(k)->type,
			       BPF_F_ALLOW_MULTI) ?
		       -errno :
		       0;
}

static int drop(int cg_fd, enum sh_prog_kind k, int fd)
{
	return bpf_prog_detach2(fd, cg_fd, kind_get(k)->type) ? -errno : 0;
}

static int do_step(int cg_fd, enum step s, enum sh_prog_kind k,
		   const struct side *from, const struct side *to)
{
	switch (s) {
	case STEP_SWAP:
		return swap(cg_fd, k, from->fd[k], to->fd[k]);
	case STEP_ADD:
		return add(cg_fd, k, to->fd[k]);
	case STEP_DROP:
		return drop(cg_fd, k, from->fd[k]);
	default:
		return 0;
	}
}

/* Back from `to` to `from`, for the steps done. */
static void rollback(int cg_fd, const enum step *done, const struct side *from,
		     const struct side *to, struct sh_error *err)
{
	for (int k = SH_PROG_KINDS - 1; k >= 0; k--) {
		int r = 0;

		if (done[k] == STEP_SWAP)
			r = swap(cg_fd, k, to->fd[k], from->fd[k]);
		else if (done[k] == STEP_ADD)
			r = drop(cg_fd, k, to->fd[k]);
		else if (done[k] == STEP_DROP)
			r = add(cg_fd, k, from->fd[k]);
		if (r)
			error_note(
				err,
				"and its %s program could not be put back: %s",
				kind_get(k)->name, strerror(-r));
	}
}

static enum step step_of(const struct side *from, const struct side *to, int k)
{
	if (from->fd[k] < 0)
		return to->fd[k] < 0 ? STEP_NONE : STEP_ADD;
	if (to->fd[k] < 0)
		return STEP_DROP;
	return from->id[k] == to->id[k] ? STEP_NONE : STEP_SWAP;
}

static const char *step_verb(enum step s)
{
	return s == STEP_SWAP ? "replace" : s == STEP_ADD ? "attach" : "detach";
}

/* Swaps and attaches in the first pass, detaches in the second. */
static int transition(int cg_fd, const struct side *from, const struct side *to,
		      struct sh_error *err)
{
	enum step done[SH_PROG_KINDS] = { STEP_NONE };

	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < SH_PROG_KINDS; k++) {
			enum step s = step_of(from, to, k);
			int r;

			if (s == STEP_NONE || (s == STEP_DROP) != (pass == 1))
				continue;
			r = do_step(cg_fd, s, k, from, to);
			if (r) {
				error_errno(err, r, "cannot %s its %s program",
					    step_verb(s), kind_get(k)->name);
				rollback(cg_fd, done, from, to, err);
				return r;
			}
			done[k] = s;
		}
	}
	return 0;
}

/* What is attached now: the new programs. */
static int fill_out(const struct sh_loaded *l, struct sh_progs *out,
		    struct sh_error *err)
{
	memset(out, 0, sizeof(*out));
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		struct sh_prog *p = &out->prog[out->nr];

		if (l->fd[k] < 0)
			continue;
		if (bpfinfo_prog(l->fd[k], &p->id, p->name))
			return error_errno(err, -errno,
					   "cannot read the %s program",
					   kind_get(k)->name);
		p->type = kind_get(k)->type;
		p->hash = l->hash[k];
		out->nr++;
	}
	out->bypass_active = l->fd[SH_PROG_SOCK] >= 0 && l->bypass;
	return 0;
}

int replace_commit(int cg_fd, const struct sh_progs *old,
		   const struct sh_loaded *l, struct sh_progs *out,
		   struct sh_error *err)
{
	struct side from, to;
	int r = fill_out(l, out, err);

	if (r)
		return r;
	r = side_of_progs(old, &from, err);
	if (r)
		return r;
	r = side_of_loaded(l, &to, err);
	if (r)
		goto close;
	r = transition(cg_fd, &from, &to, err);
close:
	side_close(&from); /* to's fds are l's */
	return r;
}

int replace_undo(int cg_fd, const struct sh_progs *old,
		 const struct sh_progs *now, struct sh_error *err)
{
	struct side from, to;
	int r = side_of_progs(now, &from, err);

	if (r)
		return r;
	r = side_of_progs(old, &to, err);
	if (r)
		goto close;
	r = transition(cg_fd, &from, &to, err);
close:
	side_close(&from);
	side_close(&to);
	return r;
}
