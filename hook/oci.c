// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runtime's input: the OCI state on stdin and the bundle's config.json.
 * runc sends "creating", crun "created" plus extra fields; neither status
 * nor unknown fields are checked, only what we use.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "config_parse.h"
#include "log.h"
#include "oci.h"

bool oci_valid_id(const char *id)
{
	size_t len = strlen(id);

	if (len == 0 || len > SH_MAX_ID_LEN || !strcmp(id, ".") ||
	    !strcmp(id, ".."))
		return false;
	for (const char *p = id; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-_.+", *p))
			continue;
		return false;
	}
	return true;
}

static int state_string(struct json_object *root, const char *key,
			bool required, const char **out)
{
	struct json_object *val;

	*out = NULL;
	if (!json_object_object_get_ex(root, key, &val) ||
	    json_object_is_type(val, json_type_null)) {
		if (!required)
			return 0;
		log_error("OCI state on stdin lacks '%s'", key);
		return -EINVAL;
	}
	if (!json_object_is_type(val, json_type_string)) {
		log_error("OCI state on stdin: '%s' must be a string", key);
		return -EINVAL;
	}
	*out = json_object_get_string(val);
	return 0;
}

static int state_pid(struct json_object *root, pid_t *pid)
{
	struct json_object *val;
	int64_t v;

	*pid = 0;
	if (!json_object_object_get_ex(root, "pid", &val))
		return 0;
	if (!json_object_is_type(val, json_type_int)) {
		log_error("OCI state on stdin: 'pid' must be an integer");
		return -EINVAL;
	}
	v = json_object_get_int64(val);
	if (v < 0 || v > INT_MAX) {
		log_error("OCI state on stdin: pid %lld is out of range",
			  (long long)v);
		return -EINVAL;
	}
	*pid = (pid_t)v;
	return 0;
}

/* Copies string annotations from obj into st->annotations, later wins. */
static int merge_annotations(struct oci_state *st, struct json_object *obj,
			     const char *what)
{
	if (!obj)
		return 0;
	if (!json_object_is_type(obj, json_type_object)) {
		log_error("%s: 'annotations' must be an object", what);
		return -EINVAL;
	}
	json_object_object_foreach(obj, key, val) {
		if (!json_object_is_type(val, json_type_string)) {
			log_error("%s: annotation %s must be a string", what,
				  LOG_Q(key));
			return -EINVAL;
		}
		json_object_object_add(st->annotations, key,
				       json_object_get(val));
	}
	return 0;
}

static int check_state(struct oci_state *st)
{
	if (!oci_valid_id(st->id)) {
		log_error(
			"OCI state on stdin: invalid container id %s (letters, digits, '-', '_', '.', '+'; at most %d)",
			LOG_Q(st->id), SH_MAX_ID_LEN);
		return -EINVAL;
	}
	if (st->bundle && st->bundle[0] != '/') {
		log_error(
			"OCI state on stdin: bundle '%.128s' is not an absolute path",
			st->bundle);
		return -EINVAL;
	}
	log_set_context("container %s", st->id);
	return 0;
}

int oci_parse_state(const char *text, size_t len, struct oci_state *st)
{
	struct json_object *ann = NULL;
	int r;

	memset(st, 0, sizeof(*st));
	st->annotations = json_object_new_object();
	if (!st->annotations)
		return -ENOMEM;
	if (strnlen(text, len) != len) {
		log_error("OCI state on stdin contains a NUL byte");
		return -EINVAL;
	}
	r = cfg_parse_json("OCI state on stdin", text, len, &st->state_root);
	if (r)
		return r;
	if (!json_object_is_type(st->state_root, json_type_object)) {
		log_error("OCI state on stdin must be a JSON object");
		return -EINVAL;
	}
	r = state_string(st->state_root, "id", true, &st->id);
	if (!r)
		r = state_string(st->state_root, "status", false, &st->status);
	if (!r)
		r = state_string(st->state_root, "bundle", false, &st->bundle);
	if (!r)
		r = state_pid(st->state_root, &st->pid);
	if (!r)
		r = check_state(st);
	if (!r &&
	    json_object_object_get_ex(st->state_root, "annotations", &ann))
		r = merge_annotations(st, ann, "OCI state on stdin");
	return r;
}

int oci_read_state(int fd, struct oci_state *st)
{
	_cleanup_free_ char *buf = NULL;
	size_t used;
	int r = read_fd(fd, SH_MAX_STATE_SIZE, &buf, &used);

	if (r == -EFBIG) {
		log_error("OCI state on stdin is larger than %d bytes",
			  SH_MAX_STATE_SIZE);
		return r;
	}
	if (r) {
		log_error("cannot read OCI state from stdin: %s", strerror(-r));
		return r;
	}
	if (used == 0) {
		log_error(
			"no OCI state on stdin (is this run as an OCI hook?)");
		return -EINVAL;
	}
	return oci_parse_state(buf, used, st);
}

int oci_parse_bundle_config(const char *what, const char *text, size_t len,
			    struct oci_state *st)
{
	struct json_object *ann = NULL, *saved;
	int r = cfg_parse_json(what, text, len, &st->config_root);

	if (r)
		return r;
	if (!json_object_is_type(st->config_root, json_type_object)) {
		log_error("%s must be a JSON object", what);
		return -EINVAL;
	}
	json_object_object_get_ex(st->config_root, "annotations", &ann);
	/* The state's annotations are the runtime's view: they win. */
	saved = st->annotations;
	st->annotations = json_object_new_object();
	if (!st->annotations) {
		st->annotations = saved;
		return -ENOMEM;
	}
	r = merge_annotations(st, ann, what);
	if (!r)
		r = merge_annotations(st, saved, what);
	json_object_put(saved);
	return r;
}

static int open_bundle_config(const char *bundle, int *fd)
{
	_cleanup_free_ char *real = realpath(bundle, NULL);
	_cleanup_close_ int dir = -1;

	if (!real) {
		log_error("bundle %.128s: %s", bundle, strerror(errno));
		return -errno;
	}
	if (strcmp(real, bundle)) {
		log_error(
			"bundle %.128s is not a canonical path (it resolves to %.128s)",
			bundle, real);
		return -EINVAL;
	}
	dir = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dir < 0) {
		log_error("bundle %.128s: %s", bundle, strerror(errno));
		return -errno;
	}
	*fd = openat(dir, "config.json",
		     O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (*fd < 0) {
		log_error("cannot open %.128s/config.json: %s", bundle,
			  strerror(errno));
		return -errno;
	}
	return 0;
}

int oci_load_bundle(struct oci_state *st)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *text = NULL, *what = NULL;
	char path[64];
	size_t len;
	int r;

	if (!st->bundle) {
		log_error("OCI state on stdin lacks 'bundle'");
		return -EINVAL;
	}
	r = open_bundle_config(st->bundle, &fd);
	if (r)
		return r;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = read_file(path, SH_MAX_BUNDLE_CONFIG, &text, &len);
	if (r) {
		log_error("cannot read %.128s/config.json: %s", st->bundle,
			  r == -EINVAL ? "not a regular file" : strerror(-r));
		return r;
	}
	if (asprintf(&what, "%.128s/config.json", st->bundle) < 0)
		return -ENOMEM;
	return oci_parse_bundle_config(what, text, len, st);
}

const char *oci_annotation(const struct oci_state *st, const char *key)
{
	struct json_object *val;

	if (!st->annotations ||
	    !json_object_object_get_ex(st->annotations, key, &val))
		return NULL;
	return json_object_get_string(val);
}

void oci_state_free(struct oci_state *st)
{
	json_object_put(st->annotations);
	json_object_put(st->state_root);
	json_object_put(st->config_root);
	memset(st, 0, sizeof(*st));
}
