// SPDX-License-Identifier: GPL-2.0-only
/*
 * The operator config's "nri" object: what `oci-sockopt-hook nri` adds to
 * the containers it handles. hook_path is the hook binary the runtime
 * runs, a path on the node (the plugin may run in a container that has
 * the binary elsewhere); by default the one `make install` puts in place.
 */
#include <string.h>

#include "config_nri.h"

#define PATH_MAX_LEN 4095

int config_nri_parse(struct config_ctx *ctx, struct json_object *obj,
		     struct sh_config *cfg)
{
	static const char *const keys[] = { "hook_path", NULL };
	const char *path = NULL;
	int r = config_json_check_object(ctx, obj, "nri", keys);

	if (!r)
		r = config_json_get_string(ctx, obj, "nri", "hook_path", &path);
	if (r || !path)
		return r;
	if (path[0] != '/' || strlen(path) > PATH_MAX_LEN)
		return config_json_error(
			ctx, "nri.hook_path",
			"must be an absolute path of at most %d bytes",
			PATH_MAX_LEN);
	cfg->nri_hook_path = path;
	return 0;
}
