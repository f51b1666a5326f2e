// SPDX-License-Identifier: GPL-2.0-only
/*
 * cmd_validate.c: `validate`, run as main() runs it: a valid config says
 * so and how many policies it has; an invalid one is one line naming the
 * JSON path, and a non-zero exit; --json carries the same; the warnings
 * about defaults that hooks.d files would keep from unannotated
 * containers (--hooks-dir directories of the test's own), about
 * require_annotations, and about json logging without a file. No root.
 *
 * Modules: `cmd_validate.c`
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "cmd/commands.h"
#include "helpers.h"
#include "wiring/wiring_hooksd.h"
#include "tap.h"

static struct command_run run;

static const char *config(const char *name, const char *text)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", unit_dir, name);
	write_file(path, text, 0644);
	return path;
}

static struct json_object *json_of(const char *key)
{
	static struct json_object *root;
	struct json_object *v = NULL;

	json_object_put(root);
	root = json_tokener_parse(run.out);
	json_object_object_get_ex(root, key, &v);
	return v;
}

/* restricted clamps SO_RCVBUF: validate warns when this node's tcp_rmem
 * lets autotuning go past it (85-sysctls.sh), whatever the config. */
static int other_warnings(const char *err)
{
	int n = 0;

	for (const char *p = err; *p;
	     p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
		size_t len = strcspn(p, "\n");

		if (len && !memmem(p, len, "TCP autotuning", 14))
			n++;
	}
	return n;
}

static bool autotuning_only(struct json_object *warnings)
{
	for (size_t i = 0; i < json_object_array_length(warnings); i++)
		if (!strstr(json_object_get_string(
				    json_object_array_get_idx(warnings, i)),
			    "TCP autotuning"))
			return false;
	return true;
}

static void test_valid(void)
{
	char want[512];

	run_command(&cmd_validate_command, NULL, false, EXAMPLES "/config.json",
		    &run);
	snprintf(
		want, sizeof(want),
		"%s/config.json: valid (3 policies)\n"
		"sandbox_policy: pod sandboxes (pause containers) get '@deny-sockets' (built in: no AF_INET or AF_INET6 socket)\n"
		"CDI devices (`cdi generate`): sockopt-hook.io/policy=restricted, sockopt-hook.io/policy=bulk, sockopt-hook.io/policy=setonly, sockopt-hook.io/policy=bypass-prot-mem\n",
		EXAMPLES);
	ok(run.rc == 0 && !strcmp(run.out, want) && !other_warnings(run.err),
	   "the example config: valid, 3 policies, nothing on stderr but the node's autotuning warning");
	run_command(&cmd_validate_command, EXAMPLES "/config.json", false, "",
		    &run);
	ok(run.rc == 0 && !strcmp(run.out, want),
	   "no operand: the config --config names");
	run_command(&cmd_validate_command, NULL, true, EXAMPLES "/config.json",
		    &run);
	ok(run.rc == 0 && json_object_get_boolean(json_of("valid")) &&
		   !json_object_get_boolean(json_of("has_defaults")) &&
		   autotuning_only(json_of("warnings")) &&
		   json_of("error") == NULL &&
		   json_object_array_length(json_of("cdi_devices")) == 4,
	   "--json: valid, no defaults, no warnings, no error, 4 CDI devices");
}

static void test_invalid(void)
{
	const char *p = config(
		"bad.json",
		"{\"policies\": {\"p\": {\"setsockopt\": [{\"level\": \"SOL_SOCKET\", \"option\": \"SO_RCVBUF\", \"action\": \"clamp\", \"min\": 10, \"max\": 5}]}}}");

	run_command(&cmd_validate_command, NULL, false, p, &run);
	ok(run.rc < 0 && !*run.out && count_lines(run.err) == 1 &&
		   strstr(run.err,
			  "policies.p.setsockopt[0]: min (10) is greater than max (5)"),
	   "an invalid config: non-zero, one line with the JSON path, nothing on stdout");
	run_command(&cmd_validate_command, NULL, true, p, &run);
	ok(run.rc < 0 && !json_object_get_boolean(json_of("valid")) &&
		   !strcmp(json_object_get_string(json_of("path")),
			   "policies.p.setsockopt[0]") &&
		   strstr(json_object_get_string(json_of("error")),
			  "greater than max"),
	   "--json: valid false, the path and the error");
	run_command(&cmd_validate_command, NULL, false,
		    config("typo.json", "{\"polices\": {}}"), &run);
	ok(run.rc < 0 && strstr(run.err, "polices") &&
		   strstr(run.err, "policies"),
	   "an unknown key: refused with a hint (%s)", run.err);
	run_command(&cmd_validate_command, NULL, false,
		    "/nonexistent/config.json", &run);
	ok(run.rc == -ENOENT && count_lines(run.err) == 1,
	   "a missing config: -ENOENT, one line");
	run_command(&cmd_validate_command, NULL, false, "a b", &run);
	ok(run.rc == CMD_USAGE &&
		   strstr(run.err, "validate: unexpected argument 'b'"),
	   "two configs: a usage error");
}

static void test_warnings(void)
{
	char narrow[512], always[512], empty[512], words[1600];
	const char *std[] = { SH_HOOKSD_SYSTEM, SH_HOOKSD_ETC,
			      SH_HOOKSD_PREFIX };
	struct hooksd_report rep;
	const char *defaults = config(
		"defaults.json",
		"{\"defaults\": {\"policy\": \"p\"}, \"policies\": {\"p\": {\"setsockopt\": [{\"level\": \"SOL_SOCKET\", \"option\": \"SO_MARK\", \"action\": \"deny\"}]}}}");

	wiring_hooksd_scan(std, 3, &rep);
	if (rep.found) {
		tap_skip(
			"validate's hooks.d warnings",
			"this machine's own hooks.d directories hold files for the hook");
		return;
	}
	snprintf(narrow, sizeof(narrow), "%s/narrow", unit_dir);
	snprintf(always, sizeof(always), "%s/always", unit_dir);
	snprintf(empty, sizeof(empty), "%s/empty", unit_dir);
	mkdir(narrow, 0755);
	mkdir(always, 0755);
	mkdir(empty, 0755);
	snprintf(
		words, sizeof(words),
		"cp %s/hooks.d-oci-sockopt-hook.json %s/; cp %s/hooks.d-oci-sockopt-hook-always.json %s/",
		EXAMPLES, narrow, EXAMPLES, always);
	ok(system(words) == 0,
	   "a hooks.d directory with the annotation file, one with the always file");

	snprintf(words, sizeof(words), "--hooks-dir %s %s", narrow, defaults);
	run_command(&cmd_validate_command, NULL, false, words, &run);
	ok(run.rc == 0 && strstr(run.err, "warning: ") &&
		   strstr(run.err, "defaults.policy 'p'") &&
		   strstr(run.err, "will not reach unannotated containers") &&
		   strstr(run.err,
			  "hooks.d-oci-sockopt-hook.json (when.annotations)"),
	   "defaults with only the annotation file: still valid, and a warning naming that file");
	snprintf(words, sizeof(words), "--hooks-dir %s %s", always, defaults);
	run_command(&cmd_validate_command, NULL, false, words, &run);
	ok(run.rc == 0 && !*run.err, "with the always file: no warning");
	snprintf(words, sizeof(words), "--hooks-dir %s %s", empty, defaults);
	run_command(&cmd_validate_command, NULL, false, words, &run);
	ok(run.rc == 0 &&
		   strstr(run.err, "no hooks.d file for oci-sockopt-hook in"),
	   "an empty --hooks-dir: the defaults reach only hook-running configs");
	snprintf(words, sizeof(words), "--hooks-dir %s %s", narrow, defaults);
	run_command(&cmd_validate_command, NULL, true, words, &run);
	ok(run.rc == 0 && json_object_get_boolean(json_of("has_defaults")) &&
		   json_object_array_length(json_of("warnings")) == 1,
	   "--json: has_defaults and the one warning");

	run_command(&cmd_validate_command, NULL, false,
		    config("jsonlog.json", "{\"log_format\": \"json\"}"), &run);
	ok(run.rc == 0 && strstr(run.err,
				 "log_format is 'json' but no log_file is set"),
	   "json logging without a log file: a warning");
}

int main(void)
{
	tmpdir_make();
	test_valid();
	test_invalid();
	test_warnings();
	return tap_done();
}
