/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The names and lengths every layer shares: the annotation keys (the
 * public contract) and the longest container id, container name, policy
 * name, annotation key and source text. A header of its own, below every
 * module, so that an attachment or a log line can size its fields without
 * including the parser or the resolver that produce them.
 */
#ifndef SH_TYPES_H
#define SH_TYPES_H

#define SH_ANNOTATION_BYPASS "sockopt-hook.io/bypass-prot-mem"
#define SH_ANNOTATION_POLICY "sockopt-hook.io/policy"
/* "name=value,name=value": per container, for names too long for the
 * scoped form (a Kubernetes key's name part is at most 63 characters). */
#define SH_ANNOTATION_CONTAINERS_POLICY "sockopt-hook.io/containers.policy"
#define SH_ANNOTATION_CONTAINERS_BYPASS \
	"sockopt-hook.io/containers.bypass-prot-mem"
/* Record mode (footprint.c): the record name, when record.allow is set. */
#define SH_ANNOTATION_RECORD "sockopt-hook.io/record"
#define SH_ANNOTATION_CONTAINERS_RECORD "sockopt-hook.io/containers.record"
/* Audit mode ("audit" or "enforce"), when annotations.allow_audit_mode. */
#define SH_ANNOTATION_MODE "sockopt-hook.io/mode"
#define SH_ANNOTATION_CONTAINERS_MODE "sockopt-hook.io/containers.mode"

/*
 * The runtime handler a container runs under, as the operator states it
 * in the handler's own config (containerd: base_runtime_spec
 * "annotations"; CRI-O: default_annotations): neither runtime writes the
 * handler into a container's spec. Outside sockopt-hook.io/, so that the
 * example's pod_annotations glob for our keys cannot pass a pod's copy
 * over the base spec's.
 */
#define SH_ANNOTATION_HANDLER "node.sockopt-hook.io/runtime-handler"
/* Set by the NRI plugin on every container it handled (nri_deliver.c),
 * over any copy of a pod's. */
#define SH_ANNOTATION_NRI "node.sockopt-hook.io/nri"

/* The operator config, unless --config or this variable names another. */
#define SH_DEFAULT_CONFIG "/etc/oci-sockopt-hook/config.json"
#define SH_CONFIG_ENV "OCI_SOCKOPT_HOOK_CONFIG"

#define SH_MAX_ID_LEN 256
/* A Kubernetes name (namespace, pod, container): a DNS subdomain. */
#define SH_MAX_CONTAINER_NAME 253
/* Policy names are 1 to this many characters. */
#define SH_POLICY_NAME_MAX 64
#define SH_RECORD_DIR_MAX 256 /* record.dir and its NUL */

/* The longest key text: "sockopt-hook.io/containers.bypass-prot-mem[<name>]"
 * and its NUL. */
#define SH_ANNOTATION_KEY_MAX \
	(sizeof(SH_ANNOTATION_CONTAINERS_BYPASS) + 2 + SH_MAX_CONTAINER_NAME)
/* A value taken from a containers.* list: a policy name or a boolean. */
#define SH_ANNOTATION_ENTRY_MAX (SH_POLICY_NAME_MAX + 1)
/* "annotation <key>", "policy <name>" or "defaults.bypass_prot_mem". */
#define SH_SOURCE_TEXT_MAX (sizeof("annotation ") + SH_ANNOTATION_KEY_MAX)

#endif /* SH_TYPES_H */
