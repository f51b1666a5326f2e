// SPDX-License-Identifier: GPL-2.0-only
/*
 * The operator's settings about the container's cgroup: what to do when
 * the hook would have to make one (on_shared_cgroup), and when another
 * tool's program on the container's path would stop running because of
 * our attach (on_override_program). The first name is the default.
 */
#include "config/config_cgroup.h"

int config_cgroup_parse(struct config_ctx *ctx, struct json_object *root,
			struct sh_config *cfg)
{
	static const char *const shared[] = { "create", "refuse", NULL };
	static const char *const override[] = { "refuse", "warn", NULL };
	int shared_v = ON_SHARED_CGROUP_CREATE;
	int override_v = ON_OVERRIDE_PROGRAM_REFUSE;
	int r;

	r = config_json_get_choice(ctx, root, NULL, "on_shared_cgroup", shared,
				   &shared_v);
	if (r)
		goto out;
	r = config_json_get_choice(ctx, root, NULL, "on_override_program",
				   override, &override_v);
out:
	/* The defaults stand where a value was not read. */
	cfg->on_shared_cgroup = shared_v;
	cfg->on_override_program = override_v;
	return r;
}
