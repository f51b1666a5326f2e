/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_CONFIG_NRI_H
#define SH_CONFIG_NRI_H

#include "config/config_json.h"

/* nri: {"hook_path": "/abs/path"}, the NRI plugin's settings. */
int config_nri_parse(struct config_ctx *ctx, struct json_object *obj,
		     struct sh_config *cfg);

/* The hook the plugin gives containers: nri.hook_path, else the one
 * `make install` put in place. */
const char *config_nri_hook_path(const struct sh_config *cfg);

#endif /* SH_CONFIG_NRI_H */
