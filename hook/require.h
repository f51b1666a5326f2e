/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_REQUIRE_H
#define SH_REQUIRE_H

#include "config.h"
#include "oci.h"

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

/*
 * require_annotations: a Kubernetes workload container (not a pod
 * sandbox) under one of the listed handlers whose spec carries none of
 * our policy keys, or (nri: true) that the NRI plugin never handled, is
 * refused (-EPERM, one line naming the container, pod, namespace, what
 * is missing and the fix), or with on_missing "warn" logged.
 * 0 when the setting does not apply or the container passes.
 */
int require_check(const struct sh_config *cfg, const struct oci_state *st,
		  struct sh_error *err);

#endif /* SH_REQUIRE_H */
