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
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "lib/cleanup.h"
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
