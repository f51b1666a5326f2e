/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_CONFIG_RULES_H
#define SH_CONFIG_RULES_H

#include "config_json.h"

/* A policy's "setsockopt" and "getsockopt" lists, with their aliases. */
int config_rules_parse(struct config_ctx *ctx, struct json_object *obj,
		       const char *policy, struct sh_policy *pol);
/* The name operators write for an action (force for both forces). */
const char *config_rules_action_name(__u32 action);

#endif /* SH_CONFIG_RULES_H */
