/* SPDX-License-Identifier: GPL-2.0-only */
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
 * find it attached (police.c). Only the runtime writes a spec's hooks:
 * neither a pod author nor `docker run` can add one.
 */
#ifndef SH_CDI_H
#define SH_CDI_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

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
const char *cdi_policy_problem(const char *policy);

struct json_object;
/* The devices of ours that config_root's hooks (prestart, createRuntime)
 * name with --cdi-device, and own (the hook's own, or NULL), each once,
 * into out (pointers into config_root or own): how many, or -E2BIG. */
int cdi_requested(struct json_object *config_root, const char *own,
		  const char **out, int max);

#endif /* SH_CDI_H */
