// SPDX-License-Identifier: GPL-2.0-only
/*
 * Docker Engine (wiring_docker.h). dockerd has no hooks.d and no drop-in
 * directory: one daemon.json. `runtime configure --runtime docker` edits
 * it as a JSON document, keeping every key the operator wrote:
 *
 *  - runtimes.sockopt: this binary's `runtime-exec` mode, which adds the
 *    hook to a container's bundle at `create` and then runs runc (as the
 *    NVIDIA runtime does); dockerd writes a wrapper for runtimeArgs and
 *    reloads runtimes on SIGHUP. `docker run --runtime sockopt` picks it
 *    per container; --default-runtime makes it default-runtime, so that
 *    the operator's defaults reach every container;
 *  - features.cdi true where dockerd is older than 28 (28 reads CDI specs
 *    unless features.cdi is false), so that `docker run --device
 *    sockopt-hook.io/policy=NAME` reads the spec of `runtime configure
 *    --cdi`; an explicit false is the operator's and is refused.
 *
 * A file that is not a JSON object is refused, left alone. The file as
 * it was is kept beside it (/etc/docker/oci-sockopt-hook/, written
 * first); `runtime unconfigure` writes that copy back byte for byte while
 * the file is, less our keys, what it was; else it takes out only our
 * keys, keeping what the operator changed since.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "input/container.h"
#include "input/strictjson.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "wiring/wiring.h"
#include "wiring/wiring_docker.h"
#include "wiring/wiring_spec.h"

#define BACKUP_DIR "/oci-sockopt-hook"
#define BACKUP_NAME "daemon.json.before"

static void daemon_json(const struct wiring_opts *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s", o->docker_config ?: SH_DOCKER_DAEMON_JSON);
}

/* <dir of daemon.json>/oci-sockopt-hook/daemon.json.before */
static void backup_path(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	int dir = slash ? (int)(slash - path) : 0;

	snprintf(buf, len, "%.*s" BACKUP_DIR "/" BACKUP_NAME, dir, path);
}

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	return v;
}

/* daemon.json as a JSON object (*doc, {} when absent), its text in *text
 * (NULL when absent). */
static int read_doc(const char *path, char **text, struct json_object **doc,
		    struct sh_error *err)
{
	int r;

	*doc = NULL;
	*text = wiring_read(path, &r);
	if (r == -ENOENT) {
		*doc = json_object_new_object();
		return *doc ? 0 : error_set(err, -ENOMEM, "out of memory");
	}
	if (r)
		return error_errno(err, r, "cannot read %.200s", path);
	r = strictjson_parse(path, *text, strlen(*text), doc, err);
	if (r)
		return error_set(err, -EINVAL,
				 "%.200s is not JSON (%s): left alone", path,
				 err->msg);
	if (!json_object_is_type(*doc, json_type_object))
		return error_set(err, -EINVAL,
				 "%.200s is not a JSON object: left alone",
				 path);
	return 0;
}

static char *doc_text(struct json_object *doc)
{
	char *text = NULL;

	if (asprintf(&text, "%s\n",
		     json_object_to_json_string_ext(
			     doc, JSON_C_TO_STRING_PRETTY |
					  JSON_C_TO_STRING_SPACED |
					  JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
		return NULL;
	return text;
}

/* dockerd's major version, or 0 when it cannot be told. */
static int dockerd_major(void)
{
	char *argv[] = { "dockerd", "--version", NULL };
	struct sh_error err = { 0 };
	_cleanup_free_ char *out = NULL;
	const char *v;

	if (wiring_exec_run(argv, NULL, &out, &err))
		return 0;
	v = strstr(out, "version ");
	return v ? atoi(v + 8) : 0;
}

/* The runtime entry: path, runtimeArgs. */
static struct json_object *runtime_entry(const struct wiring_opts *o,
					 const struct wiring_hook *hook)
{
	struct json_object *rt = json_object_new_object();
	struct json_object *args = json_object_new_array();

	json_object_array_add(args, json_object_new_string("runtime-exec"));
	json_object_array_add(args, json_object_new_string("--config"));
	json_object_array_add(args, json_object_new_string(o->config));
	/* the first env is the config's (cmd_runtime_config.c) */
	for (int i = 1; i < hook->nr_env; i++) {
		json_object_array_add(args,
				      json_object_new_string("--hook-env"));
		json_object_array_add(args,
				      json_object_new_string(hook->env[i]));
	}
	json_object_array_add(args, json_object_new_string("--"));
	json_object_object_add(rt, "path", json_object_new_string(hook->path));
	json_object_object_add(rt, "runtimeArgs", args);
	return rt;
}

int wiring_docker_configure(const struct wiring_opts *o,
			    const struct wiring_hook *hook,
			    const struct sh_config *cfg,
			    struct wiring_plan *plan, struct sh_error *err)
{
	_cleanup_json_ struct json_object *doc = NULL;
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX], backup[PATH_MAX];
	struct json_object *runtimes, *features, *def, *cdi;
	int major, r;

	(void)cfg;
	daemon_json(o, path, sizeof(path));
	backup_path(path, backup, sizeof(backup));
	r = read_doc(path, &text, &doc, err);
	if (r)
		return r;
	def = member(doc, "default-runtime");
	if (o->docker_default && def &&
	    strcmp(json_object_get_string(def) ?: "", "runc") &&
	    strcmp(json_object_get_string(def) ?: "", SH_DOCKER_RUNTIME))
		return error_set(
			err, -EEXIST,
			"%.200s: default-runtime is %s, not runc: ours would replace it; left alone",
			path, LOG_Q(json_object_get_string(def)));
	cdi = member(member(doc, "features"), "cdi");
	if (cdi && !json_object_get_boolean(cdi))
		return error_set(
			err, -EEXIST,
			"%.200s: features.cdi is false: Docker reads no CDI spec, so `docker run --device " SH_CDI_KIND
			"=NAME` cannot work; set it true, or remove it (Docker 28 reads CDI specs by default)",
			path);
	/* The file as it was, once: a second configure keeps the first
	 * copy (what unconfigure must put back). */
	if (text && access(backup, F_OK) != 0) {
		r = wiring_plan_write(plan, backup, strdup(text), 0600, err);
		if (r)
			return r;
	}
	runtimes = member(doc, "runtimes");
	if (!runtimes) {
		runtimes = json_object_new_object();
		json_object_object_add(doc, "runtimes", runtimes);
	}
	if (!json_object_is_type(runtimes, json_type_object))
		return error_set(
			err, -EINVAL,
			"%.200s: runtimes is not an object: left alone", path);
	json_object_object_add(runtimes, SH_DOCKER_RUNTIME,
			       runtime_entry(o, hook));
	if (o->docker_default)
		json_object_object_add(
			doc, "default-runtime",
			json_object_new_string(SH_DOCKER_RUNTIME));
	major = dockerd_major();
	if (!cdi && major < 28) {
		features = member(doc, "features");
		if (!features) {
			features = json_object_new_object();
			json_object_object_add(doc, "features", features);
		}
		json_object_object_add(features, "cdi",
				       json_object_new_boolean(1));
	}
	wiring_plan_note(
		plan,
		"%s: `docker run --runtime " SH_DOCKER_RUNTIME
		"` runs the hook%s; with `runtime configure --cdi`, `docker run --device " SH_CDI_KIND
		"=NAME` too%s",
		path,
		o->docker_default ? " (and it is the default runtime)" : "",
		major ? "" : " (dockerd --version failed: features.cdi set)");
	r = wiring_plan_write(plan, path, doc_text(doc), 0644, err);
	return r;
}

/* doc less our keys: those the backup (NULL: none) does not have. */
static void take_ours_out(struct json_object *doc, struct json_object *before)
{
	struct json_object *runtimes = member(doc, "runtimes");
	struct json_object *features = member(doc, "features");
	struct json_object *def = member(doc, "default-runtime");

	if (runtimes) {
		json_object_object_del(runtimes, SH_DOCKER_RUNTIME);
		if (!json_object_object_length(runtimes) &&
		    !member(before, "runtimes"))
			json_object_object_del(doc, "runtimes");
	}
	if (def &&
	    !strcmp(json_object_get_string(def) ?: "", SH_DOCKER_RUNTIME))
		json_object_object_del(doc, "default-runtime");
	if (features && !member(member(before, "features"), "cdi")) {
		json_object_object_del(features, "cdi");
		if (!json_object_object_length(features) &&
		    !member(before, "features"))
			json_object_object_del(doc, "features");
	}
}

int wiring_docker_unconfigure(const struct wiring_opts *o,
			      struct wiring_plan *plan, struct sh_error *err)
{
	_cleanup_json_ struct json_object *doc = NULL, *before = NULL;
	_cleanup_free_ char *text = NULL, *old = NULL;
	char path[PATH_MAX], backup[PATH_MAX];
	int r;

	daemon_json(o, path, sizeof(path));
	backup_path(path, backup, sizeof(backup));
	r = read_doc(path, &text, &doc, err);
	if (r)
		return r;
	old = wiring_read(backup, &r);
	if (r && r != -ENOENT)
		return error_errno(err, r, "cannot read %.200s", backup);
	if (old && strictjson_parse(backup, old, strlen(old), &before, err))
		return error_set(err, -EINVAL,
				 "%.200s is not the JSON it was: left alone",
				 backup);
	if (!text)
		return old ? wiring_plan_remove(plan, backup, err) : 0;
	take_ours_out(doc, before);
	if (old && json_object_equal(doc, before)) {
		/* unchanged since, but for us: exactly what was there */
		r = wiring_plan_write(plan, path, strdup(old), 0644, err);
	} else if (!old && !json_object_object_length(doc)) {
		r = wiring_plan_remove(plan, path, err); /* ours alone */
	} else {
		if (old)
			wiring_plan_note(
				plan,
				"%s changed since configure: only our keys taken out",
				path);
		r = wiring_plan_write(plan, path, doc_text(doc), 0644, err);
	}
	if (!r && old)
		r = wiring_plan_remove(plan, backup, err);
	if (!r && old) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%.*s",
			 (int)(strrchr(backup, '/') - backup), backup);
		wiring_plan_prune(plan, dir);
	}
	return r;
}
