// SPDX-License-Identifier: GPL-2.0-only
/*
 * Policing a pod sandbox the runtime runs no hook for: sandbox.h says
 * when that is, and why the sandbox needs a policy at all.
 */
#include <errno.h>
#include <string.h>
#include <sys/file.h>

#include "cgroup/cg.h"
#include "input/bundle.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "stage/police.h"
#include "stage/sandbox.h"
#include "state/state.h"

static int locked_attach(const struct sh_config *cfg,
			 const struct oci_state *st,
			 const struct sh_effective *eff,
			 struct prestart_outcome *done, struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(true, err);

	if (dir < 0)
		return dir;
	/* Two containers of a pod created at once would both find the
	 * sandbox unattached; the second must find the first's record. */
	if (flock(dir, LOCK_EX) < 0)
		return error_errno(err, -errno, "cannot lock %s", state_dir());
	return police_container(cfg, st, eff, true, done, err);
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

int sandbox_police(const struct sh_config *cfg, const struct sandbox_target *sb,
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

bool sandbox_cgroup_named(const char *rel, const char *id)
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
	if (sandbox_cgroup_named(rel, id))
		return 0;
	error_reason(err, SH_REASON_CGROUP_UNAVAILABLE);
	return error_set(
		err, -ESRCH,
		"pod sandbox %s: pid %d, whose namespaces the container joins, is in cgroup %s, not the sandbox's: refusing to guess which cgroup to police",
		id, (int)pid, rel);
}

int sandbox_police_pod_of(const struct sh_config *cfg,
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
