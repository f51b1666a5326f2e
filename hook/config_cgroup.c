// SPDX-License-Identifier: GPL-2.0-only
/*
 * The operator's settings about the container's cgroup: what to do when
 * the hook would have to make one (on_shared_cgroup), and when another
 * tool's program on the container's path would stop running because of
 * our attach (on_override_program).
 */
#include <string.h>

#include "config_parse.h"

/* One of two names, the first being the default; strict, like the rest. */
static int parse_choice(struct cfg_ctx *ctx, struct json_object *root,
			const char *key, const char *const names[2], int *out)
{
	const char *v = NULL;
	int r = cfg_get_string(ctx, root, NULL, key, &v);

	if (r || !v)
		return r;
	for (int i = 0; i < 2; i++) {
		if (!strcmp(v, names[i])) {
			*out = i;
			return 0;
		}
	}
	return cfg_error(ctx, key,
			 "unknown value '%.64s' (expected '%s' or '%s')", v,
			 names[0], names[1]);
}

int parse_cgroup_settings(struct cfg_ctx *ctx, struct json_object *root,
			  struct sh_config *cfg)
{
	static const char *const shared[2] = { "create", "refuse" };
	static const char *const override[2] = { "refuse", "warn" };
	int shared_v = ON_SHARED_CGROUP_CREATE;
	int override_v = ON_OVERRIDE_PROGRAM_REFUSE;
	int r;

	r = parse_choice(ctx, root, "on_shared_cgroup", shared, &shared_v);
	if (!r)
		r = parse_choice(ctx, root, "on_override_program", override,
				 &override_v);
	cfg->on_shared_cgroup = shared_v;
	cfg->on_override_program = override_v;
	return r;
}

const char *config_on_shared_cgroup_name(enum on_shared_cgroup v)
{
	return v == ON_SHARED_CGROUP_REFUSE ? "refuse" : "create";
}

const char *config_on_override_program_name(enum on_override_program v)
{
	return v == ON_OVERRIDE_PROGRAM_WARN ? "warn" : "refuse";
}
