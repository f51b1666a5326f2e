// SPDX-License-Identifier: GPL-2.0-only
/*
 * prestart, top-down: the bundle read once into the container's
 * description (container.c), its effective policy and the checks on it,
 * the pod's sandbox when no hook runs for it, then the container itself:
 * the programs loaded, its cgroup found or made, the attach and the
 * attachment (prestart_police_container(), whose ladder in
 * attach_to_cgroup() undoes the steps before a failed one, in reverse).
 * The sandbox's own attach, further down, ends in the same function.
 */
#include <errno.h>
#include <string.h>
#include <sys/file.h>

#include "cgroup/cg.h"
#include "input/bundle.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "lib/timing.h"
#include "policy/policy.h"
#include "policy/sysctl.h"
#include "prog/attach.h"
#include "prog/load.h"
#include "record/footprint.h"
#include "record/recording.h"
#include "stage/prestart.h"
#include "stage/teardown.h"
#include "state/state.h"

int prestart_run(const struct sh_config *cfg, struct oci_state *st,
		 struct sh_container *c, struct prestart_outcome *done,
		 struct sh_error *err)
{
	struct sh_effective eff;
	int r = oci_load_bundle(st, err);

	/* Its own step: the bundle's JSON is the largest per-container cost
	 * of a start where config and pins are kept (the NRI plugin). */
	timing_mark("bundle");
	/* The one read of the annotations, the bundle's joined to the
	 * state's; also when the bundle was refused, for the audit line. */
	container_read(st, c);
	*done = (struct prestart_outcome){
		.outcome = STATS_UNPOLICED,
		.config_last_try = done->config_last_try,
	};
	if (r) {
		error_reason(err, SH_REASON_STATE_INVALID);
		return r;
	}
	r = policy_resolve(cfg, c, &eff, err);
	if (r)
		return r;
	r = policy_require_check(cfg, c, err);
	if (r)
		return r;
	/* Sysctls the runtime applies after this hook set what a socket
	 * that never calls setsockopt holds: none past the rules. */
	r = sysctl_check(eff.audit ? NULL : eff.policy, st, err);
	if (r)
		return r;
	/* And those a pod's network namespace already holds (the pod's
	 * sysctls are its sandbox's, under containerd and CRI-O). */
	r = sysctl_check_netns(eff.audit ? NULL : eff.policy, st, err);
	if (r)
		return r;
	timing_mark("policy");
	/* A sandbox no hook runs for (containerd's) is policed before any
	 * of its pod's containers runs. */
	r = prestart_sandbox_pod_of(cfg, c, &eff, done, err);
	if (r)
		return r;
	/* No gc here: it reads every attachment, and prestart must stay O(1).
	 * poststop, `gc` and the reaper collect what containers left. */
	return prestart_police_container(cfg, st, &eff, /* reap= */ false, done,
					 err);
}

/*
 * Policing one container once its policy is known: loaded programs, the
 * cgroup, attach, write the attachment (and, for a cgroup the hook made or a sandbox no
 * poststop comes for, its reaper).
 */

/* The container's init as /proc/PID/stat showed it before anything was
 * loaded, read once for both uses: the same-id check and the attachment
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
static int fill_attachment(struct sh_attachment *att,
			   const struct oci_state *st,
			   const struct init_seen *seen,
			   const struct sh_effective *eff, struct sh_error *err)
{
	char state = seen->state;

	memset(att, 0, sizeof(*att));
	snprintf(att->id, sizeof(att->id), "%s", st->id);
	snprintf(att->k8s_namespace, sizeof(att->k8s_namespace), "%s",
		 eff->who.namespace ? eff->who.namespace : "");
	snprintf(att->pod, sizeof(att->pod), "%s",
		 eff->who.pod ? eff->who.pod : "");
	snprintf(att->container, sizeof(att->container), "%s",
		 eff->who.name ? eff->who.name : "");
	att->pid = st->pid;
	att->pid_start = seen->start;
	if (state_proc_exiting(state)) {
		error_reason(err, SH_REASON_INIT_EXITED);
		return error_set(err, -ESRCH,
				 "container init pid %d is exiting (state %c)",
				 st->pid, state);
	}
	policy_fill_attachment(eff, att);
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

/* One attachment of this id: this container's (a second prestart), an
 * earlier container's of the same cgroup, which now holds this
 * container's init alone, or one that is gone (released), or another
 * runtime root's container with the same id, left alone: also one whose
 * init has exited while its cgroup, where this container's init now is,
 * still holds its processes. */
static int visit_same_id(const struct sh_attachment *att, void *data)
{
	struct earlier *e = data;
	_cleanup_close_ int fd = -1;
	struct sh_error err = { 0 };
	struct sh_progs now;
	struct cg_root root;

	if (att->pid == e->st->pid && att->pid_start == e->start) {
		fd = cg_open_attached(&att->cg);
		e->attached |= fd >= 0 && !attach_query_ours(fd, &now) &&
			       same_programs(&att->progs, &now);
		return 0;
	}
	if (!cg_find_root(&root, &err) &&
	    !cg_pid_inside(&root, e->st->pid, &att->cg, &err)) {
		if (!holds_only(&root, e->st->pid)) {
			/* Another root's container of the id, its init gone,
			 * its processes still there: they keep its policy. */
			log_info(
				"keeping the record of container %s (pid %d): its cgroup %s holds other processes than this container's init",
				att->id, att->pid, att->cg.rel);
			return 0;
		}
		log_info(
			"releasing the record of an earlier container %s (pid %d) of its cgroup",
			att->id, att->pid);
		teardown_release(att);
	} else if (teardown_release_empty(att) == 0) {
		log_info(
			"released the record of an earlier container %s (pid %d)",
			att->id, att->pid);
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
			     const struct sh_attachment *att,
			     struct sh_error *err)
{
	int r = cg_pid_inside(root, att->pid, &att->cg, err);

	if (r) {
		error_reason(err, SH_REASON_INIT_ESCAPED);
		return r;
	}
	if (!state_proc_running(att->pid, att->pid_start)) {
		error_reason(err, SH_REASON_INIT_EXITED);
		return error_set(
			err, -ESRCH,
			"container init pid %d exited while the policy was being attached",
			att->pid);
	}
	return 0;
}

static int check_path(const struct sh_config *cfg, int fd,
		      const struct sh_loaded *l,
		      const struct sh_attachment *att, struct sh_error *err)
{
	enum bpf_attach_type types[SH_PROG_KINDS];
	int nr = attach_types(l, types);

	return attach_path_progs_check(fd, att->cg.rel, types, nr, cfg, err);
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
			    const struct sh_loaded *l,
			    struct sh_attachment *att, bool reap,
			    struct sh_error *err)
{
	const enum sh_reason cgroup = SH_REASON_CGROUP_UNAVAILABLE;
	_cleanup_close_ int fd = -1;
	struct cg_root root;
	int r = classified(cg_find_root(&root, err), cgroup, err);

	if (r)
		return r;
	fd = classified(cg_choice_take(cfg, st, &root, &att->cg, err), cgroup,
			err);
	if (fd < 0)
		return fd;
	timing_mark("cgroup");
	r = classified(check_path(cfg, fd, l, att, err), cgroup, err);
	if (r)
		goto err_cgroup;
	timing_mark("path");
	r = classified(attach_commit(fd, att->cg.id, l, &att->progs, err),
		       SH_REASON_ATTACH_FAILED, err);
	if (r)
		goto err_cgroup;
	timing_mark("attach");
	r = check_init_stayed(&root, att, err);
	if (r)
		goto err_detach;
	timing_mark("verify");
	state_key_choose(att);
	r = classified(state_write(att, err), SH_REASON_RECORD_FAILED, err);
	if (r)
		goto err_detach;
	timing_mark("record");
	attach_publish(l, &att->progs);
	if (att->cg.created || reap) {
		r = classified(teardown_reaper_spawn(att, err),
			       SH_REASON_REAPER_FAILED, err);
		if (r)
			goto err_attachment;
	}
	return 0;

err_attachment:
	state_remove(
		att->key); /* this root's attachment, not a same-id other's */
err_detach:
	undo_attach(fd, &att->progs, err);
err_cgroup:
	undo_cgroup(&root, &att->cg, st->pid, err);
	return r;
}

/* What asked for the bypass that the kernel lacks: an annotation (its
 * key, "true"), else the policy or defaults entry. */
static void bypass_cause(struct sh_cause *c, const struct sh_attachment *att)
{
	static const char by_annotation[] = "annotation ";
	const size_t len = sizeof(by_annotation) - 1;

	if (strncmp(att->bypass_source, by_annotation, len)) {
		snprintf(c->setting, sizeof(c->setting), "%s",
			 att->bypass_source);
		return;
	}
	snprintf(c->annotation, sizeof(c->annotation), "%s",
		 att->bypass_source + len);
	snprintf(c->setting, sizeof(c->setting), "true");
}

static void set_outcome(struct prestart_outcome *done,
			const struct sh_attachment *att)
{
	done->outcome = STATS_ATTACHED;
	if (att->bypass && !att->progs.bypass_active) {
		done->outcome = STATS_FALLBACK;
		done->reason = SH_REASON_BYPASS_PROT_MEM_UNSUPPORTED;
		bypass_cause(&done->cause, att);
	}
}

int prestart_police_container(const struct sh_config *cfg,
			      const struct oci_state *st,
			      const struct sh_effective *eff, bool reap,
			      struct prestart_outcome *done,
			      struct sh_error *err)
{
	_cleanup_close_ int lock = -1;
	struct init_seen seen;
	struct sh_loaded loaded;
	struct sh_attachment att;
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
	/* `apply` must see this container's attachment, or this container must
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
	r = fill_attachment(&att, st, &seen, eff, err);
	if (r)
		return r;
	footprint_fill(&att, eff, cfg);
	r = classified(load_policy(eff, cfg->on_unsupported, LOAD_AT_START,
				   &loaded, err),
		       SH_REASON_PROGRAM_LOAD_FAILED, err);
	if (r)
		return r;
	timing_mark("load");
	r = classified(recording_start(&loaded, &att, eff, cfg, err),
		       SH_REASON_RECORD_FAILED, err);
	if (r)
		goto abort;
	r = attach_to_cgroup(cfg, st, &loaded, &att, reap, err);
	if (r)
		goto abort;
	load_free(&loaded);
	set_outcome(done, &att);
	log_info(
		"attached %d program(s) to cgroup %s (policy '%s', bypass-prot-mem %s)",
		att.progs.nr, att.cg.rel, att.policy,
		att.progs.bypass_active ? "on" : "off");
	return 0;
abort:
	recording_abort(&att); /* record mode: nothing was recorded */
	load_free(&loaded);
	return r;
}

/*
 * Policing a pod sandbox the runtime runs no hook for: prestart.h says
 * when that is, and why the sandbox needs a policy at all.
 */

static int locked_attach(const struct sh_config *cfg,
			 const struct oci_state *st,
			 const struct sh_effective *eff,
			 struct prestart_outcome *done, struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(/* create= */ true, err);

	if (dir < 0)
		return dir;
	/* Two containers of a pod created at once would both find the
	 * sandbox unattached; the second must find the first's attachment. */
	if (flock(dir, LOCK_EX) < 0)
		return error_errno(err, -errno, "cannot lock %s", state_dir());
	return prestart_police_container(cfg, st, eff, /* reap= */ true, done,
					 err);
}

static int police_sandbox(const struct sh_config *cfg,
			  const struct sandbox_target *sb,
			  struct prestart_outcome *done, struct sh_error *err)
{
	struct oci_state st = { .id = sb->id,
				.status = "created",
				.pid = sb->pid };
	struct sh_effective eff;
	int r;

	if (!cfg->sandbox_policy)
		return 0;
	if (!sb->id || !oci_valid_id(sb->id) || sb->pid <= 0) {
		error_reason(err, SH_REASON_STATE_INVALID);
		return error_set(
			err, -EINVAL,
			"pod sandbox %s (pid %d): not a container id and pid",
			sb->id ? LOG_Q(sb->id) : "(none)", (int)sb->pid);
	}
	memset(&eff, 0, sizeof(eff));
	policy_sandbox(cfg, &eff);
	eff.who.sandbox = true;
	eff.who.namespace = sb->k8s_namespace;
	eff.who.pod = sb->pod;
	r = locked_attach(cfg, &st, &eff, done, err);
	if (r == -EAGAIN && done->config_changed)
		return r; /* the caller reads the config again */
	if (r) {
		error_note(err, "while policing pod sandbox %s", sb->id);
		return r;
	}
	log_debug("pod sandbox %s (pid %d) has sandbox_policy '%s'", sb->id,
		  (int)sb->pid, cfg->sandbox_policy->name);
	return 0;
}

int prestart_sandbox_police(const struct sh_config *cfg,
			    const struct sandbox_target *sb,
			    struct sh_error *err)
{
	/* The caller read cfg, and has no way to read it again. */
	struct prestart_outcome done = { .config_last_try = true };

	return police_sandbox(cfg, sb, &done, err);
}

/* name is prefix, id, suffix, exactly. */
static bool named(const char *name, size_t len, const char *prefix,
		  const char *id, const char *suffix)
{
	size_t p = strlen(prefix), i = strlen(id), s = strlen(suffix);

	return len == p + i + s && !strncmp(name, prefix, p) &&
	       !strncmp(name + p, id, i) && !strncmp(name + p + i, suffix, s);
}

static bool component_named(const char *name, size_t len, const char *id)
{
	return named(name, len, "", id, "") ||
	       named(name, len, "cri-containerd-", id, ".scope") ||
	       named(name, len, "crio-", id, ".scope") ||
	       named(name, len, "crio-", id, "");
}

/* Where the last component of the path [rel, end) starts. */
static const char *last_component(const char *rel, const char *end)
{
	while (end > rel && end[-1] != '/')
		end--;
	return end;
}

bool prestart_sandbox_cgroup_named(const char *rel, const char *id)
{
	const char *end = rel + strlen(rel);
	const char *last = last_component(rel, end);

	if (!*id)
		return false;
	if (component_named(last, (size_t)(end - last), id))
		return true;
	/* crun's child for systemd's single-owner rule */
	if (strcmp(last, "container") || last == rel)
		return false;
	end = last - 1;
	last = last_component(rel, end);
	return component_named(last, (size_t)(end - last), id);
}

static int check_cgroup(pid_t pid, const char *id, struct sh_error *err)
{
	char rel[PATH_MAX];
	int r = cg_pid_path(pid, rel, sizeof(rel), err);

	if (r)
		return r;
	if (prestart_sandbox_cgroup_named(rel, id))
		return 0;
	error_reason(err, SH_REASON_CGROUP_UNAVAILABLE);
	return error_set(
		err, -ESRCH,
		"pod sandbox %s: pid %d, whose namespaces the container joins, is in cgroup %s, not the sandbox's: refusing to guess which cgroup to police",
		id, (int)pid, rel);
}

int prestart_sandbox_pod_of(const struct sh_config *cfg,
			    const struct sh_container *c,
			    const struct sh_effective *eff,
			    struct prestart_outcome *done, struct sh_error *err)
{
	const char *id = c->sandbox_id;
	struct sandbox_target sb = { id, 0, eff->who.namespace, eff->who.pod };
	int r;

	if (!cfg->sandbox_policy || eff->sandbox || !id)
		return 0;
	if (!oci_valid_id(id)) {
		error_reason(err, SH_REASON_STATE_INVALID);
		error_cause(err, c->who.sandbox_id_key, id);
		return error_set(err, -EINVAL,
				 "annotation %s=%s is not a container id",
				 c->who.sandbox_id_key, LOG_Q(id));
	}
	/* A container that joins none of the sandbox's namespaces cannot
	 * see the pause process, let alone trace it. */
	sb.pid = bundle_joined_pid(c->st);
	if (!sb.pid) {
		log_debug(
			"pod sandbox %s: the container joins none of its namespaces by pid",
			id);
		return 0;
	}
	r = check_cgroup(sb.pid, id, err);
	if (r)
		return r;
	return police_sandbox(cfg, &sb, done, err);
}
