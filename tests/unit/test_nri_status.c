// SPDX-License-Identifier: GPL-2.0-only
/*
 * nri_status.c, in a state directory of the test's own: one copy of the
 * NRI plugin at a time (a second one, in another process, is refused
 * naming the first's pid), the status file written whole and read back
 * as "registered to RUNTIME VERSION" only while the lock is held, and
 * both gone with the lock. The config's "nri" object (config.c) too.
 *
 * Modules: `nri_status.c`, `config.c`
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#include "lib/context.h"
#include "config/config.h"
#include "helpers.h"
#include "nri/nri_status.h"
#include "tap.h"

/* The copy this process runs, kept from test_lock() to test_status(). */
static struct nri_status s = { .lock_fd = -1 };

static void test_lock(void)
{
	struct nri_status other = { .lock_fd = -1 };
	struct sh_error err = { 0 };
	char *pid, want[32], runtime[160];
	int fds[2], status = -1;
	pid_t child;

	ok(nri_status_registered(runtime, sizeof(runtime)) == 0 && !runtime[0],
	   "no lock file: no plugin registered");
	ok(nri_status_lock(&s, &err) == 0 && s.lock_fd >= 0,
	   "the first copy takes the lock");
	pid = read_file(TMP_PATH("state/nri.lock"));
	snprintf(want, sizeof(want), "%d\n", (int)getpid());
	ok(pid && !strcmp(pid, want), "nri.lock holds its pid");
	free(pid);

	if (pipe(fds))
		abort();
	child = fork();
	if (child == 0) {
		struct sh_error e = { 0 };
		int r = nri_status_lock(&other, &e);

		(void)!write(fds[1], e.msg, strlen(e.msg));
		_exit(r == -EBUSY ? 0 : 1);
	}
	close(fds[1]);
	{
		char msg[1024] = "";

		(void)!read(fds[0], msg, sizeof(msg) - 1);
		waitpid(child, &status, 0);
		snprintf(want, sizeof(want), "(pid %d)", (int)getpid());
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
			   strstr(msg, "another oci-sockopt-hook nri") &&
			   strstr(msg, want),
		   "a second copy: -EBUSY, naming the first's pid");
	}
	close(fds[0]);

	ok(nri_status_registered(runtime, sizeof(runtime)) == 0,
	   "locked but no status yet: not registered");
}

static void test_status(void)
{
	struct nri_plugin p;
	struct json_object *o, *v;
	char runtime[160], *text;

	memset(&p, 0, sizeof(p));
	strcpy(p.idx, "50");
	strcpy(p.name, "oci-sockopt-hook");
	strcpy(p.runtime, "containerd");
	strcpy(p.runtime_version, "2.1.4");
	p.stats.containers = 3;
	p.stats.hooked = 2;
	s.mode = "socket";
	s.socket = "/var/run/nri/nri.sock";
	s.since = 1700000000;

	ok(nri_status_write(&s, &p, false) == 0,
	   "status written: not registered");
	ok(nri_status_registered(runtime, sizeof(runtime)) == 0,
	   "... reads as not registered");
	ok(nri_status_write(&s, &p, true) == 0, "status written: registered");
	ok(nri_status_registered(runtime, sizeof(runtime)) == 1 &&
		   !strcmp(runtime, "containerd 2.1.4"),
	   "... reads as registered to containerd 2.1.4 (%s)", runtime);
	text = read_file(TMP_PATH("state/nri.status"));
	o = text ? json_tokener_parse(text) : NULL;
	ok(o && json_object_object_get_ex(o, "name", &v) &&
		   !strcmp(json_object_get_string(v), "50-oci-sockopt-hook") &&
		   json_object_object_get_ex(o, "mode", &v) &&
		   !strcmp(json_object_get_string(v), "socket") &&
		   json_object_object_get_ex(o, "containers", &v) &&
		   json_object_get_int(v) == 3 &&
		   json_object_object_get_ex(o, "hooked", &v) &&
		   json_object_get_int(v) == 2 &&
		   json_object_object_get_ex(o, "since", &v) &&
		   json_object_get_int64(v) == 1700000000,
	   "nri.status: name, mode, counters, since");
	json_object_put(o);
	free(text);

	nri_status_unlock(&s);
	ok(s.lock_fd == -1 && access(TMP_PATH("state/nri.status"), F_OK) < 0,
	   "unlock: the status file goes with the lock");
	ok(nri_status_registered(runtime, sizeof(runtime)) == 0,
	   "no lock held: not registered, whatever a stale status says");
	write_file(
		TMP_PATH("state/nri.status"),
		"{\"registered\": true, \"runtime\": \"x\", \"runtime_version\": \"1\"}",
		0600);
	ok(nri_status_registered(runtime, sizeof(runtime)) == 0,
	   "a stale status that says registered: not registered (no lock)");
}

static void test_config(void)
{
	struct sh_config cfg;

	ok(parse_config(
		   "{\"nri\": {\"hook_path\": \"/opt/bin/oci-sockopt-hook\"}}",
		   &cfg) == 0 &&
		   cfg.nri_hook_path &&
		   !strcmp(cfg.nri_hook_path, "/opt/bin/oci-sockopt-hook"),
	   "config nri.hook_path");
	config_free(&cfg);
	config_refused("{\"nri\": {\"hook_path\": \"bin/hook\"}}",
		       "nri.hook_path: must be an absolute path",
		       "a relative nri.hook_path");
	config_refused("{\"nri\": {\"hookpath\": \"/x\"}}", "hookpath",
		       "an unknown key in nri");
	config_refused("{\"nri\": {\"hook_path\": 1}}", "nri.hook_path",
		       "a hook_path that is not a string");
	ok(parse_config("{\"nri\": {}}", &cfg) == 0 && !cfg.nri_attach_plugin &&
		   !strcmp(config_nri_bundle_dir(&cfg),
			   "/run/containerd/io.containerd.runtime.v2.task/k8s.io"),
	   "nri.attach defaults to hook, bundle_dir to containerd's");
	config_free(&cfg);
	ok(parse_config(
		   "{\"nri\": {\"attach\": \"plugin\", \"bundle_dir\": \"/b\"}}",
		   &cfg) == 0 &&
		   cfg.nri_attach_plugin &&
		   !strcmp(config_nri_bundle_dir(&cfg), "/b"),
	   "nri.attach plugin, nri.bundle_dir");
	config_free(&cfg);
	ok(parse_config("{\"nri\": {\"attach\": \"hook\"}}", &cfg) == 0 &&
		   !cfg.nri_attach_plugin,
	   "nri.attach hook");
	config_free(&cfg);
	config_refused("{\"nri\": {\"attach\": \"Plugin\"}}",
		       "nri.attach: must be \"hook\" or \"plugin\"",
		       "an nri.attach other than hook or plugin");
	config_refused("{\"nri\": {\"bundle_dir\": \"run/x\"}}",
		       "nri.bundle_dir: must be an absolute path",
		       "a relative nri.bundle_dir");
}

int main(void)
{
	char state[512];

	tmpdir_make();
	snprintf(state, sizeof(state), "%s/state", unit_dir);
	context_set(&(struct sh_context){ .state_dir = state });
	test_lock();
	test_status();
	test_config();
	return tap_done();
}
