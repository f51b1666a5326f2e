// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runtime's input: the OCI state on stdin and the bundle's config.json.
 * runc sends "creating", crun "created" plus extra fields; neither status
 * nor unknown fields are checked, only what we use.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/oci.h"
#include "input/strictjson.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/trust.h"

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
			bool required, const char **ret, struct sh_error *err)
{
	struct json_object *val;

	*ret = NULL;
	if (!json_object_object_get_ex(root, key, &val) ||
	    json_object_is_type(val, json_type_null)) {
		if (!required)
			return 0;
		return error_set(err, -EINVAL, "OCI state on stdin lacks '%s'",
				 key);
	}
	if (!json_object_is_type(val, json_type_string))
		return error_set(err, -EINVAL,
				 "OCI state on stdin: '%s' must be a string",
				 key);
	*ret = json_object_get_string(val);
	return 0;
}

static int state_pid(struct json_object *root, pid_t *pid, struct sh_error *err)
{
	struct json_object *val;
	int64_t v;

	*pid = 0;
	if (!json_object_object_get_ex(root, "pid", &val))
		return 0;
	if (!json_object_is_type(val, json_type_int))
		return error_set(
			err, -EINVAL,
			"OCI state on stdin: 'pid' must be an integer");
	v = json_object_get_int64(val);
	if (v < 0 || v > INT_MAX)
		return error_set(err, -EINVAL,
				 "OCI state on stdin: pid %lld is out of range",
				 (long long)v);
	*pid = (pid_t)v;
	return 0;
}

/* Copies string annotations from obj into st->annotations, later wins. */
static int merge_annotations(struct oci_state *st, struct json_object *obj,
			     const char *what, struct sh_error *err)
{
	if (!obj)
		return 0;
	if (!json_object_is_type(obj, json_type_object))
		return error_set(err, -EINVAL,
				 "%s: 'annotations' must be an object", what);
	json_object_object_foreach(obj, key, val) {
		if (!json_object_is_type(val, json_type_string))
			return error_set(err, -EINVAL,
					 "%s: annotation %s must be a string",
					 what, LOG_Q(key));
		json_object_object_add(st->annotations, key,
				       json_object_get(val));
	}
	return 0;
}

static int check_state(struct oci_state *st, struct sh_error *err)
{
	if (!oci_valid_id(st->id))
		return error_set(
			err, -EINVAL,
			"OCI state on stdin: invalid container id %s (letters, digits, '-', '_', '.', '+'; at most %d)",
			LOG_Q(st->id), SH_MAX_ID_LEN);
	if (st->bundle && st->bundle[0] != '/')
		return error_set(
			err, -EINVAL,
			"OCI state on stdin: bundle '%.128s' is not an absolute path",
			st->bundle);
	return 0;
}

static int state_fields(struct oci_state *st, struct sh_error *err)
{
	struct json_object *ann = NULL, *root = st->state_root;
	int r = state_string(root, "id", /* required= */ true, &st->id, err);

	if (r)
		return r;
	r = state_string(root, "status", /* required= */ false, &st->status,
			 err);
	if (r)
		return r;
	r = state_string(root, "bundle", /* required= */ false, &st->bundle,
			 err);
	if (r)
		return r;
	r = state_pid(root, &st->pid, err);
	if (r)
		return r;
	r = check_state(st, err);
	if (r)
		return r;
	if (!json_object_object_get_ex(root, "annotations", &ann))
		return 0;
	return merge_annotations(st, ann, "OCI state on stdin", err);
}

int oci_parse_state(const char *text, size_t len, struct oci_state *st,
		    struct sh_error *err)
{
	int r;

	memset(st, 0, sizeof(*st));
	st->annotations = json_object_new_object();
	if (!st->annotations)
		return error_set(err, -ENOMEM, "out of memory");
	r = strictjson_parse("OCI state on stdin", text, len, &st->state_root,
			     err);
	if (r)
		return r;
	if (!json_object_is_type(st->state_root, json_type_object))
		return error_set(err, -EINVAL,
				 "OCI state on stdin must be a JSON object");
	return state_fields(st, err);
}

int oci_read_state(int fd, struct oci_state *st, struct sh_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t used;
	int r = fileio_read_fd(fd, SH_MAX_STATE_SIZE, &buf, &used);

	if (r == -EFBIG)
		return error_set(err, r,
				 "OCI state on stdin is larger than %d bytes",
				 SH_MAX_STATE_SIZE);
	if (r)
		return error_errno(err, r, "cannot read OCI state from stdin");
	if (used == 0)
		return error_set(
			err, -EINVAL,
			"no OCI state on stdin (is this run as an OCI hook?)");
	return oci_parse_state(buf, used, st, err);
}

int oci_parse_bundle_config(const char *what, const char *text, size_t len,
			    struct oci_state *st, struct sh_error *err)
{
	struct json_object *ann = NULL, *saved;
	int r = strictjson_parse(what, text, len, &st->config_root, err);

	if (r)
		return r;
	if (!json_object_is_type(st->config_root, json_type_object))
		return error_set(err, -EINVAL, "%s must be a JSON object",
				 what);
	json_object_object_get_ex(st->config_root, "annotations", &ann);
	/* The state's annotations are the runtime's view: they win. */
	saved = st->annotations;
	st->annotations = json_object_new_object();
	if (!st->annotations) {
		st->annotations = saved;
		return error_set(err, -ENOMEM, "out of memory");
	}
	r = merge_annotations(st, ann, what, err);
	if (r)
		goto out;
	r = merge_annotations(st, saved, what, err);
out:
	json_object_put(saved);
	return r;
}

/* Absolute, without "//", "." or ".." parts or a trailing "/": what a
 * runtime writes (runc and crun clean the path they are given). */
static bool clean_path(const char *path)
{
	size_t len = strlen(path);

	if (path[0] != '/' || (len > 1 && path[len - 1] == '/') ||
	    strstr(path, "//"))
		return false;
	for (const char *p = path; (p = strchr(p, '/')); p++)
		if (!strncmp(p, "/./", 3) || !strcmp(p, "/.") ||
		    !strncmp(p, "/../", 4) || !strcmp(p, "/.."))
			return false;
	return true;
}

/*
 * The bundle as the runtime named it. Storage is often relocated through a
 * link (/var/lib/containers -> /data/containers), so links are followed,
 * but only those whoever could replace them could not use to choose which
 * config.json (and so which annotations) the hook reads: root's, in a
 * directory only root writes. The resolved directory is opened once.
 */
static int open_bundle(const char *bundle, struct sh_error *err)
{
	_cleanup_free_ char *real = realpath(bundle, NULL);
	int dir, r;

	if (!real)
		return error_errno(err, -errno, "bundle %.128s", bundle);
	if (!clean_path(bundle))
		return error_set(
			err, -EINVAL,
			"bundle %.128s is not a canonical path (it resolves to %.128s)",
			bundle, real);
	r = strcmp(real, bundle) ? trust_check_links(bundle, "bundle", err) : 0;
	if (r)
		return r;
	dir = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dir < 0)
		return error_errno(err, -errno, "bundle %.128s", bundle);
	return dir;
}

int oci_load_bundle(struct oci_state *st, struct sh_error *err)
{
	_cleanup_close_ int dir = -1;
	_cleanup_free_ char *text = NULL;
	char what[SH_OCI_BUNDLE_NAME_MAX];
	size_t len;
	int r;

	if (!st->bundle)
		return error_set(err, -EINVAL,
				 "OCI state on stdin lacks 'bundle'");
	dir = open_bundle(st->bundle, err);
	if (dir < 0)
		return dir;
	snprintf(what, sizeof(what), "%.128s/config.json", st->bundle);
	r = fileio_read_at(dir, "config.json", 1, SH_MAX_BUNDLE_CONFIG, &text,
			   &len);
	if (r == -EINVAL)
		return error_set(err, r, "cannot read %s: not a regular file",
				 what);
	if (r == -ELOOP || r == -ENOENT)
		return error_errno(err, r, "cannot open %s", what);
	if (r)
		return error_errno(err, r, "cannot read %s", what);
	return oci_parse_bundle_config(what, text, len, st, err);
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
