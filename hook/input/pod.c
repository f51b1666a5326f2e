// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who a container is: a pod sandbox or not, and its name for the
 * per-container KEY.<name> annotations.
 *
 * What each runtime writes into the OCI config (read in their sources):
 *  - containerd (internal/cri/annotations: DefaultCRIAnnotations) sets
 *    io.kubernetes.cri.container-type ("sandbox" or "container") and, for
 *    containers, io.kubernetes.cri.container-name. Its spec options apply
 *    them after the pod annotations that pod_annotations lets through, so
 *    its own values win over copies.
 *  - CRI-O (internal/factory/container: SpecAddAnnotations) copies every
 *    sandbox (pod) annotation first, then sets
 *    io.kubernetes.cri-o.ContainerType "container" (the pause container
 *    gets "sandbox" in server/sandbox_run_linux.go), and last adds the
 *    kubelet's labels, among them io.kubernetes.container.name. It never
 *    writes io.kubernetes.cri.*: those are copies of pod annotations.
 *
 * So a container is a sandbox only when every type key present says so
 * (a copied "sandbox" cannot outvote the runtime's "container"), and its
 * name comes from the key set of the runtime that wrote the type key.
 * The pod's namespace and name come from the same set: containerd's
 * io.kubernetes.cri.sandbox-namespace and sandbox-name
 * (DefaultCRIAnnotations), CRI-O's io.kubernetes.pod.namespace and
 * io.kubernetes.pod.name (the kubelet's container labels, added last).
 * The sandbox's id for a workload container: containerd's
 * io.kubernetes.cri.sandbox-id, CRI-O's io.kubernetes.cri-o.SandboxID
 * (set after the pod's annotations in SpecAddAnnotations).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "input/pod.h"
#include "lib/log.h"

static const struct runtime_keys {
	const char *runtime;
	/* type, name, namespace, pod, sandbox id */
	const char *key[POD_NR_KEYS];
} runtimes[POD_NR_RUNTIMES] = {
	{ "containerd",
	  { "io.kubernetes.cri.container-type",
	    "io.kubernetes.cri.container-name",
	    "io.kubernetes.cri.sandbox-namespace",
	    "io.kubernetes.cri.sandbox-name",
	    "io.kubernetes.cri.sandbox-id" } },
	/* Last: when both sets claim a container, CRI-O's wins, since CRI-O
	 * copies every pod annotation while containerd passes another
	 * runtime's keys only if the operator's globs let them through. */
	{ "CRI-O",
	  { "io.kubernetes.cri-o.ContainerType", "io.kubernetes.container.name",
	    "io.kubernetes.pod.namespace", "io.kubernetes.pod.name",
	    "io.kubernetes.cri-o.SandboxID" } },
};

const char *pod_key_name(size_t runtime, enum pod_key k)
{
	return runtimes[runtime].key[k];
}

static bool is_sandbox_value(const char *v)
{
	return !strcmp(v, "sandbox");
}

/* The runtime that wrote a non-sandbox type key, or -1 when every type
 * key present says "sandbox" (or there is none). */
static int type_writer(const struct pod_annotations *seen, int *nr_types)
{
	int writer = -1;

	*nr_types = 0;
	for (int i = 0; i < POD_NR_RUNTIMES; i++) {
		const char *v = seen->value[i][POD_TYPE];

		if (!v)
			continue;
		(*nr_types)++;
		if (!is_sandbox_value(v))
			writer = i;
	}
	return writer;
}

/* Kubernetes names are DNS labels; podman allows [A-Za-z0-9_.-] too. */
bool pod_valid_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > SH_MAX_CONTAINER_NAME)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || !strchr("-_.", c)))
			return false;
	}
	return true;
}

/* k8s.io/apimachinery/pkg/util/rand: the alphabet of generated names
 * (no vowels, no 0, 1, 3) and of SafeEncodeString. */
static const char generated[] = "bcdfghjklmnpqrstvwxz2456789";

/* The length of name's last "-part" when it is min to max bytes of set
 * (digits when set is NULL), else 0. */
static size_t suffix_of(const char *name, size_t n, const char *set, size_t min,
			size_t max)
{
	size_t k = 0;

	while (k < n && name[n - 1 - k] != '-') {
		char c = name[n - 1 - k];

		if (set ? !strchr(set, c) : (c < '0' || c > '9'))
			return 0;
		k++;
	}
	/* a "-" before it, and something before that */
	if (k < min || k > max || k + 1 >= n)
		return 0;
	return k + 1;
}

void pod_owner(const char *pod, char *buf, size_t len)
{
	size_t n = pod ? strlen(pod) : 0, cut;

	if (!n) {
		snprintf(buf, len, "-");
		return;
	}
	cut = suffix_of(pod, n, generated, 5, 5);
	if (cut) {
		n -= cut;
		/* a Deployment's ReplicaSet: its pod-template-hash too */
		n -= suffix_of(pod, n, generated, 6, 10);
	} else {
		n -= suffix_of(pod, n, NULL, 1, 10);
	}
	snprintf(buf, len, "%.*s", (int)n, pod);
}

static void names_from(const struct pod_annotations *seen, int i,
		       struct pod_identity *id)
{
	id->name = seen->value[i][POD_NAME];
	id->name_key = runtimes[i].key[POD_NAME];
	id->namespace = seen->value[i][POD_NAMESPACE];
	id->namespace_key = runtimes[i].key[POD_NAMESPACE];
	id->pod = seen->value[i][POD_POD];
	id->pod_key = runtimes[i].key[POD_POD];
}

/* The type writer's sandbox id; where it wrote none (a pod's copy of its
 * type key under the other runtime), the other runtime's. */
static void sandbox_id_from(const struct pod_annotations *seen, int writer,
			    struct pod_identity *id)
{
	for (int k = 0; k < POD_NR_RUNTIMES; k++) {
		int i = k ? POD_NR_RUNTIMES - 1 - writer : writer;

		if (seen->value[i][POD_SANDBOX_ID]) {
			id->sandbox_id = seen->value[i][POD_SANDBOX_ID];
			id->sandbox_id_key = runtimes[i].key[POD_SANDBOX_ID];
			return;
		}
	}
}

/* Without a type key no runtime vouches for either key set: the first
 * one with a container name, as plain runc or podman users set them by
 * hand. */
static void names_from_any(const struct pod_annotations *seen,
			   struct pod_identity *id)
{
	for (int i = 0; i < POD_NR_RUNTIMES; i++) {
		if (seen->value[i][POD_NAME]) {
			names_from(seen, i, id);
			return;
		}
	}
}

static int check_name(const char *what, const char *name, const char *key,
		      struct sh_error *err)
{
	if (!name || pod_valid_name(name))
		return 0;
	error_reason(err, SH_REASON_ANNOTATION_INVALID);
	error_cause(err, key, name);
	return error_set(
		err, -EINVAL,
		"%s %s (from %s) refused: not a Kubernetes or podman name (a letter or digit, then letters, digits, '-', '_' or '.'; at most %d)",
		what, LOG_Q(name), key, SH_MAX_CONTAINER_NAME);
}

/* A sandbox has no container name; its pod's names come from the key set
 * of the runtime that wrote a type key (CRI-O's when both did). */
static void sandbox_names(const struct pod_annotations *seen,
			  struct pod_identity *id)
{
	int keys = 0;

	for (int i = 0; i < POD_NR_RUNTIMES; i++)
		if (seen->value[i][POD_TYPE])
			keys = i;
	names_from(seen, keys, id);
	id->runtime = runtimes[keys].runtime;
	id->name = NULL;
	id->name_key = NULL;
}

void pod_identify(const struct pod_annotations *seen, struct pod_identity *id)
{
	int nr_types, writer;

	memset(id, 0, sizeof(*id));
	writer = type_writer(seen, &nr_types);
	if (nr_types > 0 && writer < 0) {
		id->sandbox = true;
		sandbox_names(seen, id);
	} else if (writer >= 0) {
		id->runtime = runtimes[writer].runtime;
		names_from(seen, writer, id);
		sandbox_id_from(seen, writer, id);
	} else {
		names_from_any(seen, id);
	}
}

int pod_check(const struct pod_identity *id, struct sh_error *err)
{
	int r = check_name("container name", id->name, id->name_key, err);

	if (r)
		return r;
	r = check_name("pod namespace", id->namespace, id->namespace_key, err);
	if (r)
		return r;
	return check_name("pod name", id->pod, id->pod_key, err);
}
