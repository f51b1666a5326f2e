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
#include "cleanup.h"
#include "load.h"
#include "log.h"
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

/* A second prestart for the same container must not attach twice. */
static bool already_attached(const struct oci_state *st)
{
	struct sh_record rec;
	struct sh_progs now;
	_cleanup_close_ int fd = -1;

	if (state_read(st->id, &rec) || rec.pid != st->pid)
		return false;
	fd = open(rec.cg.abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
	if (!r)
		r = cg_resolve(&root, st->pid, st->id, &rec.cg);
	if (r)
		return r;
	fd = cg_open(rec.cg.abs);
	r = fd < 0 ? fd : attach_commit(fd, l, &rec.progs);
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

/* Undo one record: detach, remove the cgroup we made, drop the record. */
int stage_release(const struct sh_record *rec)
{
	struct cg_root root;
	uint64_t id;
	_cleanup_close_ int fd = -1;

	if (cg_id(rec->cg.abs, &id) == 0 && id == rec->cg.id) {
		fd = open(rec->cg.abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			detach_progs(fd, &rec->progs);
		if (rec->cg.created && cg_find_root(&root) == 0)
			cg_remove(&root, rec->cg.rel);
	}
	return state_remove(rec->id);
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
		if (r)
			log_warn("cannot remove state of %s: %s", st->id,
				 strerror(-r));
		else
			log_info("released cgroup %s", rec.cg.rel);
	} else if (r != -ENOENT && r != -EBADMSG) {
		log_warn("cannot read state of %s: %s", st->id, strerror(-r));
	}
	stage_gc();
	return 0;
}

static bool init_alive(const struct sh_record *rec)
{
	return pid_running(rec->pid, rec->pid_start);
}

/* Gone: the cgroup vanished (or is a new one), or it is empty and the
 * container's init is dead. */
static bool record_stale(const struct sh_record *rec)
{
	uint64_t id;
	bool populated = true;

	if (cg_id(rec->cg.abs, &id) || id != rec->cg.id)
		return true;
	if (cg_populated(rec->cg.abs, &populated))
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

	if (!record_stale(rec)) {
		note_live(gc, rec);
		return 0;
	}
	if (stage_release(rec) == 0) {
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
