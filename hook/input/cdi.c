// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CDI devices of kind sockopt-hook.io/policy (cdi.h): which policy
 * names can be devices, and which devices a container's spec asks for.
 * The spec is the runtime's: its hooks lists hold an entry of ours per
 * device that was injected (CDI's ContainerEdits.Apply appends each
 * device's hooks, tags.cncf.io/container-device-interface
 * pkg/cdi/container-edits.go), and nothing else writes --cdi-device.
 */
#include <errno.h>
#include <string.h>
#include <json-c/json.h>

#include "input/cdi.h"
#include "lib/log.h"

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

const char *cdi_policy_problem(const char *policy)
{
	size_t len = strlen(policy);

	if (!strcmp(policy, SH_CDI_BYPASS))
		return "the bypass device has that name";
	if (!len || !alnum(policy[0]) || !alnum(policy[len - 1]))
		return "a CDI device name starts and ends with a letter or digit";
	/* policy names are [A-Za-z0-9._-], which CDI's device names take */
	return NULL;
}

static struct json_object *member(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(obj, key, &v);
	return v;
}

static bool is_ours(struct json_object *entry)
{
	const char *path = json_object_get_string(member(entry, "path"));
	const char *base = path ? strrchr(path, '/') : NULL;

	return base && !strcmp(base + 1, SH_IDENT);
}

/* Adds dev once; -E2BIG past max. */
static int add(const char **out, int n, int max, const char *dev)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(out[i], dev))
			return n;
	if (n == max)
		return -E2BIG;
	out[n] = dev;
	return n + 1;
}

/* --cdi-device VALUE and --cdi-device=VALUE in an entry's args. */
static int scan_entry(struct json_object *entry, const char **out, int n,
		      int max)
{
	struct json_object *args = member(entry, "args");
	size_t nr = json_object_is_type(args, json_type_array) ?
			    json_object_array_length(args) :
			    0;
	const char *opt = "--" SH_CDI_OPTION;
	size_t len = strlen(opt);

	for (size_t i = 0; n >= 0 && i < nr; i++) {
		const char *a = json_object_get_string(
			json_object_array_get_idx(args, i));

		if (!a || strncmp(a, opt, len))
			continue;
		if (a[len] == '=')
			n = add(out, n, max, a + len + 1);
		else if (!a[len] && i + 1 < nr &&
			 json_object_get_string(
				 json_object_array_get_idx(args, i + 1)))
			n = add(out, n, max,
				json_object_get_string(
					json_object_array_get_idx(args, ++i)));
	}
	return n;
}

int cdi_requested(struct json_object *config_root, const char *own,
		  const char **out, int max)
{
	static const char *const stages[] = { "prestart", "createRuntime" };
	struct json_object *hooks = member(config_root, "hooks");
	int n = own ? add(out, 0, max, own) : 0;

	for (size_t s = 0; n >= 0 && s < sizeof(stages) / sizeof(stages[0]);
	     s++) {
		struct json_object *list = member(hooks, stages[s]);
		size_t nr = json_object_is_type(list, json_type_array) ?
				    json_object_array_length(list) :
				    0;

		for (size_t i = 0; n >= 0 && i < nr; i++) {
			struct json_object *e =
				json_object_array_get_idx(list, i);

			if (is_ours(e))
				n = scan_entry(e, out, n, max);
		}
	}
	return n;
}
