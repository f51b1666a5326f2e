// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which cgroup the policy goes on: the container's own when the runtime
 * gave it one, else one the hook makes below the shared one and moves the
 * init into. A cgroup the hook makes is not the root of the container's
 * cgroup namespace (the runtime made that before prestart), so processes
 * the runtime starts later with exec join the shared cgroup, unpoliced:
 * the operator may refuse such containers instead (on_shared_cgroup). And
 * a container that can write to a cgroup mount could move itself out of
 * the policed cgroup: refused whenever it could reach one outside it,
 * through any mount of the hierarchy (bundle.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "cgroup/cg_choice.h"
#include "cgroup/cg_make.h"
#include "input/bundle.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "lib/mountinfo.h"

/*
 * A container that can reach the host's cgroup2 tree through a bind sees
 * whatever the bind's source shows, whatever its cgroup namespace: the
 * namespace stops it moving itself out only where the kernel treats
 * namespaces as delegation boundaries, which nsdelegate turns on for the
 * whole hierarchy.
 */
static bool reach_contained(const struct bundle_cg_reach *r, bool own_ns,
			    struct mountinfo *mi)
{
	const char *text;

	if (!r->fresh && !r->bound)
		return true;
	if (!own_ns)
		return false;
	if (!r->bound)
		return true;
	text = mountinfo_text(mi);
	return text && mountinfo_cgroup2_nsdelegate(text);
}

int cg_choice_decide_in(const struct sh_config *cfg, const struct oci_state *st,
			const char *cg2_mount, struct mountinfo *mi,
			const char *rel, bool dedicated, struct sh_error *err)
{
	struct bundle_cg_reach r;
	bool own_ns;

	bundle_cgroup_reach(st, cg2_mount, mi, &r);
	own_ns = bundle_own_cgroupns(st);
	if (dedicated && reach_contained(&r, own_ns, mi))
		return CG_USE_OWN;
	if (dedicated && !own_ns) {
		error_reason(err, SH_REASON_CGROUP_WRITABLE);
		return error_set(
			err, -EPERM,
			"the bundle gives the container a writable cgroup mount (%s) and no cgroup namespace of its own: it could move itself out of its cgroup %s, unpoliced; refusing",
			r.why, rel);
	}
	if (dedicated) {
		error_reason(err, SH_REASON_CGROUP_WRITABLE);
		return error_set(
			err, -EPERM,
			"the bundle gives the container a writable view of the cgroup2 tree (%s), and its cgroup namespace is no boundary: the cgroup2 hierarchy has no nsdelegate (see probe); it could move itself out of its cgroup %s, unpoliced; refusing",
			r.why, rel);
	}
	if (cfg->on_shared_cgroup == ON_SHARED_CGROUP_REFUSE) {
		error_reason(err, SH_REASON_CGROUP_SHARED);
		error_cause(err, NULL, "on_shared_cgroup=refuse");
		return error_set(
			err, -EPERM,
			"cgroup %s is not the container's own (a runtime without a cgroup manager?), and in a cgroup made by the hook processes started with exec would not be policed: refusing because on_shared_cgroup is 'refuse' in %s",
			rel, cfg->path);
	}
	if (r.fresh || r.bound) {
		error_reason(err, SH_REASON_CGROUP_WRITABLE);
		return error_set(
			err, -EPERM,
			"cgroup %s is not the container's own and the bundle gives the container a writable cgroup mount (%s): it could move itself out of a cgroup made by the hook back into %s, unpoliced; refusing",
			rel, r.why, rel);
	}
	return CG_MAKE_OWN;
}

int cg_choice_decide(const struct sh_config *cfg, const struct oci_state *st,
		     const char *cg2_mount, const char *rel, bool dedicated,
		     struct sh_error *err)
{
	struct mountinfo mi = { 0 };
	int r = cg_choice_decide_in(cfg, st, cg2_mount, &mi, rel, dedicated,
				    err);

	mountinfo_done(&mi);
	return r;
}

int cg_choice_take(const struct sh_config *cfg, const struct oci_state *st,
		   const struct cg_root *root, struct cg_target *t,
		   struct sh_error *err)
{
	_cleanup_close_ int fd = -1;
	bool dedicated;
	int choice;

	fd = cg_locate(root, st->pid, t, &dedicated, err);
	if (fd < 0)
		return fd;
	choice = cg_choice_decide(cfg, st, root->mount, t->rel, dedicated, err);
	if (choice == CG_USE_OWN)
		return take_fd(&fd);
	if (choice < 0)
		return choice;
	log_info("cgroup %s is not the container's own: creating one", t->rel);
	return cg_make_own(root, st->pid, st->id, t, err);
}
