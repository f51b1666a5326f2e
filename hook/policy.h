/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_POLICY_H
#define SH_POLICY_H

#include <stdbool.h>

#include "config.h"
#include "oci.h"

enum sh_source {
	SRC_NONE,
	SRC_DEFAULTS,
	SRC_POLICY,
	SRC_ANNOTATION,
};

struct sh_effective {
	const struct sh_policy *policy; /* NULL: no named policy */
	enum sh_source policy_source;
	char policy_key[320]; /* the annotation key that chose it */
	bool bypass;
	enum sh_source bypass_source;
	char bypass_key[320];
	bool sandbox; /* a pod's pause container: never policed */
};

int policy_resolve(const struct sh_config *cfg, const struct oci_state *st,
		   struct sh_effective *eff);
bool policy_needs_sock_create(const struct sh_effective *eff);
bool policy_needs_setsockopt(const struct sh_effective *eff);
bool policy_needs_getsockopt(const struct sh_effective *eff);
bool policy_is_empty(const struct sh_effective *eff);
const char *policy_source_name(enum sh_source src);
/* Where the policy (or, with bypass, the bypass setting) came from:
 * "annotation KEY", "policy NAME", "defaults.policy", ... */
void policy_source_text(const struct sh_effective *eff, bool bypass, char *buf,
			size_t len);
int parse_bool_annotation(const char *key, const char *value, bool *out);

#endif /* SH_POLICY_H */
