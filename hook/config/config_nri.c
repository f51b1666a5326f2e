// SPDX-License-Identifier: GPL-2.0-only
/*
 * The operator config's "nri" object: what `oci-sockopt-hook nri` adds to
 * the containers it handles. hook_path is the hook binary the runtime
 * runs, a path on the node (the plugin may run in a container that has
 * the binary elsewhere); by default the one `make install` puts in place.
 */
#include <string.h>

#include "config/config_nri.h"

#define PATH_MAX_LEN 4095
/* The Makefile passes where `make install` puts the binary. */
#ifndef SH_NRI_HOOK_PATH
#define SH_NRI_HOOK_PATH "/usr/local/libexec/oci/hooks.d/oci-sockopt-hook"
#endif

const char *config_nri_hook_path(const struct sh_config *cfg)
{
	return cfg->nri_hook_path ?: SH_NRI_HOOK_PATH;
}

int config_nri_parse(struct config_ctx *ctx, struct json_object *obj,
		     struct sh_config *cfg)
{
	static const char *const keys[] = { "hook_path", NULL };
	const char *path = NULL;
	int r = config_json_check_object(ctx, obj, "nri", keys);

	if (r)
		return r;
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
