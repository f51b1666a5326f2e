/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_POLICY_H
#define SH_POLICY_H

#include <json-c/json.h>
#include <stdbool.h>

#include "config/config.h"
#include "input/container.h"
#include "lib/kind.h"

enum sh_source {
	SRC_NONE,
	SRC_DEFAULTS,
	SRC_POLICY,
	SRC_ANNOTATION,
	SRC_SANDBOX, /* sandbox_policy: a pod sandbox's, annotations unread */
};

struct sh_effective {
	const struct sh_policy *policy; /* NULL: no named policy */
	enum sh_source policy_source;
	char policy_key
		[SH_ANNOTATION_KEY_MAX]; /* the annotation key that chose it */
	bool bypass;
	enum sh_source bypass_source;
	char bypass_key[SH_ANNOTATION_KEY_MAX];
	/* Record mode: the record name ("" when not recording). */
	char record[SH_POLICY_NAME_MAX + 1];
	bool audit; /* audit mode: count what the policy would do, apply nothing */
	enum sh_source mode_source; /* SRC_NONE: enforce, nobody said so */
	char mode_key[SH_ANNOTATION_KEY_MAX];
	bool sandbox; /* a pod's pause container: sandbox_policy, nothing else */
	struct pod_identity who; /* points into the OCI state */
};

int policy_resolve(const struct sh_config *cfg, const struct sh_container *c,
		   struct sh_effective *eff, struct sh_error *err);
/*
 * The effective policy cfg gives a running container now, from what its
 * attachment says it asked for at start (which annotation chose its policy,
 * bypass-prot-mem, mode and record name, and with what value): the same
 * checks as policy_resolve(), so a policy no longer allowed or gone is
 * the same error. An annotation that asks for what the defaults (or the
 * policy) give is no request at all, here as at prestart: it is never
 * refused, and the defaults decide. For `apply` and `status`.
 */
struct sh_attachment;
int policy_reresolve(const struct sh_config *cfg,
		     const struct sh_attachment *att, struct sh_effective *eff,
		     struct sh_error *err);
/* What the node's defaults alone give a running container: defaults.policy
 * with its bypass and mode, no annotation read. For `apply`, where the
 * container's annotations are refused now. */
void policy_defaults(const struct sh_config *cfg,
		     const struct sh_attachment *att, struct sh_effective *eff);
/* Writes into att what policy_reresolve() reads back: the policy's name,
 * bypass-prot-mem, mode and where each came from. */
void policy_fill_attachment(const struct sh_effective *eff,
			    struct sh_attachment *att);
/* A pod sandbox's effective policy: sandbox_policy, with its bypass and
 * mode, and nothing a workload wrote (its annotations are the pod's). */
void policy_sandbox(const struct sh_config *cfg, struct sh_effective *eff);
/* Whether the policy needs a program of this kind. */
bool policy_needs(const struct sh_effective *eff, enum sh_prog_kind kind);
bool policy_is_empty(const struct sh_effective *eff);
const char *policy_source_name(enum sh_source src);
/* Where the policy (or, with bypass, the bypass setting) came from:
 * "annotation KEY", "policy NAME", "defaults.policy", ... */
void policy_source_text(const struct sh_effective *eff, bool bypass, char *buf,
			size_t len);
/* "audit" or "enforce". */
const char *policy_mode_name(const struct sh_effective *eff);
/* Where the mode came from: "annotation KEY", "policy NAME" or "default". */
void policy_mode_source_text(const struct sh_effective *eff, char *buf,
			     size_t len);
int policy_parse_bool(const char *key, const char *value, bool *ret,
		      struct sh_error *err);

/*
 * require_annotations: a Kubernetes workload container (not a pod
 * sandbox) under one of the listed handlers whose spec carries none of
 * our policy keys, or (nri: true) that the NRI plugin never handled, is
 * refused (-EPERM, one line naming the container, pod, namespace, what
 * is missing and the fix), or with on_missing "warn" logged.
 * 0 when the setting does not apply or the container passes.
 */
int policy_require_check(const struct sh_config *cfg,
			 const struct sh_container *c, struct sh_error *err);

/* The effective policy, each part with where it came from. */
struct json_object *policy_describe(const struct sh_effective *eff);
void policy_describe_text(struct json_object *desc);

#endif /* SH_POLICY_H */
