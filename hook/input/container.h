/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One container, as the OCI state and its bundle describe it: read once
 * (container_read()), then what policy, require, sandbox and the audit
 * lines read instead of the annotations. Only this module looks
 * annotations up; what a value means (a list's entry, a policy name, a
 * boolean) is decided by whoever reads it, in the order it always was,
 * so that the first refusal stays the same.
 */
#ifndef SH_CONTAINER_H
#define SH_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * CDI (Container Device Interface) devices of kind sockopt-hook.io/policy:
 * one per policy that a workload may name, and one for the bypass. A
 * runtime that injects such a device adds that device's hooks to the
 * container's spec: `oci-sockopt-hook createRuntime --cdi-device
 * sockopt-hook.io/policy=NAME` and the same for poststop. The request is
 * what a workload's annotation would say, and goes through the same
 * allow-list and refusals (policy.c). It is read from the spec's hooks
 * (config.json), not only from the one invocation, so that every
 * invocation of the hook for a container (one per device, and the hooks.d
 * or base-spec one) sees every request: the first attaches, the others
 * find it attached (prestart.c). Only the runtime writes a spec's hooks:
 * neither a pod author nor `docker run` can add one.
 */

#define SH_CDI_KIND "sockopt-hook.io/policy"
/* The device that asks for the bypass, sockopt-hook.io/bypass-prot-mem
 * "true": no policy of that name gets a device. */
#define SH_CDI_BYPASS "bypass-prot-mem"
/* The option of the hook's stages that names the device. */
#define SH_CDI_OPTION "cdi-device"
/* At most this many of our devices per container. */
#define SH_CDI_MAX 8
/* "sockopt-hook.io/policy=<policy name>" and its NUL. */
#define SH_CDI_DEVICE_MAX (sizeof(SH_CDI_KIND "=") + 64)
/* The spec file's name in /etc/cdi (or /var/run/cdi). */
#define SH_CDI_SPEC_NAME "sockopt-hook.io-policy.json"
#define SH_CDI_ETC "/etc/cdi"
#define SH_CDI_RUN "/var/run/cdi"

/* Why policy cannot be a CDI device name (CDI's parser: letters, digits,
 * '_', '-', '.', ':', starting and ending with a letter or digit; not the
 * bypass device's name), or NULL when it can. */
const char *container_cdi_policy_problem(const char *policy);

struct json_object;
/* The devices of ours that config_root's hooks (prestart, createRuntime)
 * name with --cdi-device, and own (the hook's own, or NULL), each once,
 * into out (pointers into config_root or own): how many, or -E2BIG. */
int container_cdi_requested(struct json_object *config_root, const char *own,
			    const char **ret, int max);

#include "input/oci.h"
/*
 * Who the container is in its pod, from the keys the runtime itself
 * writes. CRI-O copies every pod annotation into every container and
 * containerd passes those its pod_annotations globs allow, so a key of the
 * other runtime's set may be a copy that the workload chose.
 */
struct pod_identity {
	bool sandbox; /* a pod's pause container: sandbox_policy only */
	const char *runtime; /* "CRI-O", "containerd", or NULL: no type key */
	const char *name; /* the container's name, or NULL */
	const char *name_key; /* the annotation the name came from */
	const char *namespace_key, *pod_key; /* where those came from */
	/* The pod's namespace and name, from the same runtime's keys, or
	 * NULL: labels for status, metrics and audit lines, never a
	 * decision. */
	const char *namespace;
	const char *pod;
	/*
	 * The pod sandbox's id for a workload container, and its key: the
	 * type writer's (CRI-O writes io.kubernetes.cri-o.SandboxID after
	 * copying the pod's annotations, so a copied
	 * io.kubernetes.cri.sandbox-id never counts there), the other
	 * runtime's only where the writer's is absent; NULL without a type
	 * key. Pod-settable at worst: prestart.c accepts only an id the
	 * sandbox's cgroup is named after, exactly.
	 */
	const char *sandbox_id;
	const char *sandbox_id_key;
};

/* A Kubernetes (DNS label) or podman name: [A-Za-z0-9][A-Za-z0-9_.-]*,
 * at most SH_MAX_CONTAINER_NAME. */
bool container_pod_valid_name(const char *name);
/*
 * The owner a pod's name says, as Kubernetes' controllers name the pods
 * they make (the runtime passes no ownerReferences): a ReplicaSet's,
 * DaemonSet's or Job's pod is <owner>-<5 of rand's alphabet
 * [bcdfghjklmnpqrstvwxz2456789]>, a StatefulSet's <owner>-<ordinal>; a
 * Deployment's ReplicaSet is <deployment>-<pod-template-hash, 6 to 10 of
 * that alphabet>, so the replicas of every rollout of one Deployment have
 * one owner, the Deployment. Any other name is its own owner. At most len
 * - 1 bytes into buf; "-" for no name.
 */
void container_pod_owner(const char *pod, char *buf, size_t len);

/* The runtimes whose keys say who a container is: containerd's, then
 * CRI-O's. */
#define POD_NR_RUNTIMES 2
enum pod_key {
	POD_TYPE,
	POD_NAME,
	POD_NAMESPACE,
	POD_POD,
	POD_SANDBOX_ID,
	POD_NR_KEYS
};
/* The annotation key of runtime i's k. */
const char *container_pod_key_name(size_t runtime, enum pod_key k);

/* The values of those keys in a container's spec (NULL: absent), as
 * container.c reads them. */
struct pod_annotations {
	const char *value[POD_NR_RUNTIMES][POD_NR_KEYS];
};

/* Who the container is, from its runtime keys; names unchecked, so that
 * an audit line can show a name container_pod_check() refuses. */
void container_pod_identify(const struct pod_annotations *seen,
			    struct pod_identity *ret_id);
/* 0, or -EINVAL when a name is not a Kubernetes or podman name. */
int container_pod_check(const struct pod_identity *id, struct sh_error *err);

#include "lib/error.h"
#include "lib/sh_types.h"

/* The per-container settings a workload may write: KEY, KEY.<name>, and
 * its entry in the list containers.KEY. */
enum container_setting {
	CONTAINER_POLICY,
	CONTAINER_BYPASS,
	CONTAINER_RECORD,
	CONTAINER_MODE,
	CONTAINER_NR_SETTINGS,
};

struct container_setting_values {
	char named_key[SH_ANNOTATION_KEY_MAX]; /* KEY.<name>, "" unnamed */
	const char *named; /* KEY.<name>'s value, or NULL */
	const char *list; /* containers.KEY, unparsed, or NULL */
	const char *plain; /* KEY, or NULL */
};

struct sh_container {
	/* The state, for what is not an annotation: its bundle's
	 * namespaces and mounts (bundle.c), the pid and cgroup. */
	const struct oci_state *st;
	const char *id;
	const char *bundle; /* NULL when absent */
	pid_t pid;
	/* Who it is in its pod; names unchecked (container_pod_check()). */
	struct pod_identity who;
	struct container_setting_values setting[CONTAINER_NR_SETTINGS];
	/* The operator's node.sockopt-hook.io/ keys and the runtime's. */
	const char *handler; /* SH_ANNOTATION_HANDLER */
	const char *nri_mark; /* SH_ANNOTATION_NRI */
	const char *sandbox_id; /* who.sandbox_id */
	/* The CDI devices of ours the spec's hooks ask for (container.h): each
	 * one a request as an annotation would be. nr_cdi < 0: too many. */
	const char *cdi[SH_CDI_MAX];
	int nr_cdi;
	/* A key the hooks.d file's regex reacts to is present, or a CDI
	 * device of ours is asked for. */
	bool has_policy_key;
};

/* A setting's value for this container, and the key it came from. */
struct annotation_pick {
	char key[SH_ANNOTATION_KEY_MAX]; /* where the value came from */
	char entry[SH_ANNOTATION_ENTRY_MAX]; /* a value from a list */
	const char *value; /* NULL: no annotation for this container */
};

/* Fills c from st (its annotations as they are now: the state's, or
 * merged with the bundle's). c points into st: read it again after
 * oci_load_bundle(). Never fails: a name container_pod_check() refuses is kept. */
void container_read(const struct oci_state *st, struct sh_container *c);
/* KEY.<name>, else <name>'s entry in containers.KEY, else KEY: 0 (value
 * NULL when none), or -EINVAL for a containers.KEY that is no list. For
 * the policy and the bypass, a CDI device asking for one is the pick
 * (its key "CDI device sockopt-hook.io/policy=NAME"); one that is not a
 * device of ours, two policies, or an annotation saying otherwise is
 * refused. */
int container_pick(const struct sh_container *c, enum container_setting s,
		   struct annotation_pick *pick, struct sh_error *err);

#endif /* SH_CONTAINER_H */
