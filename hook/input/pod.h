/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_POD_H
#define SH_POD_H

#include <stdbool.h>

#include "lib/error.h"
#include "lib/sh_types.h"

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
	 * key. Pod-settable at worst: sandbox.c accepts only an id the
	 * sandbox's cgroup is named after, exactly.
	 */
	const char *sandbox_id;
	const char *sandbox_id_key;
};

/* A Kubernetes (DNS label) or podman name: [A-Za-z0-9][A-Za-z0-9_.-]*,
 * at most SH_MAX_CONTAINER_NAME. */
bool pod_valid_name(const char *name);
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
void pod_owner(const char *pod, char *buf, size_t len);

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
const char *pod_key_name(size_t runtime, enum pod_key k);

/* The values of those keys in a container's spec (NULL: absent), as
 * container.c reads them. */
struct pod_annotations {
	const char *value[POD_NR_RUNTIMES][POD_NR_KEYS];
};

/* Who the container is, from its runtime keys; names unchecked, so that
 * an audit line can show a name pod_check() refuses. */
void pod_identify(const struct pod_annotations *seen, struct pod_identity *id);
/* 0, or -EINVAL when a name is not a Kubernetes or podman name. */
int pod_check(const struct pod_identity *id, struct sh_error *err);

#endif /* SH_POD_H */
