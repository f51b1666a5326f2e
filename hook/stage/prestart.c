// SPDX-License-Identifier: GPL-2.0-only
/*
 * The data path of prestart: OCI state and bundle, read once into the
 * container's description (container.c); operator config and
 * annotations, effective policy; then, for a container of a pod whose
 * sandbox no hook runs for, that sandbox (sandbox.c); then the container
 * itself (police.c). prestart_police() is the part after the bundle, which
 * the NRI plugin calls for a container it polices in-process.
 */
#include "lib/timing.h"
#include "policy/policy.h"
#include "policy/sysctl.h"
#include "stage/police.h"
#include "stage/prestart.h"
#include "stage/sandbox.h"

int prestart_run(const struct sh_config *cfg, struct oci_state *st,
		 struct sh_container *c, struct prestart_outcome *done,
		 struct sh_error *err)
{
	int r = oci_load_bundle(st, err);

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
	return prestart_police(cfg, c, done, err);
}

int prestart_police(const struct sh_config *cfg, const struct sh_container *c,
		    struct prestart_outcome *done, struct sh_error *err)
{
	const struct oci_state *st = c->st;
	struct sh_effective eff;
	int r;

	*done = (struct prestart_outcome){
		.outcome = STATS_UNPOLICED,
		.config_last_try = done->config_last_try,
	};
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
	r = sandbox_police_pod_of(cfg, c, &eff, done, err);
	if (r)
		return r;
	/* No gc here: it reads every record, and prestart must stay O(1).
	 * poststop, `gc` and the reaper collect what containers left. */
	return police_container(cfg, st, &eff, false, done, err);
}
