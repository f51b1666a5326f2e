/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_CONFIG_POLICY_H
#define SH_CONFIG_POLICY_H

#include "config/config_json.h"

/* "policies": every named policy, into cfg->policies. */
int config_policy_parse(struct config_ctx *ctx, struct json_object *obj,
			struct sh_config *cfg);

/* A policy's "setsockopt" and "getsockopt" lists, with their aliases. */
int config_policy_rules_parse(struct config_ctx *ctx, struct json_object *obj,
			      const char *policy, struct sh_policy *pol);

#endif /* SH_CONFIG_POLICY_H */
