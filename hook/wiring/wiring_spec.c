// SPDX-License-Identifier: GPL-2.0-only
/*
 * The base runtime spec of a containerd handler that runs the hook
 * (wiring_spec.h), made at configure time from what containerd gives the
 * containers of the node's default handler, read in containerd's CRI
 * (internal/cri/server/container_create.go, 2.1; pkg/cri/server in 1.6):
 *
 *  - without a base_runtime_spec, a container's spec is
 *    oci.GenerateSpec's default (`ctr oci spec` prints it) and CRI
 *    applies WithoutDefaultSecuritySettings: no process.rlimits (so the
 *    container inherits containerd's own limits, not the default's
 *    RLIMIT_NOFILE 1024), no apparmorProfile, no linux.seccomp;
 *  - with one, CRI starts from that file as it is and clears none of
 *    these, so a base spec made from `ctr oci spec` must drop them itself;
 *  - capabilities come from the base spec (or the default's 14, with
 *    CAP_NET_RAW), then the pod's securityContext adds and drops.
 *
 * So the handler's spec is the default handler's own base spec file if it
 * has one, else `ctr oci spec` less those three, plus our hooks and the
 * handler's name in SH_WIRING_HANDLER_KEY, and less CAP_NET_RAW: an
 * AF_PACKET socket never reaches cgroup/sock_create, so a pod that opts
 * into a socket policy should not get raw sockets without asking (a pod
 * that adds NET_RAW still gets it). --keep-net-raw keeps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "wiring/wiring.h"
#include "wiring/wiring_spec.h"

#define HOOK_TIMEOUT_SEC 10

static struct json_object *child(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	return v;
}

/* A hooks entry: {path, args: [ident, stage], env, timeout}. */
struct json_object *wiring_spec_hook(const struct wiring_hook *hook,
				     const char *stage)
{
	struct json_object *h = json_object_new_object();
	struct json_object *args = json_object_new_array();
	struct json_object *env = json_object_new_array();

	if (!h || !args || !env) {
		json_object_put(h);
		json_object_put(args);
		json_object_put(env);
		return NULL;
	}
	json_object_array_add(args, json_object_new_string(SH_IDENT));
	json_object_array_add(args, json_object_new_string(stage));
	for (int i = 0; i < hook->nr_env; i++)
		json_object_array_add(env,
				      json_object_new_string(hook->env[i]));
	json_object_object_add(h, "path", json_object_new_string(hook->path));
	json_object_object_add(h, "args", args);
	json_object_object_add(h, "env", env);
	json_object_object_add(h, "timeout",
			       json_object_new_int(HOOK_TIMEOUT_SEC));
	return h;
}

static bool is_ours(struct json_object *entry)
{
	const char *path = json_object_get_string(child(entry, "path"));
	const char *base = path ? strrchr(path, '/') : NULL;

	return base && !strcmp(base + 1, SH_IDENT);
}

/* stage's list without entries of ours, then ours appended. */
static int set_stage(struct json_object *hooks, const char *stage,
		     const struct wiring_hook *hook)
{
	struct json_object *old = child(hooks, stage);
	struct json_object *list = json_object_new_array();
	struct json_object *ours = wiring_spec_hook(hook, stage);

	if (!list || !ours) {
		json_object_put(list);
		json_object_put(ours);
		return -ENOMEM;
	}
	for (size_t i = 0; json_object_is_type(old, json_type_array) &&
			   i < json_object_array_length(old);
	     i++) {
		struct json_object *e = json_object_array_get_idx(old, i);

		if (!is_ours(e))
			json_object_array_add(list, json_object_get(e));
	}
	json_object_array_add(list, ours);
	return json_object_object_add(hooks, stage, list) ? -ENOMEM : 0;
}

static void drop_cap(struct json_object *caps, const char *cap)
{
	static const char *const sets[] = { "bounding", "effective",
					    "permitted", "inheritable",
					    "ambient" };

	for (size_t s = 0; s < ARRAY_SIZE(sets); s++) {
		struct json_object *list = child(caps, sets[s]);

		if (!json_object_is_type(list, json_type_array))
			continue;
		for (size_t i = json_object_array_length(list); i-- > 0;)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(list, i)) ?:
					    "",
				    cap))
				json_object_array_del_idx(list, i, 1);
	}
}

/* The object under key, made if missing; NULL if key holds another type. */
static struct json_object *table(struct json_object *o, const char *key)
{
	struct json_object *v = child(o, key);

	if (v)
		return json_object_is_type(v, json_type_object) ? v : NULL;
	v = json_object_new_object();
	if (v && json_object_object_add(o, key, v)) {
		json_object_put(v);
		return NULL;
	}
	return v;
}

static int shape(struct json_object *spec, bool generated, const char *handler,
		 const struct wiring_hook *hook, bool keep_net_raw)
{
	struct json_object *process = child(spec, "process");
	struct json_object *hooks = table(spec, "hooks");
	struct json_object *ann = table(spec, "annotations");

	if (!json_object_is_type(process, json_type_object) || !hooks || !ann)
		return -EINVAL;
	if (generated) {
		json_object_object_del(process, "rlimits");
		json_object_object_del(process, "apparmorProfile");
		json_object_object_del(child(spec, "linux"), "seccomp");
	}
	if (!keep_net_raw)
		drop_cap(child(process, "capabilities"), "CAP_NET_RAW");
	if (set_stage(hooks, "prestart", hook) ||
	    set_stage(hooks, "poststop", hook) ||
	    (handler &&
	     json_object_object_add(ann, SH_WIRING_HANDLER_KEY,
				    json_object_new_string(handler))))
		return -ENOMEM;
	return 0;
}

int wiring_spec_build(const char *source, bool generated, const char *handler,
		      const struct wiring_hook *hook, bool keep_net_raw,
		      char **text, struct sh_error *err)
{
	_cleanup_json_ struct json_object *spec = json_tokener_parse(source);
	const char *out;

	if (!json_object_is_type(spec, json_type_object))
		return error_set(err, -EINVAL,
				 "the %s spec is not a JSON object",
				 generated ? "default (ctr oci spec)" : "base");
	if (shape(spec, generated, handler, hook, keep_net_raw))
		return error_set(err, -EINVAL,
				 "the %s spec has no process object",
				 generated ? "default (ctr oci spec)" : "base");
	out = json_object_to_json_string_ext(
		spec, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!out || asprintf(text, "%s\n", out) < 0)
		return error_set(err, -ENOMEM, "runtime: out of memory");
	return 0;
}

/*
 * `runtime-exec`'s edit (wiring_spec.h): Docker's shim runs the
 * registered runtime as it would run runc (containerd's runc shim:
 * `RUNTIME --root R --log L --log-format json create --bundle B ID`,
 * then start, state, kill, delete), so at create the bundle's
 * config.json gets the hook's createRuntime and poststop entries and
 * runc does the rest; every other verb goes to runc untouched. An entry
 * of ours already there (a CDI device's) runs the hook already: the
 * hook reads the devices and the defaults either way (container.c).
 */

#define BUNDLE_CONFIG_MAX (8 << 20)

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	return v;
}

static bool has_ours(struct json_object *list)
{
	size_t n = json_object_is_type(list, json_type_array) ?
			   json_object_array_length(list) :
			   0;

	for (size_t i = 0; i < n; i++) {
		const char *path = json_object_get_string(
			member(json_object_array_get_idx(list, i), "path"));
		const char *base = path ? strrchr(path, '/') : NULL;

		if (base && !strcmp(base + 1, SH_IDENT))
			return true;
	}
	return false;
}

static int append(struct json_object *hooks, const char *stage,
		  const struct wiring_hook *hook)
{
	struct json_object *list = member(hooks, stage);
	struct json_object *entry = wiring_spec_hook(hook, stage);

	if (!entry)
		return -ENOMEM;
	if (!json_object_is_type(list, json_type_array)) {
		list = json_object_new_array();
		json_object_object_add(hooks, stage, list);
	}
	json_object_array_add(list, entry);
	return 0;
}

int wiring_spec_bundle_hooks(struct json_object *spec,
			     const struct wiring_hook *hook)
{
	struct json_object *hooks = member(spec, "hooks");
	int r;

	if (has_ours(member(hooks, "prestart")) ||
	    has_ours(member(hooks, "createRuntime")))
		return 0;
	if (!json_object_is_type(hooks, json_type_object)) {
		hooks = json_object_new_object();
		json_object_object_add(spec, "hooks", hooks);
	}
	r = append(hooks, "createRuntime", hook);
	if (!r)
		r = append(hooks, "poststop", hook);
	return r ?: 1;
}

int wiring_spec_bundle_add(const char *bundle, const struct wiring_hook *hook,
			   struct sh_error *err)
{
	_cleanup_json_ struct json_object *spec = NULL;
	_cleanup_free_ char *text = NULL, *path = NULL, *tmp = NULL;
	_cleanup_close_ int fd = -1;
	const char *out;
	size_t len;
	int r;

	if (asprintf(&path, "%s/config.json", bundle) < 0 ||
	    asprintf(&tmp, "%s/.config.json.oci-sockopt-hook", bundle) < 0) {
		path = tmp = NULL;
		return error_set(err, -ENOMEM, "out of memory");
	}
	r = fileio_read_at(AT_FDCWD, path, 0, BUNDLE_CONFIG_MAX, &text, &len);
	if (r)
		return error_errno(err, r, "cannot read %.200s", path);
	spec = json_tokener_parse(text);
	if (!json_object_is_type(spec, json_type_object))
		return error_set(err, -EINVAL, "%.200s is not a JSON object",
				 path);
	r = wiring_spec_bundle_hooks(spec, hook);
	if (r <= 0)
		return r ? error_set(err, r, "out of memory") : 0;
	out = json_object_to_json_string_ext(
		spec, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return error_errno(err, -errno, "cannot write %.200s", tmp);
	r = fileio_write_all(fd, out, strlen(out));
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r) {
		unlink(tmp);
		return error_errno(err, r, "cannot write %.200s", path);
	}
	return 0;
}

/* runc's global options that take a value (runc main.go). */
static bool takes_value(const char *opt)
{
	static const char *const with[] = { "--root", "--log", "--log-format",
					    "--criu", "--rootless" };

	for (size_t i = 0; i < ARRAY_SIZE(with); i++)
		if (!strcmp(opt, with[i]))
			return true;
	return false;
}

int wiring_spec_bundle_verb(int argc, char *const *argv, const char **bundle)
{
	int verb = -1;

	*bundle = NULL;
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] != '-') {
			verb = i;
			break;
		}
		if (!strchr(argv[i], '=') && takes_value(argv[i]))
			i++;
	}
	if (verb < 0 || strcmp(argv[verb], "create"))
		return verb;
	*bundle = ".";
	for (int i = verb + 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--bundle") || !strcmp(argv[i], "-b")) &&
		    i + 1 < argc)
			*bundle = argv[++i];
		else if (!strncmp(argv[i], "--bundle=", 9))
			*bundle = argv[i] + 9;
		else if (!strncmp(argv[i], "-b=", 3))
			*bundle = argv[i] + 3;
	}
	return verb;
}
