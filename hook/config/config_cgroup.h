/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_CONFIG_CGROUP_H
#define SH_CONFIG_CGROUP_H

#include "config/config_json.h"

/* on_shared_cgroup and on_override_program. */
int config_cgroup_parse(struct config_ctx *ctx, struct json_object *root,
			struct sh_config *cfg);

#endif /* SH_CONFIG_CGROUP_H */
