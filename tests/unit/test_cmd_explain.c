// SPDX-License-Identifier: GPL-2.0-only
/*
 * cmd_explain.c: `explain`, the dry run, as main() runs it on bundles and
 * OCI states of the test's own: the effective policy in text and JSON,
 * the cgroup the hook would use (decided at prestart for a bundle; here
 * and now for a state whose pid is this test's), a refusal with the
 * reason prestart would give and exit 1, a sandbox never policed. It
 * attaches, loads and writes nothing (it runs without root).
 *
 * Modules: `cmd_explain.c`
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>

#include "cmd/commands.h"
#include "helpers.h"
#include "tap.h"

#define CONFIG EXAMPLES "/config.json"

static struct command_run run;

/* A bundle directory with these annotations (a JSON object's text). */
static const char *bundle(const char *name, const char *annotations)
{
	static char dir[512];
	char path[600], text[2048];

	snprintf(dir, sizeof(dir), "%s/%s", unit_dir, name);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	snprintf(text, sizeof(text),
		 "{\"ociVersion\": \"1.0.2\", \"annotations\": %s}",
		 annotations);
	write_file(path, text, 0644);
	return dir;
}

static struct json_object *json_get(const char *path)
{
	static struct json_object *root;
	struct json_object *o;
	char key[64];
	const char *dot;

	json_object_put(root);
	o = root = json_tokener_parse(run.out);
	while (o && *path) {
		dot = strchr(path, '.');
		snprintf(key, sizeof(key), "%.*s",
			 (int)(dot ? dot - path : (long)strlen(path)), path);
		if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		path = dot ? dot + 1 : "";
	}
	return o;
}

static void test_bundle(void)
{
	char words[600];
	const char *b = bundle("restricted",
			       "{\"sockopt-hook.io/policy\": \"restricted\"}");

	snprintf(words, sizeof(words), "--bundle %s", b);
	run_command(&cmd_explain_command, CONFIG, false, words, &run);
	ok(run.rc == 0 && !*run.err,
	   "explain --bundle: exit 0, nothing on stderr");
	ok(strstr(run.out, "config: " CONFIG "\n") &&
		   strstr(run.out,
			  "policy: restricted (from annotation sockopt-hook.io/policy)\n") &&
		   strstr(run.out, "setsockopt rules:\n") &&
		   strstr(run.out,
			  "programs that would attach: [ \"sock_create\", \"setsockopt\", \"getsockopt\" ]\n"),
	   "the text: config, policy and where it came from, rules, programs");
	ok(strstr(run.out, "cgroup: decided at prestart") != NULL,
	   "with no pid (a bundle), the cgroup is decided at prestart");
	run_command(&cmd_explain_command, CONFIG, true, words, &run);
	ok(run.rc == 0 &&
		   !strcmp(json_object_get_string(json_get("policy.name")),
			   "restricted") &&
		   strstr(run.out, "\"refused\":null"),
	   "--json: the policy, refused null");

	b = bundle("nope", "{\"sockopt-hook.io/policy\": \"nosuch\"}");
	snprintf(words, sizeof(words), "--bundle %s", b);
	run_command(&cmd_explain_command, CONFIG, false, words, &run);
	ok(run.rc < 0 && count_lines(run.err) == 1 &&
		   strstr(run.err, "nosuch") && strstr(run.out, "refused: "),
	   "a policy the config lacks: non-zero, the reason on stderr and as 'refused:'");
	run_command(&cmd_explain_command, CONFIG, true, words, &run);
	ok(run.rc < 0 && json_get("refused") &&
		   strstr(json_object_get_string(json_get("refused")),
			  "nosuch"),
	   "--json: refused carries the same line");

	b = bundle(
		"sandbox",
		"{\"io.kubernetes.cri.container-type\": \"sandbox\", \"sockopt-hook.io/policy\": \"restricted\"}");
	snprintf(words, sizeof(words), "--bundle %s", b);
	run_command(&cmd_explain_command, CONFIG, false, words, &run);
	ok(run.rc == 0 &&
		   strstr(run.out,
			  "pod sandbox container: it gets sandbox_policy; annotations (the pod's) are not read\n"),
	   "a pod sandbox: it gets sandbox_policy, not its annotation's policy");

	run_command(&cmd_explain_command, CONFIG, false,
		    "--bundle /nonexistent/b", &run);
	ok(run.rc == -ENOENT && count_lines(run.err) == 1,
	   "a missing bundle: -ENOENT, one line");
}

/* explain with an OCI state on stdin (from a file). */
static void explain_state(const char *state, bool json)
{
	int saved = dup(STDIN_FILENO), fd;

	write_file(TMP_PATH("state.json"), state, 0600);
	fd = open(TMP_PATH("state.json"), O_RDONLY);
	dup2(fd, STDIN_FILENO);
	close(fd);
	run_command(&cmd_explain_command, CONFIG, json, "", &run);
	dup2(saved, STDIN_FILENO);
	close(saved);
}

static void test_state(void)
{
	char state[1024], cg[512];
	struct json_object *path;
	const char *b =
		bundle("setonly", "{\"sockopt-hook.io/policy\": \"setonly\"}");

	snprintf(
		state, sizeof(state),
		"{\"ociVersion\": \"1.0.2\", \"id\": \"c-explain\", \"status\": \"creating\", \"pid\": %d, \"bundle\": \"%s\"}",
		(int)getpid(), b);
	explain_state(state, true);
	ok(run.rc == 0 &&
		   !strcmp(json_object_get_string(json_get("container")),
			   "c-explain") &&
		   !strcmp(json_object_get_string(json_get("policy.name")),
			   "setonly"),
	   "a state on stdin: its id and its bundle's policy");
	path = json_get("cgroup.path");
	snprintf(cg, sizeof(cg), "%s",
		 path ? json_object_get_string(path) : "");
	ok(cg[0] == '/', "with a pid, the cgroup is looked up now: %s", cg);
	explain_state("{\"ociVersion\": \"1.0.2\", \"id\": ", false);
	ok(run.rc == -EINVAL && strstr(run.err, "invalid JSON"),
	   "a broken state on stdin: one line");
}

int main(void)
{
	tmpdir_make();
	test_bundle();
	test_state();
	return tap_done();
}
