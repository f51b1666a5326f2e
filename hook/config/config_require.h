/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_CONFIG_REQUIRE_H
#define SH_CONFIG_REQUIRE_H

#include "config/config_json.h"

/* A Kubernetes RuntimeClass handler is an RFC 1123 label. */
#define SH_HANDLER_NAME_MAX 63

/* require_annotations: {"runtime_handlers": [...], "on_missing": ...}. */
int config_require_parse(struct config_ctx *ctx, struct json_object *obj,
			 struct sh_config *cfg);
/* Whether handler is one of require_annotations.runtime_handlers. */
bool config_require_handler(const struct sh_config *cfg, const char *handler);

#endif /* SH_CONFIG_REQUIRE_H */
