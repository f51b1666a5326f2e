/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * prestart (or createRuntime): resolve the policy, load and verify the
 * programs, find or make the cgroup, attach, write the attachment; and the pod's
 * sandbox, policed by the same attach. Any error undoes everything, and
 * err holds the one line to report.
 */
#ifndef SH_PRESTART_H
#define SH_PRESTART_H

#include <stdbool.h>
#include <sys/types.h>

#include "config/config.h"
#include "input/container.h"
#include "input/oci.h"
#include "lib/error.h"
#include "policy/policy.h"
#include "state/stats.h"

/* What a prestart that succeeded did, for the node's stats. */
struct prestart_outcome {
	enum stats_outcome outcome; /* ATTACHED, UNPOLICED or FALLBACK */
	enum sh_reason reason; /* why FALLBACK, else SH_REASON_NONE */
	struct sh_cause cause; /* for FALLBACK: what asked for it */
	/* -EAGAIN: the config file changed since cfg was read from it, and
	 * nothing was done: read it again and run again. */
	bool config_changed;
	/* Set by the caller: use cfg even so (the last try). */
	bool config_last_try;
};

/*
 * The whole of prestart for the container in st: loads its bundle and
 * reads the container into c (which the caller's audit lines use, also
 * when prestart fails), resolves and checks its policy, polices the
 * pod's sandbox when no hook runs for it, then the container.
 */
int prestart_run(const struct sh_config *cfg, struct oci_state *st,
		 struct sh_container *c, struct prestart_outcome *done,
		 struct sh_error *err);

/*
 * Policing one container whose effective policy is known: loads,
 * finds the cgroup of st->pid, attaches, writes its attachment under st->id: all or
 * nothing; nothing to do for an empty policy or a container already
 * attached. With reap, a reaper releases the attachment when the cgroup
 * empties even when the runtime made it (a pod sandbox no poststop will
 * come for). done->config_last_try is the caller's (kept).
 */
int prestart_police_container(const struct sh_config *cfg,
			      const struct oci_state *st,
			      const struct sh_effective *eff, bool reap,
			      struct prestart_outcome *done,
			      struct sh_error *err);

/*
 * The pod sandbox's cgroup is policed too (sandbox_policy). A socket is
 * policed by the cgroup it was created in, and a container that shares
 * its pod's pid namespace can make the pause process create one for it
 * (ptrace, then pidfd_getfd()): an unpoliced sandbox cgroup is a way out
 * of every policy of the pod. The pause process never makes a socket.
 *
 * Three ways in, one attach:
 *  - the runtime runs the hook for the sandbox (CRI-O's hooks.d, a
 *    sandbox's own hooks): prestart, with policy_sandbox();
 *  - containerd 2.x builds the sandbox's spec from its default spec, not
 *    from the handler's base_runtime_spec (podsandbox/sandbox_run_linux.go
 *    calls runtimeSpec(id, "", ...)), so no hook runs for it: the first
 *    workload container of the pod polices it from its own prestart
 *    (prestart_sandbox_pod_of());
 *  - an NRI plugin at RunPodSandbox: prestart_sandbox_police().
 * Each writes the sandbox's attachment under its own id, so poststop, gc and the
 * reaper release it like any container; a second attempt finds it
 * attached and does nothing.
 */

struct sandbox_target {
	const char *id; /* the sandbox's id: a valid container id */
	pid_t pid; /* its init, the pause process */
	/* The pod's namespace and name: labels for status, or NULL. */
	const char *k8s_namespace;
	const char *pod;
};

/*
 * Attaches sandbox_policy to the cgroup of sb->pid and writes its attachment under
 * sb->id, with a reaper that releases it once the cgroup is empty or gone
 * (no poststop runs for a sandbox policed this way). 0 when done, when
 * sandbox_policy is "" or when it is already attached; else -errno and
 * one line in err, and nothing attached. Serialized with other callers
 * by a lock on the state directory. This is what an NRI plugin calls at
 * RunPodSandbox (cfg from config_load(), the sandbox's id and pid, a pid
 * of the caller's pid namespace: the host's). The reaper is forked twice
 * from the caller, and the child goes on with the hook's own code: call
 * it from a process that has one thread, or fork first.
 */
int prestart_sandbox_police(const struct sh_config *cfg,
			    const struct sandbox_target *sb,
			    struct sh_error *err);

/*
 * From a workload container's prestart (c read with its bundle loaded,
 * eff its effective policy): polices the pod's sandbox when the container's
 * spec names it (the sandbox id its runtime writes: container.h, and a
 * /proc/<pid>/ns/... path in linux.namespaces, checked against the cgroup
 * that pid is in: prestart_sandbox_cgroup_named()).
 * 0 when there is none, or nothing to do; -EAGAIN with
 * done->config_changed as prestart_police_container() says.
 */
int prestart_sandbox_pod_of(const struct sh_config *cfg,
			    const struct sh_container *c,
			    const struct sh_effective *eff,
			    struct prestart_outcome *done,
			    struct sh_error *err);

/*
 * The cgroup rel (a path below the cgroup2 mount) is the one containerd
 * or CRI-O made for the sandbox id, by name, exactly: its last component
 * is cri-containerd-<id>.scope (containerd, systemd), <id> (containerd,
 * cgroupfs, and /k8s.io/<id> without a cgroup parent), crio-<id>.scope
 * (CRI-O, systemd) or crio-<id> (CRI-O, cgroupfs), or the component above
 * crun's "container" child (systemd's single-owner rule). A pod-chosen
 * "crio" or "scope" names no such cgroup.
 */
bool prestart_sandbox_cgroup_named(const char *rel, const char *id);

#endif /* SH_PRESTART_H */
