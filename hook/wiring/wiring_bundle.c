// SPDX-License-Identifier: GPL-2.0-only
/*
 * `runtime-exec`'s edit (wiring_bundle.h): Docker's shim runs the
 * registered runtime as it would run runc (containerd's runc shim:
 * `RUNTIME --root R --log L --log-format json create --bundle B ID`,
 * then start, state, kill, delete), so at create the bundle's
 * config.json gets the hook's createRuntime and poststop entries and
 * runc does the rest; every other verb goes to runc untouched. An entry
 * of ours already there (a CDI device's) runs the hook already: the
 * hook reads the devices and the defaults either way (container.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "wiring/wiring.h"
#include "wiring/wiring_bundle.h"
#include "wiring/wiring_spec.h"

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

int wiring_bundle_hooks(struct json_object *spec,
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

int wiring_bundle_add(const char *bundle, const struct wiring_hook *hook,
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
	r = wiring_bundle_hooks(spec, hook);
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

int wiring_bundle_verb(int argc, char *const *argv, const char **bundle)
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
