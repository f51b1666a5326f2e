// SPDX-License-Identifier: GPL-2.0-only
/*
 * The operator config: top level, defaults and annotation allow-lists.
 * Policies are parsed in config_policy.c. Parsing is strict: an unknown key
 * is an operator's typo, and a typo in a security policy must not pass.
 */
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "config/config_json.h"
#include "config/config_policy.h"
#include "input/strictjson.h"
#include "lib/cleanup.h"
#include "lib/context.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/trust.h"

const char *config_path(const char *cli_path)
{
	const char *env = context_value(context_get()->config);

	if (cli_path)
		return cli_path;
	return env ? env : SH_DEFAULT_CONFIG;
}

static int parse_defaults(struct config_ctx *ctx, struct json_object *obj,
			  struct sh_config *cfg)
{
	const char *policy = NULL;
	const struct config_json_member members[] = {
		{ "bypass_prot_mem", json_type_boolean, &cfg->default_bypass },
		{ "policy", json_type_string, &policy },
		{ NULL },
	};
	int r = config_json_read_members(ctx, obj, "defaults", members);

	if (!r && policy && *policy)
		cfg->default_policy = policy;
	return r;
}

static int parse_allowed(struct config_ctx *ctx, struct json_object *arr,
			 struct sh_config *cfg)
{
	size_t n = json_object_array_length(arr);
	char path[SH_CONFIG_PATH_MAX];

	cfg->allowed_policies = calloc(n ? n : 1, sizeof(char *));
	if (!cfg->allowed_policies)
		return error_set(ctx->err, -ENOMEM, "out of memory reading %s",
				 ctx->file);
	for (size_t i = 0; i < n; i++) {
		struct json_object *item = json_object_array_get_idx(arr, i);

		snprintf(path, sizeof(path), "annotations.allow_policies[%zu]",
			 i);
		if (!json_object_is_type(item, json_type_string))
			return config_json_error(ctx, path, "must be a string");
		cfg->allowed_policies[cfg->nr_allowed++] =
			json_object_get_string(item);
	}
	return 0;
}

static int parse_annotations(struct config_ctx *ctx, struct json_object *obj,
			     struct sh_config *cfg)
{
	struct json_object *arr = NULL;
	const struct config_json_member members[] = {
		{ "allow_bypass_prot_mem", json_type_boolean,
		  &cfg->allow_bypass },
		{ "allow_audit_mode", json_type_boolean,
		  &cfg->allow_audit_mode },
		{ "allow_policies", json_type_array, &arr },
		{ NULL },
	};
	int r = config_json_read_members(ctx, obj, "annotations", members);

	if (!r && arr)
		r = parse_allowed(ctx, arr, cfg);
	return r;
}

static int parse_record(struct config_ctx *ctx, struct json_object *obj,
			struct sh_config *cfg)
{
	const struct config_json_member members[] = {
		{ "allow", json_type_boolean, &cfg->record_allow },
		{ "dir", json_type_string, &cfg->record_dir },
		{ NULL },
	};
	int r = config_json_read_members(ctx, obj, "record", members);

	if (!r && cfg->record_dir &&
	    (cfg->record_dir[0] != '/' ||
	     strlen(cfg->record_dir) >= SH_RECORD_DIR_MAX))
		return config_json_error(
			ctx, "record.dir",
			"must be an absolute path of at most 255 characters");
	if (!cfg->record_dir)
		cfg->record_dir = SH_RECORD_DIR_DEFAULT;
	return r;
}

static int parse_on_unsupported(struct config_ctx *ctx,
				struct json_object *root, struct sh_config *cfg)
{
	static const char *const names[] = { "fail", "warn", NULL };
	int v = ON_UNSUPPORTED_FAIL;
	int r = config_json_get_choice(ctx, root, NULL, "on_unsupported", names,
				       &v);

	cfg->on_unsupported = v;
	return r;
}

static int parse_logging(struct config_ctx *ctx, struct json_object *root,
			 struct sh_config *cfg)
{
	/* In enum log_format's order. */
	static const char *const formats[] = { "text", "json", NULL };
	int format = LOG_FORMAT_TEXT;
	const char *level = NULL;
	int r;

	r = config_json_get_string(ctx, root, NULL, "log_level", &level);
	if (r)
		goto out;
	if (level) {
		cfg->log_level = log_level_from_name(level);
		if (cfg->log_level < 0)
			return config_json_error(
				ctx, "log_level",
				"unknown level '%.64s' (expected error, warning, info or debug)",
				level);
	}
	r = config_json_get_string(ctx, root, NULL, "log_file", &cfg->log_file);
	if (r)
		goto out;
	if (cfg->log_file && cfg->log_file[0] != '/')
		return config_json_error(ctx, "log_file",
					 "must be an absolute path");
	r = config_json_get_choice(ctx, root, NULL, "log_format", formats,
				   &format);
out:
	/* Set on failure too, as before: the caller may still log with it. */
	cfg->log_format = format;
	return r;
}

/* The pause container never makes a socket: a policy that lets it make
 * none closes the way into the pod's unpoliced cgroup (ptrace the pause
 * process, make it call socket(), take the fd with pidfd_getfd()). */
static const struct sh_policy sandbox_builtin = {
	.name = SH_SANDBOX_BUILTIN,
	.nr_deny = 2,
	.deny = { { AF_INET, SH_ANY, SH_ANY }, { AF_INET6, SH_ANY, SH_ANY } },
};

/* "" turns sandbox policing off; absent, the built-in. */
static int parse_sandbox(struct config_ctx *ctx, struct json_object *root,
			 struct sh_config *cfg)
{
	const char *name = NULL;
	int r = config_json_get_string(ctx, root, NULL, "sandbox_policy",
				       &name);

	cfg->sandbox_policy = &sandbox_builtin;
	if (r || !name)
		return r;
	cfg->sandbox_policy = *name ? config_find_policy(cfg, name) : NULL;
	if (*name && !cfg->sandbox_policy)
		return config_json_error(
			ctx, "sandbox_policy",
			"names unknown policy '%.64s' (a policy of policies, '%s' or \"\" for none)",
			name, SH_SANDBOX_BUILTIN);
	return 0;
}

/* Only sandbox_policy may name the built-in: the other references are
 * for workloads, and must name the operator's policies. */
static int check_reference(struct config_ctx *ctx, const struct sh_config *cfg,
			   const char *path, const char *name)
{
	if (!strcmp(name, SH_SANDBOX_BUILTIN))
		return config_json_error(
			ctx, path,
			"names the built-in sandbox policy '%s': only sandbox_policy may",
			name);
	if (!config_find_policy(cfg, name))
		return config_json_error(ctx, path,
					 "names unknown policy '%.64s'", name);
	return 0;
}

static int check_references(struct config_ctx *ctx, struct sh_config *cfg)
{
	char path[SH_CONFIG_PATH_MAX];
	int r = 0;

	if (cfg->default_policy)
		r = check_reference(ctx, cfg, "defaults.policy",
				    cfg->default_policy);
	for (size_t i = 0; i < cfg->nr_allowed && !r; i++) {
		snprintf(path, sizeof(path), "annotations.allow_policies[%zu]",
			 i);
		r = check_reference(ctx, cfg, path, cfg->allowed_policies[i]);
	}
	return r;
}

/* A recording file's provenance (recording.h): a note for the operator
 * and `record merge`, nothing the hook applies. */
static int check_recordings(struct config_ctx *ctx, struct json_object *root)
{
	struct json_object *arr;
	int r = config_json_get_typed(ctx, root, NULL, "recordings",
				      json_type_array, &arr);

	for (size_t i = 0; !r && arr && i < json_object_array_length(arr); i++)
		if (!json_object_is_type(json_object_array_get_idx(arr, i),
					 json_type_object))
			return config_json_error(ctx, "recordings",
						 "must hold objects");
	return r;
}

/* root's member key, parsed by parse when it is there. */
static int
parse_member(struct config_ctx *ctx, struct json_object *root, const char *key,
	     int (*parse)(struct config_ctx *ctx, struct json_object *obj,
			  struct sh_config *cfg),
	     struct sh_config *cfg)
{
	struct json_object *sub;

	if (!json_object_object_get_ex(root, key, &sub))
		return 0;
	return parse(ctx, sub, cfg);
}

static int parse_root(struct config_ctx *ctx, struct json_object *root,
		      struct sh_config *cfg)
{
	static const char *const keys[] = { "defaults",
					    "annotations",
					    "on_unsupported",
					    "on_shared_cgroup",
					    "on_override_program",
					    "require_annotations",
					    "nri",
					    "policies",
					    "log_level",
					    "log_file",
					    "log_format",
					    "record",
					    "sandbox_policy",
					    "recordings",
					    "keep_keys",
					    NULL };
	int r;

	if (!json_object_is_type(root, json_type_object))
		return config_json_error(ctx, "$", "must be a JSON object");
	r = config_json_check_object(ctx, root, NULL, keys);
	if (r)
		return r;
	r = parse_member(ctx, root, "defaults", parse_defaults, cfg);
	if (r)
		return r;
	r = parse_member(ctx, root, "annotations", parse_annotations, cfg);
	if (r)
		return r;
	r = parse_member(ctx, root, "record", parse_record, cfg);
	if (r)
		return r;
	if (!cfg->record_dir)
		cfg->record_dir = SH_RECORD_DIR_DEFAULT;
	r = config_json_get_bool(ctx, root, NULL, "keep_keys", &cfg->keep_keys);
	if (r)
		return r;
	r = parse_on_unsupported(ctx, root, cfg);
	if (r)
		return r;
	r = config_cgroup_parse(ctx, root, cfg);
	if (r)
		return r;
	r = parse_member(ctx, root, "require_annotations", config_require_parse,
			 cfg);
	if (r)
		return r;
	r = parse_member(ctx, root, "nri", config_nri_parse, cfg);
	if (r)
		return r;
	r = parse_logging(ctx, root, cfg);
	if (r)
		return r;
	r = parse_member(ctx, root, "policies", config_policy_parse, cfg);
	if (r)
		return r;
	r = check_references(ctx, cfg);
	if (r)
		return r;
	r = parse_sandbox(ctx, root, cfg);
	if (r)
		return r;
	return check_recordings(ctx, root);
}

int config_parse(const char *path, const char *text, size_t len,
		 struct sh_config *cfg, struct sh_error *err)
{
	struct config_ctx ctx = { .file = path, .err = err };
	int r;

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = path;
	cfg->log_level = LOG_INFO;
	cfg->keep_keys = SH_KEEP_KEYS_DEFAULT;
	r = strictjson_parse(path, text, len, &cfg->root, err);
	if (r)
		return r;
	r = parse_root(&ctx, cfg->root, cfg);
	if (r)
		config_free(cfg);
	return r;
}

static void config_stamp(const struct stat *st, struct sh_config_stamp *s);

/* The operator config's text, from a file root trusts; its stamp (for
 * config_changed()) when stamp is not NULL. */
static int config_read(const char *path, char **text, size_t *len,
		       struct sh_config_stamp *stamp, struct sh_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r = trust_open_config(path, &fd, err);

	if (r)
		return r;
	r = fileio_read_fd(fd, SH_MAX_FILE_SIZE, text, len);
	if (r)
		return error_errno(err, r, "cannot read operator config %.128s",
				   path);
	if (stamp && fstat(fd, &st) == 0)
		config_stamp(&st, stamp);
	return 0;
}

int config_load(const char *path, struct sh_config *cfg, struct sh_error *err)
{
	_cleanup_free_ char *text = NULL;
	struct sh_config_stamp stamp = { 0 };
	size_t len;
	int r = config_read(path, &text, &len, &stamp, err);

	if (r)
		return r;
	r = config_parse(path, text, len, cfg, err);
	if (r)
		return r;
	cfg->stamp = stamp;
	return 0;
}

int config_load_logging(const char *path, struct sh_config *cfg,
			struct sh_error *err)
{
	struct config_ctx ctx = { .file = path, .err = err };
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = config_read(path, &text, &len, NULL, err);

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = path;
	cfg->log_level = LOG_INFO;
	if (r)
		goto fail;
	r = strictjson_parse(path, text, len, &cfg->root, err);
	if (r)
		goto fail;
	if (!json_object_is_type(cfg->root, json_type_object)) {
		r = config_json_error(&ctx, "$", "must be a JSON object");
		goto fail;
	}
	r = parse_logging(&ctx, cfg->root, cfg);
	if (r)
		goto fail;
	return 0;
fail:
	config_free(cfg);
	return r;
}

static void config_stamp(const struct stat *st, struct sh_config_stamp *s)
{
	s->set = true;
	s->dev = st->st_dev;
	s->ino = st->st_ino;
	s->size = st->st_size;
	s->mtime = st->st_mtim;
	s->ctime = st->st_ctim;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

bool config_changed(const struct sh_config *cfg)
{
	struct sh_config_stamp now = { 0 };
	struct stat st;

	if (!cfg->stamp.set || stat(cfg->path, &st) < 0)
		return true;
	config_stamp(&st, &now);
	return now.dev != cfg->stamp.dev || now.ino != cfg->stamp.ino ||
	       now.size != cfg->stamp.size ||
	       !same_time(&now.mtime, &cfg->stamp.mtime) ||
	       !same_time(&now.ctime, &cfg->stamp.ctime);
}

static bool same_stamp(const struct sh_config_stamp *a,
		       const struct sh_config_stamp *b)
{
	return a->set && b->set && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && same_time(&a->mtime, &b->mtime) &&
	       same_time(&a->ctime, &b->ctime);
}

/* realpath(path), and the stamps of that file and of its directory as
 * they are now; NULL when any of them cannot be had. */
static char *cache_look(const char *path, struct sh_config_stamp *file,
			struct sh_config_stamp *dir)
{
	char *real = realpath(path, NULL);
	char *slash = real ? strrchr(real, '/') : NULL;
	struct stat fst, dst;
	int r;

	*file = *dir = (struct sh_config_stamp){ 0 };
	if (!slash || stat(real, &fst) < 0) {
		free(real);
		return NULL;
	}
	*slash = '\0';
	r = stat(real[0] ? real : "/", &dst);
	*slash = '/';
	if (r < 0) {
		free(real);
		return NULL;
	}
	config_stamp(&fst, file);
	config_stamp(&dst, dir);
	return real;
}

/* Changed within the last second of now: a write in the same timestamp
 * tick would leave the stamp as it is. */
static long long ns_of(const struct timespec *t)
{
	return t->tv_sec * 1000000000LL + t->tv_nsec;
}

static bool recent(const struct sh_config_stamp *s, const struct timespec *now)
{
	long long m = ns_of(&s->mtime), c = ns_of(&s->ctime);

	return ns_of(now) - (m > c ? m : c) < 1000000000LL;
}

static void cache_drop(struct config_cache *cc)
{
	if (cc->kept)
		config_free(&cc->cfg);
	free(cc->path);
	free(cc->real);
	cc->path = cc->real = NULL;
	cc->kept = false;
}

int config_cache_get(struct config_cache *cc, const char *path,
		     const struct sh_config **ret, struct sh_error *err)
{
	struct sh_config_stamp file, dir;
	_cleanup_free_ char *real = cache_look(path, &file, &dir);
	struct timespec now;
	int r;

	if (cc->kept && cc->real && real && !strcmp(path, cc->path) &&
	    !strcmp(real, cc->real) && same_stamp(&file, &cc->file) &&
	    same_stamp(&dir, &cc->dir)) {
		*ret = &cc->cfg;
		return 0;
	}
	cache_drop(cc);
	cc->path = strdup(path);
	if (!cc->path)
		return error_set(err, -ENOMEM, "out of memory");
	cc->reads++;
	r = config_load(cc->path, &cc->cfg, err);
	if (r) {
		cache_drop(cc);
		return r;
	}
	cc->kept = true;
	*ret = &cc->cfg;
	/* Used again only when what was looked at before the read is what
	 * the read saw, and old enough to tell a later write by its stamp. */
	clock_gettime(CLOCK_REALTIME, &now);
	if (real && same_stamp(&file, &cc->cfg.stamp) && !recent(&file, &now) &&
	    !recent(&dir, &now)) {
		cc->real = real;
		real = NULL;
		cc->file = file;
		cc->dir = dir;
	}
	return 0;
}

void config_cache_free(struct config_cache *cc)
{
	cache_drop(cc);
}

void config_free(struct sh_config *cfg)
{
	for (size_t i = 0; i < cfg->nr_policies; i++) {
		free(cfg->policies[i].set_rules);
		free(cfg->policies[i].get_rules);
	}
	free(cfg->policies);
	free(cfg->allowed_policies);
	free(cfg->require.handlers);
	if (cfg->root)
		json_object_put(cfg->root);
	memset(cfg, 0, sizeof(*cfg));
}

const struct sh_policy *config_find_policy(const struct sh_config *cfg,
					   const char *name)
{
	if (!strcmp(name, SH_SANDBOX_BUILTIN))
		return &sandbox_builtin;
	for (size_t i = 0; i < cfg->nr_policies; i++)
		if (!strcmp(cfg->policies[i].name, name))
			return &cfg->policies[i];
	return NULL;
}

bool config_policy_allowed(const struct sh_config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->nr_allowed; i++)
		if (!strcmp(cfg->allowed_policies[i], name))
			return true;
	return false;
}

bool config_has_defaults(const struct sh_config *cfg)
{
	return cfg->default_policy || cfg->default_bypass;
}

/*
 * The operator's settings about the container's cgroup: what to do when
 * the hook would have to make one (on_shared_cgroup), and when another
 * tool's program on the container's path would stop running because of
 * our attach (on_override_program). The first name is the default.
 */

int config_cgroup_parse(struct config_ctx *ctx, struct json_object *root,
			struct sh_config *cfg)
{
	static const char *const shared[] = { "create", "refuse", NULL };
	static const char *const override[] = { "refuse", "warn", NULL };
	int shared_v = ON_SHARED_CGROUP_CREATE;
	int override_v = ON_OVERRIDE_PROGRAM_REFUSE;
	int r;

	r = config_json_get_choice(ctx, root, NULL, "on_shared_cgroup", shared,
				   &shared_v);
	if (r)
		goto out;
	r = config_json_get_choice(ctx, root, NULL, "on_override_program",
				   override, &override_v);
out:
	/* The defaults stand where a value was not read. */
	cfg->on_shared_cgroup = shared_v;
	cfg->on_override_program = override_v;
	return r;
}

/*
 * The operator config's "nri" object: what `oci-sockopt-hook nri` adds to
 * the containers it handles. hook_path is the hook binary the runtime
 * runs, a path on the node (the plugin may run in a container that has
 * the binary elsewhere); by default the one `make install` puts in place.
 * attach says who attaches: "hook" (the default) gives containers the
 * hook, "plugin" attaches in the plugin at containerd's StartContainer
 * (docs/install.md says what holds in each); bundle_dir is where containerd
 * keeps the bundles of its k8s.io namespace, read at StartContainer.
 */

#define PATH_MAX_LEN 4095
/* The Makefile passes where `make install` puts the binary. */
#ifndef SH_NRI_HOOK_PATH
#define SH_NRI_HOOK_PATH "/usr/local/libexec/oci/hooks.d/oci-sockopt-hook"
#endif
#define SH_NRI_BUNDLE_DIR "/run/containerd/io.containerd.runtime.v2.task/k8s.io"

const char *config_nri_hook_path(const struct sh_config *cfg)
{
	return cfg->nri_hook_path ?: SH_NRI_HOOK_PATH;
}

const char *config_nri_bundle_dir(const struct sh_config *cfg)
{
	return cfg->nri_bundle_dir ?: SH_NRI_BUNDLE_DIR;
}

static int nri_get_path(struct config_ctx *ctx, struct json_object *obj,
			const char *key, const char **ret)
{
	char where[32];
	const char *path = NULL;
	int r = config_json_get_string(ctx, obj, "nri", key, &path);

	if (r || !path)
		return r;
	config_json_join(where, sizeof(where), "nri", key);
	if (path[0] != '/' || strlen(path) > PATH_MAX_LEN)
		return config_json_error(
			ctx, where,
			"must be an absolute path of at most %d bytes",
			PATH_MAX_LEN);
	*ret = path;
	return 0;
}

int config_nri_parse(struct config_ctx *ctx, struct json_object *obj,
		     struct sh_config *cfg)
{
	static const char *const keys[] = { "hook_path", "attach", "bundle_dir",
					    NULL };
	const char *attach = NULL;
	int r = config_json_check_object(ctx, obj, "nri", keys);

	if (r)
		return r;
	r = nri_get_path(ctx, obj, "hook_path", &cfg->nri_hook_path) ?:
		    nri_get_path(ctx, obj, "bundle_dir", &cfg->nri_bundle_dir) ?:
		    config_json_get_string(ctx, obj, "nri", "attach", &attach);
	if (r || !attach)
		return r;
	if (strcmp(attach, "hook") && strcmp(attach, "plugin"))
		return config_json_error(ctx, "nri.attach",
					 "must be \"hook\" or \"plugin\"");
	cfg->nri_attach_plugin = !strcmp(attach, "plugin");
	return 0;
}

/*
 * require_annotations: the runtime handlers (Kubernetes RuntimeClasses)
 * whose only job is to carry sockopt-hook.io/ annotations to the hook, so
 * that a container under one of them with none of our keys shows a node
 * that drops them (containerd without pod_annotations) or a pod that
 * forgot them. policy.c applies it; this file only parses it.
 */

#define PATH_HANDLERS "require_annotations.runtime_handlers"

/* RFC 1123 label, as the RuntimeClass API validates handler. */
static bool handler_name(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > SH_HANDLER_NAME_MAX || s[0] == '-' ||
	    s[len - 1] == '-')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == len;
}

static int check_handler(struct config_ctx *ctx, const struct sh_require *req,
			 struct json_object *item, size_t i)
{
	char where[SH_CONFIG_PATH_MAX];
	const char *name = json_object_get_string(item);

	snprintf(where, sizeof(where), "%s[%zu]", PATH_HANDLERS, i);
	if (!json_object_is_type(item, json_type_string))
		return config_json_error(ctx, where, "must be a string");
	if (!handler_name(name))
		return config_json_error(
			ctx, where,
			"'%.64s' is not a runtime handler name (a RuntimeClass handler: lowercase letters, digits and '-', not first or last, at most %d)",
			name, SH_HANDLER_NAME_MAX);
	for (size_t j = 0; j < req->nr_handlers; j++)
		if (!strcmp(req->handlers[j], name))
			return config_json_error(
				ctx, where, "'%.64s' is listed twice", name);
	return 0;
}

static int parse_handlers(struct config_ctx *ctx, struct json_object *arr,
			  struct sh_require *req)
{
	size_t n = arr ? json_object_array_length(arr) : 0;

	if (n == 0)
		return config_json_error(
			ctx, PATH_HANDLERS,
			"needs at least one runtime handler (or require_annotations.nri: true; remove require_annotations to turn it off)");
	req->handlers = calloc(n, sizeof(char *));
	if (!req->handlers)
		return error_set(ctx->err, -ENOMEM, "out of memory reading %s",
				 ctx->file);
	for (size_t i = 0; i < n; i++) {
		struct json_object *item = json_object_array_get_idx(arr, i);
		int r = check_handler(ctx, req, item, i);

		if (r)
			return r;
		req->handlers[req->nr_handlers++] =
			json_object_get_string(item);
	}
	return 0;
}

int config_require_parse(struct config_ctx *ctx, struct json_object *obj,
			 struct sh_config *cfg)
{
	static const char *const keys[] = { "runtime_handlers", "nri",
					    "on_missing", NULL };
	static const char *const actions[] = { "refuse", "warn", NULL };
	struct sh_require *req = &cfg->require;
	struct json_object *arr = NULL;
	int action = ON_MISSING_REFUSE;
	int r;

	r = config_json_check_object(ctx, obj, "require_annotations", keys);
	if (r)
		goto out;
	r = config_json_get_bool(ctx, obj, "require_annotations", "nri",
				 &req->nri);
	if (r)
		goto out;
	r = config_json_get_typed(ctx, obj, "require_annotations",
				  "runtime_handlers", json_type_array, &arr);
	if (r)
		goto out;
	/* nri alone is a complete setting; otherwise a handler is needed */
	if (arr || !req->nri) {
		r = parse_handlers(ctx, arr, req);
		if (r)
			goto out;
	}
	r = config_json_get_choice(ctx, obj, "require_annotations",
				   "on_missing", actions, &action);
out:
	/* The default stands where the value was not read. */
	req->on_missing = action;
	return r;
}

bool config_require_handler(const struct sh_config *cfg, const char *handler)
{
	for (size_t i = 0; i < cfg->require.nr_handlers; i++)
		if (!strcmp(cfg->require.handlers[i], handler))
			return true;
	return false;
}
