/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_REQUIRE_H
#define SH_REQUIRE_H

#include "config/config.h"
#include "input/container.h"

/*
 * require_annotations: a Kubernetes workload container (not a pod
 * sandbox) under one of the listed handlers whose spec carries none of
 * our policy keys, or (nri: true) that the NRI plugin never handled, is
 * refused (-EPERM, one line naming the container, pod, namespace, what
 * is missing and the fix), or with on_missing "warn" logged.
 * 0 when the setting does not apply or the container passes.
 */
int require_check(const struct sh_config *cfg, const struct sh_container *c,
		  struct sh_error *err);

#endif /* SH_REQUIRE_H */
