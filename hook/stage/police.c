// SPDX-License-Identifier: GPL-2.0-only
/*
 * Policing one container once its policy is known: loaded programs, the
 * cgroup, attach, record (and, for a cgroup the hook made or a sandbox no
 * poststop comes for, its reaper). Nothing stays behind when a step
 * fails: the ladder in attach_to_cgroup() undoes the steps before it, in
 * reverse.
 */
#include <errno.h>
#include <string.h>
#include <sys/file.h>

#include "cgroup/cg.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "lib/timing.h"
#include "policy/policy.h"
#include "prog/attach.h"
#include "prog/load.h"
#include "record/footprint.h"
#include "record/recording.h"
#include "stage/police.h"
#include "stage/reaper.h"
#include "stage/teardown.h"
#include "state/state.h"

/* The container's init as /proc/PID/stat showed it before anything was
 * loaded, read once for both uses: the same-id check and the record
 * (the attach verifies the init again once attached). */
struct init_seen {
	char state;
	uint64_t start;
};

static void init_see(const struct oci_state *st, struct init_seen *seen)
{
	*seen = (struct init_seen){ .state = 'R' };
	/* A missing pid is reported where its cgroup is looked up. */
	state_proc_stat(st->pid, &seen->state, &seen->start);
}

/* Also refuses an init that is exiting: moving it would silently fail. */
static int fill_record(struct sh_record *rec, const struct oci_state *st,
		       const struct init_seen *seen,
		       const struct sh_effective *eff, struct sh_error *err)
{
	char state = seen->state;

	memset(rec, 0, sizeof(*rec));
	snprintf(rec->id, sizeof(rec->id), "%s", st->id);
	snprintf(rec->k8s_namespace, sizeof(rec->k8s_namespace), "%s",
		 eff->who.namespace ? eff->who.namespace : "");
	snprintf(rec->pod, sizeof(rec->pod), "%s",
		 eff->who.pod ? eff->who.pod : "");
	snprintf(rec->container, sizeof(rec->container), "%s",
		 eff->who.name ? eff->who.name : "");
	rec->pid = st->pid;
	rec->pid_start = seen->start;
	if (state_proc_exiting(state)) {
		error_reason(err, SH_REASON_INIT_EXITED);
		return error_set(err, -ESRCH,
				 "container init pid %d is exiting (state %c)",
				 st->pid, state);
	}
	policy_record(eff, rec);
	return 0;
}

static bool same_programs(const struct sh_progs *recorded,
			  const struct sh_progs *now)
{
	for (int i = 0; i < recorded->nr; i++) {
		bool found = false;

		for (int j = 0; j < now->nr; j++)
			found |= now->prog[j].id == recorded->prog[i].id;
		if (!found)
			return false;
	}
	return true;
}

struct earlier {
	const struct oci_state *st;
	uint64_t start;
	bool attached;
};

/* Whether pid's cgroup holds pid alone (and no populated cgroup below). */
static bool holds_only(const struct cg_root *root, pid_t pid)
{
	struct sh_error err = { 0 };
	struct cg_target t;
	bool dedicated = false;
	_cleanup_close_ int fd = cg_locate(root, pid, &t, &dedicated, &err);

	return fd >= 0 && dedicated;
}

/* One record of this id: this container's (a second prestart), an
 * earlier container's of the same cgroup, which now holds this
 * container's init alone, or one that is gone (released), or another
 * runtime root's container with the same id, left alone: also one whose
 * init has exited while its cgroup, where this container's init now is,
 * still holds its processes. */
static int visit_same_id(const struct sh_record *rec, void *data)
{
	struct earlier *e = data;
	_cleanup_close_ int fd = -1;
	struct sh_error err = { 0 };
	struct sh_progs now;
	struct cg_root root;

	if (rec->pid == e->st->pid && rec->pid_start == e->start) {
		fd = cg_open_recorded(&rec->cg);
		e->attached |= fd >= 0 && !attach_query_ours(fd, &now) &&
			       same_programs(&rec->progs, &now);
		return 0;
	}
	if (!cg_find_root(&root, &err) &&
	    !cg_pid_inside(&root, e->st->pid, &rec->cg, &err)) {
		if (!holds_only(&root, e->st->pid)) {
			/* Another root's container of the id, its init gone,
			 * its processes still there: they keep its policy. */
			log_info(
				"keeping the record of container %s (pid %d): its cgroup %s holds other processes than this container's init",
				rec->id, rec->pid, rec->cg.rel);
			return 0;
		}
		log_info(
			"releasing the record of an earlier container %s (pid %d) of its cgroup",
			rec->id, rec->pid);
		teardown_release(rec);
	} else if (teardown_release_empty(rec) == 0) {
		log_info(
			"released the record of an earlier container %s (pid %d)",
			rec->id, rec->pid);
	}
	return 0;
}

/* A second prestart for the same container must not attach twice. The
 * record names this container's init only with the same pid and start
 * time (pids are reused); else an earlier container left it, or another
 * runtime root runs a container of the same id. */
static bool already_attached(const struct oci_state *st,
			     const struct init_seen *seen)
{
	struct earlier e = { .st = st, .start = seen->start };

	state_foreach_id(st->id, visit_same_id, &e);
	return e.attached;
}

/*
 * After the attach, the init must still be in the cgroup (the same one:
 * path and id) and still the same process: a move before or during the
 * attach would leave it unpoliced, and after it only the container could
 * move it, which the cgroup choice has ruled out.
 */
static int check_init_stayed(const struct cg_root *root,
			     const struct sh_record *rec, struct sh_error *err)
{
	int r = cg_pid_inside(root, rec->pid, &rec->cg, err);

	if (r) {
		error_reason(err, SH_REASON_INIT_ESCAPED);
		return r;
	}
	if (!state_proc_running(rec->pid, rec->pid_start)) {
		error_reason(err, SH_REASON_INIT_EXITED);
		return error_set(
			err, -ESRCH,
			"container init pid %d exited while the policy was being attached",
			rec->pid);
	}
	return 0;
}

static int check_path(const struct sh_config *cfg, int fd,
		      const struct sh_loaded *l, const struct sh_record *rec,
		      struct sh_error *err)
{
	enum bpf_attach_type types[SH_PROG_KINDS];
	int nr = attach_types(l, types);

	return attach_path_progs_check(fd, rec->cg.rel, types, nr, cfg, err);
}

/* Undo steps: a failure is added to the error being reported. */
static void undo_attach(int fd, const struct sh_progs *progs,
			struct sh_error *err)
{
	struct sh_error undo = { 0 };

	if (attach_detach(fd, progs, &undo))
		error_note(err, "%s", undo.msg);
}

static void undo_cgroup(const struct cg_root *root, struct cg_target *t,
			pid_t pid, struct sh_error *err)
{
	struct sh_error undo = { 0 };

	if (cg_make_undo(root, t, pid, &undo))
		error_note(err, "%s", undo.msg);
}

/* r, and when it is an error, err classified as reason (unless the site
 * that failed already did). */
static int classified(int r, enum sh_reason reason, struct sh_error *err)
{
	if (r < 0)
		error_reason(err, reason);
	return r;
}

static int attach_to_cgroup(const struct sh_config *cfg,
			    const struct oci_state *st,
			    const struct sh_loaded *l, struct sh_record *rec,
			    bool reap, struct sh_error *err)
{
	const enum sh_reason cgroup = SH_REASON_CGROUP_UNAVAILABLE;
	_cleanup_close_ int fd = -1;
	struct cg_root root;
	int r = classified(cg_find_root(&root, err), cgroup, err);

	if (r)
		return r;
	fd = classified(cg_choice_take(cfg, st, &root, &rec->cg, err), cgroup,
			err);
	if (fd < 0)
		return fd;
	timing_mark("cgroup");
	r = classified(check_path(cfg, fd, l, rec, err), cgroup, err);
	if (r)
		goto err_cgroup;
	timing_mark("path");
	r = classified(attach_commit(fd, rec->cg.id, l, &rec->progs, err),
		       SH_REASON_ATTACH_FAILED, err);
	if (r)
		goto err_cgroup;
	timing_mark("attach");
	r = check_init_stayed(&root, rec, err);
	if (r)
		goto err_detach;
	timing_mark("verify");
	state_key_choose(rec);
	r = classified(state_write(rec, err), SH_REASON_RECORD_FAILED, err);
	if (r)
		goto err_detach;
	timing_mark("record");
	attach_publish(l, &rec->progs);
	if (rec->cg.created || reap) {
		r = classified(reaper_spawn(rec, err), SH_REASON_REAPER_FAILED,
			       err);
		if (r)
			goto err_record;
	}
	return 0;

err_record:
	state_remove(rec->key); /* this root's record, not a same-id other's */
err_detach:
	undo_attach(fd, &rec->progs, err);
err_cgroup:
	undo_cgroup(&root, &rec->cg, st->pid, err);
	return r;
}

/* What asked for the bypass that the kernel lacks: an annotation (its
 * key, "true"), else the policy or defaults entry. */
static void bypass_cause(struct sh_cause *c, const struct sh_record *rec)
{
	static const char by_annotation[] = "annotation ";
	const size_t len = sizeof(by_annotation) - 1;

	if (strncmp(rec->bypass_source, by_annotation, len)) {
		snprintf(c->setting, sizeof(c->setting), "%s",
			 rec->bypass_source);
		return;
	}
	snprintf(c->annotation, sizeof(c->annotation), "%s",
		 rec->bypass_source + len);
	snprintf(c->setting, sizeof(c->setting), "true");
}

static void set_outcome(struct prestart_outcome *done,
			const struct sh_record *rec)
{
	done->outcome = STATS_ATTACHED;
	if (rec->bypass && !rec->progs.bypass_active) {
		done->outcome = STATS_FALLBACK;
		done->reason = SH_REASON_BYPASS_PROT_MEM_UNSUPPORTED;
		bypass_cause(&done->cause, rec);
	}
}

static int load_and_attach(const struct sh_config *cfg,
			   const struct oci_state *st,
			   const struct init_seen *seen,
			   const struct sh_effective *eff, bool reap,
			   struct prestart_outcome *done, struct sh_error *err)
{
	struct sh_loaded loaded;
	struct sh_record rec;
	int r = fill_record(&rec, st, seen, eff, err);

	if (r)
		return r;
	footprint_fill(&rec, eff, cfg);
	r = classified(load_policy(eff, cfg->on_unsupported, LOAD_AT_START,
				   &loaded, err),
		       SH_REASON_PROGRAM_LOAD_FAILED, err);
	if (r)
		return r;
	timing_mark("load");
	r = classified(recording_start(&loaded, &rec, eff, cfg, err),
		       SH_REASON_RECORD_FAILED, err);
	if (r)
		goto abort;
	r = attach_to_cgroup(cfg, st, &loaded, &rec, reap, err);
	if (r)
		goto abort;
	load_free(&loaded);
	set_outcome(done, &rec);
	log_info(
		"attached %d program(s) to cgroup %s (policy '%s', bypass-prot-mem %s)",
		rec.progs.nr, rec.cg.rel, rec.policy,
		rec.progs.bypass_active ? "on" : "off");
	return 0;
abort:
	recording_abort(&rec); /* record mode: nothing was recorded */
	load_free(&loaded);
	return r;
}

int police_container(const struct sh_config *cfg, const struct oci_state *st,
		     const struct sh_effective *eff, bool reap,
		     struct prestart_outcome *done, struct sh_error *err)
{
	_cleanup_close_ int lock = -1;
	struct init_seen seen;
	int r;

	*done = (struct prestart_outcome){
		.outcome = STATS_UNPOLICED,
		.config_last_try = done->config_last_try,
	};
	if (policy_is_empty(eff)) {
		log_debug("no socket policy applies: nothing to attach");
		return 0;
	}
	if (st->pid <= 0) {
		error_reason(err, SH_REASON_STATE_INVALID);
		return error_set(
			err, -EINVAL,
			"OCI state on stdin lacks the container's 'pid'");
	}
	/* Refused once, here, before anything is loaded. */
	r = classified(state_dir_check(err), SH_REASON_RECORD_FAILED, err);
	if (r)
		return r;
	init_see(st, &seen);
	if (already_attached(st, &seen)) {
		/* Counted once, by the run that attached. */
		log_info("policy already attached: nothing to do");
		return 0;
	}
	/* `apply` must see this container's record, or this container must
	 * have the config apply reads (state.h, SH_STATE_CONFIG_LOCK). */
	lock = classified(state_lock(SH_STATE_CONFIG_LOCK, LOCK_SH, err),
			  SH_REASON_RECORD_FAILED, err);
	if (lock < 0)
		return lock;
	if (!done->config_last_try && config_changed(cfg)) {
		done->config_changed = true;
		return -EAGAIN;
	}
	timing_mark("check");
	return load_and_attach(cfg, st, &seen, eff, reap, done, err);
}
