// SPDX-License-Identifier: GPL-2.0-only
/*
 * One container at a time: what the config gives it now against what its
 * cgroup has; the programs it needs (never a generic one: apply may
 * verify, it is not on any container's start path); the swap; the attachment.
 * A failure at any step puts the old programs back and keeps the old
 * attachment.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cgroup/cg.h"
#include "lib/cleanup.h"
#include "lib/kind.h"
#include "lib/log.h"
#include "prog/attach.h"
#include "prog/generic.h"
#include "prog/load.h"
#include "prog/share.h"
#include "stage/apply.h"
#include "state/state.h"

struct apply_ctx {
	const struct sh_config *cfg;
	bool dry_run;
	int bypass_ok; /* -1: not probed yet */
	apply_report_fn fn;
	void *data;
	struct apply_totals *t;
};

const char *apply_outcome_name(enum apply_outcome o)
{
	static const char *const names[] = {
		[APPLY_UNCHANGED] = "unchanged", [APPLY_UPDATED] = "updated",
		[APPLY_LEFT] = "left",		 [APPLY_FAILED] = "failed",
		[APPLY_GONE] = "gone",
	};

	return o <= APPLY_GONE ? names[o] : "unknown";
}

static uint64_t combine(const uint64_t hash[SH_PROG_KINDS])
{
	return share_hash(0, hash, sizeof(uint64_t) * SH_PROG_KINDS);
}

static void progs_hashes(const struct sh_progs *progs,
			 uint64_t hash[SH_PROG_KINDS])
{
	memset(hash, 0, sizeof(uint64_t) * SH_PROG_KINDS);
	for (int i = 0; i < progs->nr; i++) {
		const struct kind_info *k = kind_by_type(progs->prog[i].type);

		if (k)
			hash[k->kind] = progs->prog[i].hash;
	}
}

uint64_t apply_progs_hash(const struct sh_progs *progs)
{
	uint64_t hash[SH_PROG_KINDS];

	progs_hashes(progs, hash);
	return combine(hash);
}

bool apply_runs_generic(const struct sh_progs *progs)
{
	for (int i = 0; i < progs->nr; i++)
		if (generic_is_name(progs->prog[i].name))
			return true;
	return false;
}

/* The bypass variant, or the other one as on_unsupported says. */
static int target_bypass(const struct sh_config *cfg, bool bypass_ok,
			 struct apply_target *t, struct sh_error *err)
{
	t->bypass = t->eff.bypass && bypass_ok;
	if (!t->eff.bypass || bypass_ok ||
	    cfg->on_unsupported == ON_UNSUPPORTED_WARN)
		return 0;
	error_reason(err, SH_REASON_BYPASS_PROT_MEM_UNSUPPORTED);
	return error_set(
		err, -EOPNOTSUPP,
		"bypass-prot-mem is asked for but this kernel lacks SK_BPF_BYPASS_PROT_MEM, and on_unsupported is 'fail' in %s",
		cfg->path);
}

int apply_target_of(const struct sh_config *cfg,
		    const struct sh_attachment *att, bool bypass_ok,
		    struct apply_target *t, struct sh_error *err)
{
	struct sh_error refusal = { 0 };
	struct sh_effective without;
	int r;

	memset(t, 0, sizeof(*t));
	r = policy_reresolve(cfg, att, &t->eff, &refusal);
	if (r) {
		/* Refused now, as prestart would: never its old programs. */
		policy_defaults(cfg, att, &t->eff);
		t->defaults = true;
		snprintf(t->refused, sizeof(t->refused), "%s (%s)", refusal.msg,
			 error_reason_text(&refusal));
	}
	r = target_bypass(cfg, bypass_ok, t, err);
	if (r)
		return r;
	without = t->eff;
	without.bypass = t->bypass;
	if (policy_is_empty(&without) && t->defaults) {
		/* Refused, and the defaults give nothing: nothing would be
		 * weaker than what it has. */
		*err = refusal;
		return err->code;
	}
	if (policy_is_empty(&without)) {
		error_reason(err, SH_REASON_POLICY_REMOVED);
		return error_set(
			err, -ENODATA,
			"%s gives it no policy any more (it started with policy '%s' from %s)",
			cfg->path, att->policy[0] ? att->policy : "(none)",
			att->policy_source);
	}
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (policy_needs(&without, k))
			t->hash[k] = load_hash(&t->eff, k, t->bypass);
	t->total = combine(t->hash);
	return 0;
}

void apply_check(const struct sh_config *cfg, const struct sh_attachment *att,
		 bool bypass_ok, struct apply_check *ret)
{
	struct sh_error err = { 0 };
	struct apply_target t;

	memset(ret, 0, sizeof(*ret));
	ret->hash = apply_progs_hash(&att->progs);
	ret->generic = apply_runs_generic(&att->progs);
	if (apply_target_of(cfg, att, bypass_ok, &t, &err) == 0) {
		ret->config_hash = t.total;
		return;
	}
	ret->reason = error_reason_text(&err);
	snprintf(ret->why, sizeof(ret->why), "%s", err.msg);
}

bool apply_check_current(const struct apply_check *c)
{
	return c->config_hash == c->hash && !c->generic;
}

/* ---- what changes ------------------------------------------------------ */

static void add_text(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_text(char *buf, size_t len, const char *fmt, ...)
{
	size_t pos = strlen(buf);
	va_list ap;

	if (pos + 2 >= len)
		return;
	if (pos) {
		memcpy(buf + pos, "; ", 3);
		pos += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + pos, len - pos, fmt, ap);
	va_end(ap);
}

static const char *mode_name(bool audit)
{
	return audit ? "audit" : "enforce";
}

static void describe_kind(const struct sh_attachment *att, int k,
			  const struct apply_target *t, char *buf, size_t len)
{
	const char *name = kind_get(k)->name;
	uint64_t old[SH_PROG_KINDS];
	bool generic = false;

	progs_hashes(&att->progs, old);
	for (int i = 0; i < att->progs.nr; i++)
		if (att->progs.prog[i].type == kind_get(k)->type)
			generic = generic_is_name(att->progs.prog[i].name);
	if (!old[k] && t->hash[k])
		add_text(buf, len, "%s attached", name);
	else if (old[k] && !t->hash[k])
		add_text(buf, len, "%s detached", name);
	else if (old[k] != t->hash[k])
		add_text(buf, len, "%s replaced", name);
	else if (generic)
		add_text(buf, len, "%s: generic program -> its own copy", name);
}

static void describe(const struct sh_attachment *att,
		     const struct apply_target *t, char *buf, size_t len)
{
	const struct sh_effective *eff = &t->eff;
	const char *policy = eff->policy ? eff->policy->name : "";

	buf[0] = '\0';
	if (t->defaults)
		add_text(buf, len, "%s: the node's defaults instead",
			 t->refused);
	if (strcmp(att->policy, policy))
		add_text(buf, len, "policy '%s' -> '%s'", att->policy, policy);
	if (att->audit != eff->audit)
		add_text(buf, len, "mode %s -> %s", mode_name(att->audit),
			 mode_name(eff->audit));
	if (att->progs.bypass_active != t->bypass)
		add_text(buf, len, "bypass-prot-mem %s -> %s",
			 att->progs.bypass_active ? "on" : "off",
			 t->bypass ? "on" : "off");
	for (int k = 0; k < SH_PROG_KINDS; k++)
		describe_kind(att, k, t, buf, len);
}

/* ---- the update -------------------------------------------------------- */

/* Attach types the container gets now and had not: the checks prestart
 * makes on the cgroup's path before it attaches one. */
static int check_new_types(const struct apply_ctx *c, int fd,
			   const struct sh_attachment *att,
			   const struct sh_loaded *l, struct sh_error *err)
{
	enum bpf_attach_type types[SH_PROG_KINDS];
	uint64_t old[SH_PROG_KINDS];
	int nr = 0;

	progs_hashes(&att->progs, old);
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (l->fd[k] >= 0 && !old[k])
			types[nr++] = kind_get(k)->type;
	return nr ? attach_path_progs_check(fd, att->cg.rel, types, nr, c->cfg,
					    err) :
		    0;
}

/* The attachment is still this container's and says what apply read. */
static int check_attachment(const struct sh_attachment *att,
			    struct sh_error *err)
{
	struct sh_attachment now;

	if (state_read(att->key[0] ? att->key : att->id, &now) == 0 &&
	    now.pid == att->pid && now.pid_start == att->pid_start &&
	    now.cg.id == att->cg.id &&
	    !memcmp(&now.progs, &att->progs, sizeof(now.progs)))
		return 0;
	return error_set(
		err, -EAGAIN,
		"its record changed while apply ran (released, or attached again)");
}

static int commit(int fd, const struct sh_attachment *att,
		  const struct sh_loaded *l, const struct apply_target *t,
		  struct sh_error *err)
{
	struct sh_attachment next = *att;
	struct sh_error undo = { 0 };
	int r = apply_replace_commit(fd, &att->progs, l, &next.progs, err);

	if (r)
		return r;
	policy_fill_attachment(&t->eff, &next);
	r = check_attachment(att, err);
	if (r)
		goto undo;
	r = state_write(&next, err);
	if (r)
		goto undo;
	attach_publish(l, &next.progs);
	return 0;
undo:
	if (apply_replace_undo(fd, &att->progs, &next.progs, &undo))
		error_note(err, "%s", undo.msg);
	return r;
}

static int update(const struct apply_ctx *c, int fd,
		  const struct sh_attachment *att, const struct apply_target *t,
		  struct sh_error *err)
{
	struct sh_loaded l;
	int r = load_policy(&t->eff, c->cfg->on_unsupported, LOAD_SPECIALISED,
			    &l, err);

	if (r) {
		error_note(err, "while loading its new programs");
		return r;
	}
	r = check_new_types(c, fd, att, &l, err);
	if (r)
		goto out;
	r = commit(fd, att, &l, t, err);
out:
	load_free(&l);
	return r;
}

/* ---- one container ----------------------------------------------------- */

static bool bypass_ok(struct apply_ctx *c, const struct sh_attachment *att)
{
	if (c->bypass_ok >= 0 ||
	    !(att->bypass || c->cfg->default_bypass || c->cfg->allow_bypass))
		return c->bypass_ok == 1;
	/* Probed (a verifier run) only when some container may ask for it;
	 * a dry run loads nothing and asks the sysctl of the same series. */
	if (c->dry_run)
		c->bypass_ok =
			access("/proc/sys/net/core/bypass_prot_mem", F_OK) == 0;
	else
		c->bypass_ok = load_probe_bypass() == 1;
	return c->bypass_ok == 1;
}

/* Gone: its cgroup is, or holds nothing and its init has exited. */
static bool alive(int fd, const struct sh_attachment *att)
{
	bool populated = true;

	if (fd < 0)
		return false;
	if (state_proc_running(att->pid, att->pid_start))
		return true;
	return cg_populated_at(fd, &populated) != 0 || populated;
}

static void count(struct apply_totals *t, enum apply_outcome o)
{
	int *n[] = { &t->unchanged, &t->updated, &t->left, &t->failed,
		     &t->gone };

	(*n[o])++;
}

static enum apply_outcome decide(struct apply_ctx *c, int fd,
				 const struct sh_attachment *att,
				 struct apply_entry *e, struct sh_error *err)
{
	struct apply_target t;
	int r;

	if (!alive(fd, att))
		return APPLY_GONE;
	r = apply_target_of(c->cfg, att, bypass_ok(c, att), &t, err);
	if (r)
		return APPLY_LEFT;
	e->to = t.total;
	if (t.total == e->from && !apply_runs_generic(&att->progs))
		return APPLY_UNCHANGED;
	describe(att, &t, e->change, sizeof(e->change));
	if (att->footprint[0]) {
		error_reason(err, SH_REASON_RECORDING);
		error_set(
			err, -EBUSY,
			"it is being recorded (record mode): its own programs keep its footprint, its new policy comes when it restarts");
		return APPLY_LEFT;
	}
	if (c->dry_run)
		return APPLY_UPDATED;
	r = update(c, fd, att, &t, err);
	if (r == -ENOENT && err->code == -ENOENT && !alive(fd, att))
		return APPLY_GONE; /* released meanwhile */
	return r ? APPLY_FAILED : APPLY_UPDATED;
}

static int apply_attachment(const struct sh_attachment *att, void *data)
{
	struct apply_ctx *c = data;
	_cleanup_close_ int fd = cg_open_attached(&att->cg);
	struct apply_entry e = { .att = att,
				 .from = apply_progs_hash(&att->progs) };
	struct sh_error err = { 0 };

	log_set_context("container %s", att->id);
	e.outcome = decide(c, fd, att, &e, &err);
	if (e.outcome == APPLY_LEFT || e.outcome == APPLY_FAILED) {
		e.reason = error_reason_text(&err);
		snprintf(e.why, sizeof(e.why), "%s", err.msg);
	}
	if (e.outcome == APPLY_UPDATED && !c->dry_run)
		log_info("applied: %s", e.change);
	else if (e.outcome == APPLY_FAILED)
		log_info("cannot apply the config: %s; it keeps its programs",
			 e.why);
	log_set_context("%s", "");
	count(c->t, e.outcome);
	c->fn(&e, c->data);
	return 0;
}

int apply_run(const char *path, bool dry_run, apply_report_fn fn, void *data,
	      struct apply_totals *t, struct sh_error *err)
{
	_cleanup_close_ int lock =
		state_lock(SH_STATE_APPLY_LOCK, LOCK_EX, err);
	struct apply_ctx c = { .dry_run = dry_run,
			       .bypass_ok = -1,
			       .fn = fn,
			       .data = data,
			       .t = t };
	struct sh_config cfg;
	int barrier, r;

	memset(t, 0, sizeof(*t));
	if (lock < 0)
		return lock;
	/* No prestart that read an older config is still attaching. */
	barrier = state_lock(SH_STATE_CONFIG_LOCK, LOCK_EX, err);
	if (barrier < 0)
		return barrier;
	close(barrier);
	r = config_load(path, &cfg, err);
	if (r)
		return r;
	c.cfg = &cfg;
	r = state_foreach(apply_attachment, &c);
	config_free(&cfg);
	return r;
}

/*
 * One transition from a set of programs on a cgroup (one per attach type
 * at most) to another: swaps and attaches first, detaches last, and on a
 * failure the steps done are undone in reverse. The legacy attach with
 * BPF_F_ALLOW_MULTI | BPF_F_REPLACE keeps the attachment's flags and its
 * place among other tools' programs.
 */

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

		if (fd < 0 || !k || kind_prog_info(fd, &id, name) ||
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
		if (kind_prog_info(l->fd[k], &s->id[k], name))
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
static int fill_out(const struct sh_loaded *l, struct sh_progs *ret,
		    struct sh_error *err)
{
	memset(ret, 0, sizeof(*ret));
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		struct sh_prog *p = &ret->prog[ret->nr];

		if (l->fd[k] < 0)
			continue;
		if (kind_prog_info(l->fd[k], &p->id, p->name))
			return error_errno(err, -errno,
					   "cannot read the %s program",
					   kind_get(k)->name);
		p->type = kind_get(k)->type;
		p->hash = l->hash[k];
		ret->nr++;
	}
	ret->bypass_active = l->fd[SH_PROG_SOCK] >= 0 && l->bypass;
	return 0;
}

int apply_replace_commit(int cg_fd, const struct sh_progs *old,
			 const struct sh_loaded *l, struct sh_progs *ret,
			 struct sh_error *err)
{
	struct side from, to;
	int r = fill_out(l, ret, err);

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

int apply_replace_undo(int cg_fd, const struct sh_progs *old,
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
