// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime configure's pure parts: the base spec made from the node's
 * default (wiring_spec.c), the hooks.d file against the examples that
 * `make install` copies (wiring_hooksd.c), the containerd drop-in's shape
 * for 1.x and 2.x (wiring_ctd.c) and the dry run's diff
 * (wiring.c); for --nri, what containerd's and CRI-O's configs say
 * of NRI (wiring_ctd.c, wiring_crio.c), the plugin's unit against the
 * example `make install` copies and the fallback's spec (wiring_nri.c,
 * wiring_spec.c); --add-import's edit of containerd's main config
 * (wiring_ctd.c). What containerd itself makes of them is tested on
 * containerd 1.6 (25-runtime-configure-containerd.sh) and 2.1 (the node
 * suite's 70 and 71). Linked with --wrap=realloc and --wrap=free
 * (tests/unit/unit.mk), so that the diff's allocations can be made to fail.
 *
 * Modules: `wiring_spec.c`, `wiring_hooksd.c`, `wiring_ctd.c`, `wiring.c`, `wiring_crio.c`, `wiring_nri.c`
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "lib/fileio.h"
#include "lib/sh_types.h"
#include "tap.h"
#include "wiring/toml/toml.h"
#include "wiring/wiring.h"
#include "wiring/wiring_crio.h"
#include "wiring/wiring_ctd.h"
#include "wiring/wiring_hooksd.h"
#include "wiring/wiring_nri.h"
#include "wiring/wiring_spec.h"

static const char *const env[] = {
	"OCI_SOCKOPT_HOOK_CONFIG=/etc/oci-sockopt-hook/config.json"
};
static const struct wiring_hook hook = {
	"/usr/local/libexec/oci/hooks.d/oci-sockopt-hook", env, 1
};

/* What `ctr oci spec` prints, shortened; another tool's hook and a stale
 * one of ours in a default handler's own base spec. */
#define CAPS "[\"CAP_CHOWN\", \"CAP_NET_RAW\", \"CAP_KILL\"]"
static const char default_spec[] =
	"{\"ociVersion\": \"1.1.0\", \"process\": {\"cwd\": \"/\","
	" \"capabilities\": {\"bounding\": " CAPS ", \"effective\": " CAPS
	", \"permitted\": " CAPS
	"}, \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\","
	" \"hard\": 1024, \"soft\": 1024}], \"apparmorProfile\": \"x\"},"
	" \"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\"}},"
	" \"hooks\": {\"prestart\": [{\"path\": \"/usr/bin/nvidia-hook\"},"
	" {\"path\": \"/old/oci-sockopt-hook\"}]}}";

static struct json_object *spec(bool generated, bool keep_net_raw)
{
	struct sh_error err = { 0 };
	char *text = NULL;
	struct json_object *o;

	if (wiring_spec_build(default_spec, generated, "sockopt", &hook,
			      keep_net_raw, &text, &err))
		return NULL;
	o = json_tokener_parse(text);
	free(text);
	return o;
}

static const char *get(struct json_object *o, const char *jq_like)
{
	static char buf[512];
	struct json_object *v = o;
	char path[256], *save = NULL;

	snprintf(path, sizeof(path), "%s", jq_like);
	for (char *k = strtok_r(path, ".", &save); k && v;
	     k = strtok_r(NULL, ".", &save)) {
		char *end;
		long i = strtol(k, &end, 10);

		if (!*end && json_object_is_type(v, json_type_array))
			v = json_object_array_get_idx(
				v,
				i < 0 ? (long)json_object_array_length(v) + i :
					i);
		else if (!json_object_object_get_ex(v, k, &v))
			v = NULL;
	}
	snprintf(buf, sizeof(buf), "%s",
		 v ? json_object_to_json_string_ext(
			     v, JSON_C_TO_STRING_PLAIN |
					JSON_C_TO_STRING_NOSLASHESCAPE) :
		     "missing");
	return buf;
}

static void test_spec(void)
{
	struct json_object *s = spec(true, false);
	struct json_object *kept = spec(true, true);
	struct json_object *file = spec(false, false);

	ok(s && kept && file, "wiring_spec_build makes a spec of each kind");
	if (!s || !kept || !file)
		return;
	is_str(get(s, "process.rlimits"), "missing",
	       "from ctr oci spec: no rlimits (CRI clears them without a base spec)");
	is_str(get(s, "process.apparmorProfile"), "missing",
	       "no apparmor profile");
	is_str(get(s, "linux.seccomp"), "missing", "no seccomp");
	is_str(get(s, "process.capabilities.bounding"),
	       "[\"CAP_CHOWN\",\"CAP_KILL\"]",
	       "CAP_NET_RAW dropped from bounding");
	is_str(get(s, "process.capabilities.permitted"),
	       "[\"CAP_CHOWN\",\"CAP_KILL\"]", "and from permitted");
	is_str(get(kept, "process.capabilities.effective"),
	       "[\"CAP_CHOWN\",\"CAP_NET_RAW\",\"CAP_KILL\"]",
	       "--keep-net-raw keeps it");
	is_str(get(s, "hooks.prestart"),
	       "[{\"path\":\"/usr/bin/nvidia-hook\"},{\"path\":\"/usr/local/libexec/oci/hooks.d/oci-sockopt-hook\","
	       "\"args\":[\"oci-sockopt-hook\",\"prestart\"],\"env\":[\"OCI_SOCKOPT_HOOK_CONFIG=/etc/oci-sockopt-hook/config.json\"],\"timeout\":10}]",
	       "prestart: another tool's hook kept, a stale one of ours replaced by ours, last");
	is_str(get(s, "hooks.poststop.0.args.1"), "\"poststop\"",
	       "poststop: ours");
	is_str(get(s, "annotations.node\\.sockopt-hook\\.io/runtime-handler"),
	       "missing", "(a dotted key is not a path here)");
	{
		struct json_object *ann = NULL, *h = NULL;

		json_object_object_get_ex(s, "annotations", &ann);
		json_object_object_get_ex(
			ann, "node.sockopt-hook.io/runtime-handler", &h);
		is_str(json_object_get_string(h), "sockopt",
		       "the handler's name in node.sockopt-hook.io/runtime-handler");
	}
	is_str(get(file, "process.rlimits.0.hard"), "1024",
	       "from the default handler's own base spec: its rlimits stay (CRI keeps them too)");
	json_object_put(s);
	json_object_put(kept);
	json_object_put(file);
}

/* The C text against the example file, as JSON values. */
static void same_as_example(bool always, const char *name)
{
	char path[512], *ex = NULL, *text = wiring_hooksd_text(&hook, always);
	size_t len;
	struct json_object *a, *b;

	snprintf(path, sizeof(path), "%s/%s", EXAMPLES, name);
	fileio_read_at(-100, path, 0, 1 << 16, &ex, &len);
	a = text ? json_tokener_parse(text) : NULL;
	b = ex ? json_tokener_parse(ex) : NULL;
	ok(a && b && json_object_equal(a, b),
	   "runtime configure's hooks.d file (%s) is examples/%s",
	   always ? "always" : "annotations", name);
	json_object_put(a);
	json_object_put(b);
	free(text);
	free(ex);
}

static struct json_object *toml(const char *text)
{
	char err[SH_TOML_ERR_MAX];
	struct json_object *o = NULL;

	if (toml_parse(text, strlen(text), &o, err))
		tap_diag("toml: %s", err);
	return o;
}

static const char dump_v2[] =
	"version = 2\n"
	"[plugins.\"io.containerd.grpc.v1.cri\"]\nsandbox_image = \"pause:1\"\n"
	"[plugins.\"io.containerd.grpc.v1.cri\".containerd]\ndefault_runtime_name = \"runc\"\n"
	"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
	"runtime_type = \"io.containerd.runc.v2\"\n"
	"pod_annotations = [\"example.com/*\", \"*/*\", \"node.sockopt-hook.io/*\"]\n"
	"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
	"SystemdCgroup = true\n";

static void test_dropin(void)
{
	struct ctd c = { .major = 1, .main_version = 2 };
	struct sh_error err = { 0 };
	struct json_object *doc = NULL, *rt;
	const char *const runc[] = { "plugins",	   "io.containerd.grpc.v1.cri",
				     "containerd", "runtimes",
				     "runc",	   NULL };

	snprintf(c.spec_dir, sizeof(c.spec_dir),
		 "/etc/containerd/oci-sockopt-hook");
	c.before = toml(dump_v2);
	rt = toml_get(c.before, runc);
	ok(rt && !wiring_ctd_dropin_build(&c, rt, &doc, &err),
	   "1.x drop-in built (%s)", err.msg);
	is_str(get(doc, "plugins.io.containerd.grpc.v1.cri.sandbox_image"),
	       "missing", "(keys with dots: read through toml_get)");
	{
		const char *const sb[] = { "plugins",
					   "io.containerd.grpc.v1.cri",
					   "sandbox_image", NULL };
		const char *const h[] = {
			"plugins",	  "io.containerd.grpc.v1.cri",
			"containerd",	  "runtimes",
			"sockopt-bypass", NULL
		};
		struct json_object *bypass = toml_get(doc, h);

		is_str(json_object_get_string(toml_get(doc, sb)), "pause:1",
		       "1.x: the node's whole CRI section (its sandbox image) is in the drop-in");
		ok(toml_get(doc, runc) != NULL, "1.x: and its runc handler");
		is_str(get(bypass, "pod_annotations"),
		       "[\"example.com/*\",\"sockopt-hook.io/*\"]",
		       "pod_annotations: the default's, less globs that pass node.sockopt-hook.io/runtime-handler, plus ours");
		is_str(get(bypass, "base_runtime_spec"),
		       "\"/etc/containerd/oci-sockopt-hook/sockopt-bypass-base-spec.json\"",
		       "the handler's own base spec");
		is_str(get(bypass, "options"), "{\"SystemdCgroup\":true}",
		       "the default handler's options (cgroup driver) copied");
	}
	json_object_put(doc);
	doc = NULL;
	c.major = 2;
	c.main_version = 3;
	ok(!wiring_ctd_dropin_build(&c, rt, &doc, &err), "2.x drop-in built");
	{
		const char *const v3[] = { "plugins",
					   "io.containerd.cri.v1.runtime",
					   "containerd", "runtimes", NULL };
		struct json_object *rts = toml_get(doc, v3);

		ok(rts && json_object_object_length(rts) == 2 &&
			   json_object_object_length(toml_get(
				   doc, (const char *const[]){ "plugins",
							       NULL })) == 1,
		   "2.x, version 3 main config: only the two handlers, under io.containerd.cri.v1.runtime");
		is_str(get(doc, "version"), "3", "the main config's version");
	}
	json_object_put(doc);
	json_object_put(c.before);
}

static void test_diff(void)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	wiring_diff_print(m, "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n",
			  "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n", "/f");
	fclose(m);
	is_str(out,
	       "--- /f\n+++ /f\n@@\n b\n c\n d\n-e\n+E\n f\n g\n h\n i\n j\n+k\n",
	       "the dry run's diff: three lines of context, changes closer than six lines in one hunk");
	free(out);
	out = NULL;
	m = open_memstream(&out, &len);
	wiring_diff_print(m, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
			  "x\n2\n3\n4\n5\n6\n7\n8\n9\ny\n", "/g");
	fclose(m);
	is_str(out,
	       "--- /g\n+++ /g\n@@\n-1\n+x\n 2\n 3\n 4\n@@\n 7\n 8\n 9\n-10\n+y\n",
	       "changes further apart: two hunks");
	free(out);
	out = NULL;
	m = open_memstream(&out, &len);
	wiring_diff_print(m, NULL, "x\n", "/new");
	fclose(m);
	is_str(out, "--- /dev/null\n+++ /new\n@@\n+x\n", "a new file");
	free(out);
}

/*
 * The Nth realloc() from now fails (0: none fails); the block it was
 * asked to grow, and whether it was freed afterwards.
 */
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
static int realloc_fails_in;
static void *refused;
static bool refused_freed;

void *__wrap_realloc(void *p, size_t n)
{
	if (realloc_fails_in && !--realloc_fails_in) {
		refused = p;
		refused_freed = false;
		return NULL;
	}
	return __real_realloc(p, n);
}

void __wrap_free(void *p)
{
	if (p && p == refused)
		refused_freed = true;
	__real_free(p);
}

/* A diff of more than 64 lines grows its line arrays (64, then 128
 * lines): when a growth fails, the array it could not grow is freed. */
static void test_diff_enomem(void)
{
	static const char *const what[] = { "the lines", "their lengths" };
	char old[2 * 100 + 1] = "";

	for (int i = 0; i < 100; i++)
		strcat(old, "l\n");
	/* The 3rd realloc() grows the old text's line array, the 4th their
	 * lengths (the 1st and 2nd make them). */
	for (int call = 3; call <= 4; call++) {
		FILE *m = fopen("/dev/null", "we");
		int r;

		refused = NULL;
		realloc_fails_in = call;
		r = wiring_diff_print(m, old, "x\n", "/f");
		realloc_fails_in = 0;
		fclose(m);
		is_int(r, -ENOMEM, "a growth of %s that fails: -ENOMEM",
		       what[call - 3]);
		ok(refused && refused_freed,
		   "the array of %s that could not grow is freed",
		   what[call - 3]);
		refused = NULL;
	}
}

/* What containerd's and CRI-O's configs say of NRI, and the refusals. */
static const char nri_21[] = /* containerd 2.1.9's default */
	"version = 3\n[plugins.'io.containerd.nri.v1.nri']\n"
	"disable = false\nsocket_path = '/var/run/nri/nri.sock'\n"
	"plugin_path = '/opt/nri/plugins'\nplugin_config_path = '/etc/nri/conf.d'\n"
	"disable_connections = false\n";

static int nri_of(const char *dump, bool crio, struct wiring_nri *n,
		  struct sh_error *err)
{
	struct json_object *d = toml(dump);
	int r;

	memset(n, 0, sizeof(*n));
	memset(err, 0, sizeof(*err));
	r = crio ? wiring_crio_nri_settings(d, "/etc/crio/crio.conf.d", n,
					    err) :
		   wiring_ctd_nri_settings(
			   d, "2.1.9", "/etc/containerd/config.toml", n, err);
	json_object_put(d);
	return r;
}

static void test_nri_settings(void)
{
	struct wiring_nri n;
	struct sh_error err;

	ok(!nri_of(nri_21, false, &n, &err) && n.connections,
	   "containerd 2.1's default: NRI on, connections allowed");
	is_str(n.socket, "/var/run/nri/nri.sock", "its socket");
	is_str(n.plugin_dir, "/opt/nri/plugins", "its plugin directory");
	ok(!nri_of("version = 3\n[plugins.'io.containerd.nri.v1.nri']\n"
		   "disable = false\nsocket_path = '/run/x.sock'\n"
		   "plugin_path = '/var/lib/nri'\n",
		   false, &n, &err) &&
		   !strcmp(n.socket, "/run/x.sock") &&
		   !strcmp(n.plugin_dir, "/var/lib/nri"),
	   "a socket and plugin directory of the node's own");
	ok(nri_of("version = 2\n[plugins.'io.containerd.grpc.v1.cri']\n", false,
		  &n, &err) == -ENOTSUP &&
		   strstr(err.msg, "has no NRI"),
	   "containerd 1.6 (no NRI plugin in its dump): refused: %s", err.msg);
	ok(nri_of("version = 2\n[plugins.'io.containerd.nri.v1.nri']\n"
		  "disable = true\n",
		  false, &n, &err) == -ENOTSUP &&
		   strstr(err.msg,
			  "set `disable = false` under [plugins.'io.containerd.nri.v1.nri'] in /etc/containerd/config.toml"),
	   "NRI off (1.7's default): one line says what to change: %s",
	   err.msg);
	ok(!nri_of("version = 3\n[plugins.'io.containerd.nri.v1.nri']\n"
		   "disable_connections = true\n",
		   false, &n, &err) &&
		   !n.connections && strstr(n.connect_fix, "--nri plugin"),
	   "disable_connections: only a pre-registered plugin: %s",
	   n.connect_fix);
	ok(nri_of("version = 3\n[plugins.'io.containerd.nri.v1.nri']\n"
		  "[plugins.'io.containerd.nri.v1.nri'.default_validator]\n"
		  "enable = true\nreject_oci_hook_adjustment = true\n",
		  false, &n, &err) == -EPERM &&
		   strstr(err.msg, "reject_oci_hook_adjustment"),
	   "a default validator that rejects plugins' hooks: refused: %s",
	   err.msg);
	ok(!nri_of("version = 3\n[plugins.'io.containerd.nri.v1.nri']\n"
		   "[plugins.'io.containerd.nri.v1.nri'.default_validator]\n"
		   "enable = false\nreject_oci_hook_adjustment = true\n",
		   false, &n, &err),
	   "the same validator turned off: fine");
	ok(nri_of("[crio.nri]\nenable_nri = false\n", true, &n, &err) ==
			   -ENOTSUP &&
		   strstr(err.msg, "set `enable_nri = true` under [crio.nri]"),
	   "CRI-O with NRI off: one line: %s", err.msg);
	ok(!nri_of("[crio.nri]\nenable_nri = true\n"
		   "nri_listen = '/var/run/nri/nri.sock'\n"
		   "nri_plugin_dir = '/opt/nri/plugins'\n",
		   true, &n, &err) &&
		   n.connections && !strcmp(n.plugin_dir, "/opt/nri/plugins"),
	   "CRI-O with NRI on");
	ok(nri_of("[crio.nri]\nenable_nri = true\n"
		  "[crio.nri.default_validator]\nnri_enable_default_validator = true\n"
		  "nri_validator_reject_oci_hook_adjustment = true\n",
		  true, &n, &err) == -EPERM,
	   "CRI-O's validator rejecting hooks: refused");
}

/* The unit runtime configure writes is the example's, less its comments
 * (ours begin with our mark, which unconfigure looks for). */
static void test_nri_unit(void)
{
	char path[512], *ex = NULL;
	char *text = wiring_nri_unit_text(hook.path, SH_DEFAULT_CONFIG,
					  SH_WIRING_NRI_SOCKET);
	char *other = wiring_nri_unit_text(hook.path, "/etc/x.json",
					   "/run/other.sock");
	size_t len;

	snprintf(path, sizeof(path), "%s/systemd/%s", EXAMPLES,
		 SH_WIRING_NRI_UNIT);
	fileio_read_at(-100, path, 0, 1 << 16, &ex, &len);
	ok(text && ex && strstr(ex, "\n[Unit]\n") &&
		   strstr(text, "\n[Unit]\n") &&
		   !strcmp(strstr(ex, "\n[Unit]\n"),
			   strstr(text, "\n[Unit]\n")),
	   "the NRI unit runtime configure writes is examples/systemd/%s from [Unit] on",
	   SH_WIRING_NRI_UNIT);
	ok(text && !strncmp(text, SH_WIRING_MARK, strlen(SH_WIRING_MARK)),
	   "it starts with our mark");
	ok(other &&
		   strstr(other,
			  "ExecStart=/usr/local/libexec/oci/hooks.d/oci-sockopt-hook --config /etc/x.json nri --socket /run/other.sock\n") &&
		   strstr(other, "ConditionPathExists=/etc/x.json\n"),
	   "another config and the runtime's own socket: in ExecStart");
	free(text);
	free(other);
	free(ex);
}

/* The fallback's spec for the default handler: the hooks, no handler's
 * name (require_annotations.runtime_handlers stays off it), its own
 * capabilities. */
static void test_nri_fallback_spec(void)
{
	struct sh_error err = { 0 };
	char *text = NULL;
	struct json_object *s = NULL, *ann = NULL;

	ok(!wiring_spec_build(default_spec, true, NULL, &hook, true, &text,
			      &err) &&
		   (s = json_tokener_parse(text)),
	   "the default handler's spec with the hook");
	is_str(get(s, "hooks.prestart.-1.args.1"), "\"prestart\"",
	       "our prestart last");
	json_object_object_get_ex(s, "annotations", &ann);
	ok(!json_object_object_get_ex(ann, SH_WIRING_HANDLER_KEY, NULL),
	   "no %s: the default handler is no handler of ours",
	   SH_WIRING_HANDLER_KEY);
	is_str(get(s, "process.capabilities.bounding"),
	       "[\"CAP_CHOWN\",\"CAP_NET_RAW\",\"CAP_KILL\"]",
	       "its capabilities as they were");
	json_object_put(s);
	free(text);
}

#define IMPORT_LINES                                                     \
	"# Added by `oci-sockopt-hook runtime configure --add-import` (" \
	"`runtime unconfigure` takes it out).\n"                         \
	"imports = [\"/etc/containerd/conf.d/*.toml\"]\n"

/* edit(text, has_key) is want, or fails with want_r */
static void import_case(const char *text, bool has_key, const char *want,
			int want_r, const char *what)
{
	char *out = NULL;
	int r = wiring_ctd_import_edit(text, "/etc/containerd/conf.d/*.toml",
				       has_key, &out);

	is_int(r, want_r, "--add-import edit, %s: returns %d", what, want_r);
	if (!want_r)
		is_str(out, want, "--add-import edit, %s", what);
	free(out);
}

static void test_import_edit(void)
{
	import_case("version = 2\n\n[plugins]\n", false,
		    IMPORT_LINES "version = 2\n\n[plugins]\n", 0,
		    "Debian's config.toml: above its first key");
	import_case("# node image\n\n  # more\nversion = 2\n", false,
		    "# node image\n\n  # more\n" IMPORT_LINES "version = 2\n",
		    0, "after the leading comments and blank lines");
	import_case(
		"# only a comment", false, "# only a comment\n" IMPORT_LINES, 0,
		"a file of comments without a last newline: a newline first");
	import_case("", false, IMPORT_LINES, 0,
		    "an empty file: the lines alone");
	import_case("disabled_plugins = []\nimports = []\noom_score = 0\n",
		    true,
		    "disabled_plugins = []\n" IMPORT_LINES "oom_score = 0\n", 0,
		    "containerd config default: in place of imports = []");
	import_case("version = 2\n  imports  =  [ ]  # none\n", true,
		    "version = 2\n" IMPORT_LINES, 0,
		    "imports = [] with spaces and a comment");
	import_case("imports = []\nimports = []\n", true, NULL, -EINVAL,
		    "imports = [] twice: refused");
	import_case("imports = [\n]\n", true, NULL, -EINVAL,
		    "imports = [] over two lines: refused, not guessed");
	import_case("imports = [\"/x.toml\"]\n", true, NULL, -EINVAL,
		    "imports of a file: no empty imports line, refused");
}

int main(void)
{
	test_spec();
	same_as_example(false, "hooks.d-oci-sockopt-hook.json");
	same_as_example(true, "hooks.d-oci-sockopt-hook-always.json");
	test_dropin();
	test_diff();
	test_diff_enomem();
	test_nri_settings();
	test_nri_unit();
	test_nri_fallback_spec();
	test_import_edit();
	return tap_done();
}
