// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hook stages. prestart/createRuntime: resolve the policy, load and
 * verify the programs, find or make the cgroup, attach, record; any error
 * undoes everything. poststop: undo what the record says; never fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "cgroup_choice.h"
#include "cleanup.h"
#include "load.h"
#include "log.h"
#include "path_progs.h"
#include "policy.h"
#include "reaper.h"
#include "share.h"
#include "stage.h"
#include "state.h"

/* Also refuses an init that is exiting: moving it would silently fail. */
static int fill_record(struct sh_record *rec, const struct oci_state *st,
		       const struct sh_effective *eff)
{
	char state = 'R';

	memset(rec, 0, sizeof(*rec));
	snprintf(rec->id, sizeof(rec->id), "%s", st->id);
	rec->pid = st->pid;
	/* A missing pid is reported where its cgroup is looked up. */
	pid_stat(st->pid, &state, &rec->pid_start);
	if (pid_exiting(state)) {
		log_error("container init pid %d is exiting (state %c)",
			  st->pid, state);
		return -ESRCH;
	}
	snprintf(rec->policy, sizeof(rec->policy), "%s",
		 eff->policy ? eff->policy->name : "");
	policy_source_text(eff, false, rec->policy_source,
			   sizeof(rec->policy_source));
	rec->bypass = eff->bypass;
	policy_source_text(eff, true, rec->bypass_source,
			   sizeof(rec->bypass_source));
	return 0;
}

/* The record names this container's init only with the same pid and start
 * time (pids are reused); else an earlier container left it under this id. */
static bool record_is_ours(const struct sh_record *rec,
			   const struct oci_state *st, uint64_t start)
{
	return rec->pid == st->pid && rec->pid_start == start;
}

/* A second prestart for the same container must not attach twice. */
static bool already_attached(const struct oci_state *st)
{
	struct sh_record rec;
	struct sh_progs now;
	_cleanup_close_ int fd = -1;
	uint64_t start = 0;
	char state;

	if (state_read(st->id, &rec))
		return false;
	pid_stat(st->pid, &state, &start);
	if (!record_is_ours(&rec, st, start)) {
		log_info(
			"releasing the record of an earlier container %s (pid %d)",
			rec.id, rec.pid);
		stage_release(&rec);
		return false;
	}
	fd = cg_open_recorded(&rec.cg);
	if (fd < 0 || attached_ours(fd, &now))
		return false;
	for (int i = 0; i < rec.progs.nr; i++) {
		bool found = false;

		for (int j = 0; j < now.nr; j++)
			found |= now.prog[j].id == rec.progs.prog[i].id;
		if (!found)
			return false;
	}
	return true;
}

/*
 * Attaches after checking the path above the cgroup, then checks that the
 * init is still in the cgroup (the same one: path and id) and still the
 * same process: a move before or during the attach would leave it
 * unpoliced, and after it only the container could move it, which the
 * cgroup choice has ruled out.
 */
static int attach_checked(const struct sh_config *cfg, int fd,
			  const struct cg_root *root, const struct sh_loaded *l,
			  struct sh_record *rec)
{
	enum bpf_attach_type types[SH_MAX_PROGS];
	int nr = attach_types(l, types);
	int r = path_progs_check(fd, rec->cg.rel, types, nr, cfg);

	if (!r)
		r = attach_commit(fd, l, &rec->progs);
	if (r)
		return r;
	r = cg_pid_inside(root, rec->pid, &rec->cg);
	if (!r && !pid_running(rec->pid, rec->pid_start)) {
		log_error(
			"container init pid %d exited while the policy was being attached",
			rec->pid);
		r = -ESRCH;
	}
	if (r) {
		detach_progs(fd, &rec->progs);
		rec->progs.nr = 0;
	}
	return r;
}

static int attach_to_cgroup(const struct sh_config *cfg,
			    const struct oci_state *st,
			    const struct sh_effective *eff,
			    const struct sh_loaded *l)
{
	struct cg_root root;
	struct sh_record rec;
	_cleanup_close_ int fd = -1;
	int r;

	r = fill_record(&rec, st, eff);
	if (!r)
		r = cg_find_root(&root);
	if (r)
		return r;
	fd = cg_take(cfg, st, &root, &rec.cg);
	if (fd < 0)
		return fd;
	r = attach_checked(cfg, fd, &root, l, &rec);
	if (!r) {
		r = state_write(&rec);
		if (r)
			detach_progs(fd, &rec.progs);
	}
	if (!r)
		attach_publish(l, &rec.progs);
	if (!r && rec.cg.created) {
		r = reaper_spawn(&rec);
		if (r) {
			detach_progs(fd, &rec.progs);
			state_remove(rec.id);
		}
	}
	if (r) {
		cg_undo(&root, &rec.cg, st->pid);
		return r;
	}
	log_info(
		"attached %d program(s) to cgroup %s (policy '%s', bypass-prot-mem %s)",
		rec.progs.nr, rec.cg.rel, rec.policy,
		rec.progs.bypass_active ? "on" : "off");
	return 0;
}

int stage_attach(const struct sh_config *cfg, struct oci_state *st)
{
	struct sh_effective eff;
	struct sh_loaded loaded = { 0 };
	int r;

	r = oci_load_bundle(st);
	if (!r)
		r = policy_resolve(cfg, st, &eff);
	if (r)
		return r;
	/* No gc here: it reads every record, and prestart must stay O(1).
	 * poststop, `gc` and the reaper collect what containers left. */
	if (eff.sandbox || policy_is_empty(&eff)) {
		log_debug("no socket policy applies: nothing to attach");
		return 0;
	}
	if (st->pid <= 0) {
		log_error("OCI state on stdin lacks the container's 'pid'");
		return -EINVAL;
	}
	/* Refused once, here, before anything is loaded. */
	r = state_dir_check();
	if (r)
		return r;
	if (already_attached(st)) {
		log_info("policy already attached: nothing to do");
		return 0;
	}
	r = attach_prepare(&eff, cfg->on_unsupported, &loaded);
	if (!r)
		r = attach_to_cgroup(cfg, st, &eff, &loaded);
	loaded_free(&loaded);
	return r;
}

static bool init_alive(const struct sh_record *rec)
{
	return pid_running(rec->pid, rec->pid_start);
}

/* Drops the record, unless it now belongs to a newer container. */
static int drop_record(const struct sh_record *rec)
{
	struct sh_record now;

	if (state_read(rec->id, &now) == 0 &&
	    (now.pid != rec->pid || now.pid_start != rec->pid_start ||
	     now.cg.id != rec->cg.id))
		return 0;
	return state_remove(rec->id);
}

/*
 * Never detaches from a container that still runs: a populated cgroup
 * whose recorded init is alive (or, for the reaper, any populated one).
 * An unreadable cgroup.events counts as populated.
 */
static int release_cgroup(int fd, const struct sh_record *rec, bool only_empty)
{
	struct cg_root root;
	bool populated = true;
	_cleanup_close_ int again = -1;
	int r = cg_populated_at(fd, &populated);

	if (r == -ENOENT)
		return 0;
	if (!r && populated && (only_empty || init_alive(rec)))
		r = -EBUSY;
	if (r)
		return r;
	detach_progs(fd, &rec->progs);
	/* rmdir takes a path: only while it still names our cgroup. */
	again = cg_open_recorded(&rec->cg);
	if (rec->cg.created && again >= 0 && cg_find_root(&root) == 0)
		cg_remove(&root, rec->cg.rel);
	return 0;
}

/* Undoes one record through one open of its cgroup (fd, or -errno). */
static int release_at(int fd, const struct sh_record *rec, bool only_empty)
{
	int r = 0;

	if (fd >= 0)
		r = release_cgroup(fd, rec, only_empty);
	else if (fd != -ENOENT && fd != -ESTALE)
		r = fd; /* cannot tell: keep the record */
	return r ? r : drop_record(rec);
}

int stage_release(const struct sh_record *rec)
{
	_cleanup_close_ int fd = cg_open_recorded(&rec->cg);

	return release_at(fd, rec, false);
}

int stage_release_empty(const struct sh_record *rec)
{
	_cleanup_close_ int fd = cg_open_recorded(&rec->cg);
	int r = release_at(fd, rec, true);

	return r ? r : fd < 0;
}

int stage_poststop(const struct oci_state *st)
{
	struct sh_record rec;
	int r = state_dir_check();

	if (r)
		return 0;
	r = state_read(st->id, &rec);
	if (r == 0) {
		r = stage_release(&rec);
		if (r == -EBUSY)
			log_warn(
				"container %s still runs in cgroup %s (init pid %d): its policy stays attached until it is gone",
				st->id, rec.cg.rel, rec.pid);
		else if (r)
			log_warn("cannot release %s: %s", st->id, strerror(-r));
		else
			log_info("released cgroup %s", rec.cg.rel);
	} else if (r != -ENOENT && r != -EBADMSG) {
		log_warn("cannot read state of %s: %s", st->id, strerror(-r));
	}
	stage_gc();
	return 0;
}

/* Gone: the cgroup vanished (or is a new one), or it is empty and the
 * container's init is dead. fd is one open of the recorded cgroup. */
static bool record_stale(int fd, const struct sh_record *rec)
{
	bool populated = true;

	if (fd == -ENOENT || fd == -ESTALE)
		return true;
	if (fd < 0 || cg_populated_at(fd, &populated))
		return false;
	return !populated && !init_alive(rec);
}

struct gc_pass {
	int released;
	size_t nr_live;
	struct {
		enum bpf_attach_type type;
		uint64_t hash;
	} live[256];
	bool overflow; /* too many to track: sweep nothing */
};

static void note_live(struct gc_pass *gc, const struct sh_record *rec)
{
	for (int i = 0; i < rec->progs.nr; i++) {
		if (gc->nr_live == ARRAY_SIZE(gc->live)) {
			gc->overflow = true;
			return;
		}
		gc->live[gc->nr_live].type = rec->progs.prog[i].type;
		gc->live[gc->nr_live++].hash = rec->progs.prog[i].hash;
	}
}

static int gc_visit(const struct sh_record *rec, void *data)
{
	struct gc_pass *gc = data;
	_cleanup_close_ int fd = cg_open_recorded(&rec->cg);

	if (!record_stale(fd, rec)) {
		note_live(gc, rec);
		return 0;
	}
	if (release_at(fd, rec, false) == 0) {
		log_info("gc: released state of container %s (cgroup %s)",
			 rec->id, rec->cg.rel);
		gc->released++;
	}
	return 0;
}

static int index_in_use(const char *type, uint64_t hash, void *data)
{
	struct gc_pass *gc = data;

	if (gc->overflow)
		return 1;
	for (size_t i = 0; i < gc->nr_live; i++)
		if (gc->live[i].hash == hash &&
		    !strcmp(attach_type_name(gc->live[i].type), type))
			return 1;
	return 0;
}

/*
 * Mark and sweep: release records of containers that are gone, then drop
 * the index of shared copies that no live container uses any more.
 */
int stage_gc(void)
{
	struct gc_pass *gc;
	int released, r;

	/* An unsafe state directory is refused (logged) and left alone. */
	r = state_dir_check();
	if (r)
		return r;
	gc = calloc(1, sizeof(*gc));
	if (!gc)
		return -ENOMEM;
	state_foreach(gc_visit, gc);
	share_sweep(index_in_use, gc);
	released = gc->released;
	free(gc);
	return released;
}
