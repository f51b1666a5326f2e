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
 */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "pod.h"

static const struct runtime_keys {
	const char *runtime, *type_key, *name_key;
} runtimes[] = {
	{ "containerd", "io.kubernetes.cri.container-type",
	  "io.kubernetes.cri.container-name" },
	/* Last: when both sets claim a container, CRI-O's wins, since CRI-O
	 * copies every pod annotation while containerd passes another
	 * runtime's keys only if the operator's globs let them through. */
	{ "CRI-O", "io.kubernetes.cri-o.ContainerType",
	  "io.kubernetes.container.name" },
};

#define NR_RUNTIMES (sizeof(runtimes) / sizeof(runtimes[0]))

static bool is_sandbox_value(const char *v)
{
	return !strcmp(v, "sandbox");
}

/* The runtime that wrote a non-sandbox type key, or NULL when every type
 * key present says "sandbox" (or there is none). */
static const struct runtime_keys *type_writer(const struct oci_state *st,
					      int *nr_types)
{
	const struct runtime_keys *writer = NULL;

	*nr_types = 0;
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		const char *v = oci_annotation(st, runtimes[i].type_key);

		if (!v)
			continue;
		(*nr_types)++;
		if (!is_sandbox_value(v))
			writer = &runtimes[i];
	}
	return writer;
}

/* Kubernetes names are DNS labels; podman allows [A-Za-z0-9_.-] too. */
static bool valid_name(const char *name)
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

/* Without a type key no runtime vouches for either name key: the first
 * one present, as plain runc or podman users set them by hand. */
static void name_from_any(const struct oci_state *st, struct pod_identity *id)
{
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		const char *name = oci_annotation(st, runtimes[i].name_key);

		if (name) {
			id->name = name;
			id->name_key = runtimes[i].name_key;
			return;
		}
	}
}

int pod_identify(const struct oci_state *st, struct pod_identity *id,
		 struct sh_error *err)
{
	const struct runtime_keys *writer;
	int nr_types;

	memset(id, 0, sizeof(*id));
	writer = type_writer(st, &nr_types);
	if (nr_types > 0 && !writer) {
		id->sandbox = true;
		return 0;
	}
	if (writer) {
		id->runtime = writer->runtime;
		id->name_key = writer->name_key;
		id->name = oci_annotation(st, writer->name_key);
	} else {
		name_from_any(st, id);
	}
	if (id->name && !valid_name(id->name))
		return error_set(
			err, -EINVAL,
			"container name %s (from %s) refused: not a container name (a letter or digit, then letters, digits, '-', '_' or '.'; at most %d)",
			LOG_Q(id->name), id->name_key, SH_MAX_CONTAINER_NAME);
	return 0;
}
