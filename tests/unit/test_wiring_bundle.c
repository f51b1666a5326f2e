// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which verb runc's command line holds and which bundle a create names,
 * as containerd's runc shim writes them (the verb after global options
 * with values, --bundle B, --bundle=B, -b B, the working directory); the
 * hook added to a spec once, after another tool's, a poststop too, and not
 * over a CDI device's entry of ours.
 *
 * Modules: `wiring_spec.c`
 */
#include <string.h>
#include <json-c/json.h>

#include "tap.h"
#include "wiring/wiring_spec.h"

static int verb(const char *const *argv, int argc, const char **bundle)
{
	return wiring_spec_bundle_verb(argc, (char *const *)argv, bundle);
}

static void test_verb(void)
{
	const char *shim[] = { "--root",
			       "/run/containerd/runc/moby",
			       "--log",
			       "/x/log.json",
			       "--log-format",
			       "json",
			       "--systemd-cgroup",
			       "create",
			       "--bundle",
			       "/b",
			       "--pid-file",
			       "/b/init.pid",
			       "ID" };
	const char *eq[] = { "--root=/r", "create", "--bundle=/c", "ID" };
	const char *b[] = { "create", "-b", "/d", "ID" };
	const char *dflt[] = { "create", "ID" };
	const char *start[] = { "--root", "/r", "start", "ID" };
	const char *none[] = { "--version" };
	const char *bundle = NULL;

	ok(verb(shim, 13, &bundle) == 7 && bundle && !strcmp(bundle, "/b"),
	   "the shim's create: global options with values skipped, --bundle");
	ok(verb(eq, 4, &bundle) == 1 && bundle && !strcmp(bundle, "/c"),
	   "--root=R and --bundle=B");
	ok(verb(b, 4, &bundle) == 0 && bundle && !strcmp(bundle, "/d"), "-b B");
	ok(verb(dflt, 2, &bundle) == 0 && bundle && !strcmp(bundle, "."),
	   "create without --bundle: the working directory, as runc");
	ok(verb(start, 4, &bundle) == 2 && !bundle, "start: no bundle to edit");
	ok(verb(none, 1, &bundle) == -1 && !bundle, "no verb at all");
}

static void test_hooks(void)
{
	const char *env[] = { "OCI_SOCKOPT_HOOK_CONFIG=/etc/c.json" };
	struct wiring_hook hook = { .path = "/usr/local/bin/oci-sockopt-hook",
				    .env = env,
				    .nr_env = 1 };
	struct json_object *spec = json_tokener_parse(
		"{\"hooks\":{\"createRuntime\":[{\"path\":\"/usr/bin/other\"}]}}");
	struct json_object *cdi = json_tokener_parse(
		"{\"hooks\":{\"createRuntime\":[{\"path\":"
		"\"/opt/x/oci-sockopt-hook\",\"args\":[\"oci-sockopt-hook\","
		"\"createRuntime\",\"--cdi-device\",\"sockopt-hook.io/policy=a\"]}]}}");
	struct json_object *empty = json_object_new_object();
	struct json_object *list;

	ok(wiring_spec_bundle_hooks(spec, &hook) == 1,
	   "a spec with another hook: changed");
	list = json_object_object_get(json_object_object_get(spec, "hooks"),
				      "createRuntime");
	ok(json_object_array_length(list) == 2 &&
		   !strcmp(json_object_get_string(json_object_object_get(
				   json_object_array_get_idx(list, 1), "path")),
			   hook.path),
	   "ours after the other tool's");
	ok(json_object_array_length(json_object_object_get(
		   json_object_object_get(spec, "hooks"), "poststop")) == 1,
	   "and a poststop");
	ok(wiring_spec_bundle_hooks(spec, &hook) == 0,
	   "a second time: unchanged");
	ok(wiring_spec_bundle_hooks(cdi, &hook) == 0,
	   "a CDI device's entry of ours: unchanged (it runs the hook)");
	ok(wiring_spec_bundle_hooks(empty, &hook) == 1 &&
		   json_object_object_get(empty, "hooks"),
	   "a spec without hooks gets them");
	json_object_put(spec);
	json_object_put(cdi);
	json_object_put(empty);
}

int main(void)
{
	test_verb();
	test_hooks();
	return tap_done();
}
