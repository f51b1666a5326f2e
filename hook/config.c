// SPDX-License-Identifier: GPL-2.0-only
/*
 * The operator config: top level, defaults and annotation allow-lists.
 * Policies are parsed in config_policy.c. Parsing is strict: an unknown key
 * is an operator's typo, and a typo in a security policy must not pass.
 */
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "config_cgroup.h"
#include "config_json.h"
#include "config_policy.h"
#include "config_nri.h"
#include "config_require.h"
#include "fileio.h"
#include "log.h"
#include "strictjson.h"
#include "trust.h"

const char *config_path(const char *cli_path)
{
	const char *env = getenv(SH_CONFIG_ENV);

	if (cli_path)
		return cli_path;
	if (env && *env)
		return env;
	return SH_DEFAULT_CONFIG;
}

static int parse_defaults(struct config_ctx *ctx, struct json_object *obj,
			  struct sh_config *cfg)
{
	static const char *const keys[] = { "bypass_prot_mem", "policy", NULL };
	const char *policy = NULL;
	int r;

	r = config_json_check_object(ctx, obj, "defaults", keys);
	if (!r)
		r = config_json_get_bool(ctx, obj, "defaults",
					 "bypass_prot_mem",
					 &cfg->default_bypass);
	if (!r)
		r = config_json_get_string(ctx, obj, "defaults", "policy",
					   &policy);
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
	static const char *const keys[] = { "allow_bypass_prot_mem",
					    "allow_policies",
					    "allow_audit_mode", NULL };
	struct json_object *arr = NULL;
	int r;

	r = config_json_check_object(ctx, obj, "annotations", keys);
	if (!r)
		r = config_json_get_bool(ctx, obj, "annotations",
					 "allow_bypass_prot_mem",
					 &cfg->allow_bypass);
	if (!r)
		r = config_json_get_bool(ctx, obj, "annotations",
					 "allow_audit_mode",
					 &cfg->allow_audit_mode);
	if (!r)
		r = config_json_get_typed(ctx, obj, "annotations",
					  "allow_policies", json_type_array,
					  &arr);
	if (!r && arr)
		r = parse_allowed(ctx, arr, cfg);
	return r;
}

static int parse_record(struct config_ctx *ctx, struct json_object *obj,
			struct sh_config *cfg)
{
	static const char *const keys[] = { "allow", "dir", NULL };
	int r = config_json_check_object(ctx, obj, "record", keys);

	if (!r)
		r = config_json_get_bool(ctx, obj, "record", "allow",
					 &cfg->record_allow);
	if (!r)
		r = config_json_get_string(ctx, obj, "record", "dir",
					   &cfg->record_dir);
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
	if (!r && level) {
		cfg->log_level = log_level_from_name(level);
		if (cfg->log_level < 0)
			return config_json_error(
				ctx, "log_level",
				"unknown level '%.64s' (expected error, warning, info or debug)",
				level);
	}
	if (!r)
		r = config_json_get_string(ctx, root, NULL, "log_file",
					   &cfg->log_file);
	if (!r && cfg->log_file && cfg->log_file[0] != '/')
		return config_json_error(ctx, "log_file",
					 "must be an absolute path");
	if (!r)
		r = config_json_get_choice(ctx, root, NULL, "log_format",
					   formats, &format);
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
	struct json_object *sub;
	int r;

	if (!json_object_is_type(root, json_type_object))
		return config_json_error(ctx, "$", "must be a JSON object");
	r = config_json_check_object(ctx, root, NULL, keys);
	if (!r && json_object_object_get_ex(root, "defaults", &sub))
		r = parse_defaults(ctx, sub, cfg);
	if (!r && json_object_object_get_ex(root, "annotations", &sub))
		r = parse_annotations(ctx, sub, cfg);
	if (!r && json_object_object_get_ex(root, "record", &sub))
		r = parse_record(ctx, sub, cfg);
	if (!r && !cfg->record_dir)
		cfg->record_dir = SH_RECORD_DIR_DEFAULT;
	if (!r)
		r = config_json_get_bool(ctx, root, NULL, "keep_keys",
					 &cfg->keep_keys);
	if (!r)
		r = parse_on_unsupported(ctx, root, cfg);
	if (!r)
		r = config_cgroup_parse(ctx, root, cfg);
	if (!r && json_object_object_get_ex(root, "require_annotations", &sub))
		r = config_require_parse(ctx, sub, cfg);
	if (!r && json_object_object_get_ex(root, "nri", &sub))
		r = config_nri_parse(ctx, sub, cfg);
	if (!r)
		r = parse_logging(ctx, root, cfg);
	if (!r && json_object_object_get_ex(root, "policies", &sub))
		r = config_policy_parse(ctx, sub, cfg);
	if (!r)
		r = check_references(ctx, cfg);
	if (!r)
		r = parse_sandbox(ctx, root, cfg);
	if (!r)
		r = check_recordings(ctx, root);
	return r;
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

/* The operator config's text, from a file root trusts. */
static int config_read(const char *path, char **text, size_t *len,
		       struct sh_error *err)
{
	_cleanup_close_ int fd = -1;
	int r = trust_open_config(path, &fd, err);

	if (r)
		return r;
	r = fileio_read_fd(fd, SH_MAX_FILE_SIZE, text, len);
	if (r)
		return error_errno(err, r, "cannot read operator config %.128s",
				   path);
	return 0;
}

int config_load(const char *path, struct sh_config *cfg, struct sh_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = config_read(path, &text, &len, err);

	return r ? r : config_parse(path, text, len, cfg, err);
}

int config_load_logging(const char *path, struct sh_config *cfg,
			struct sh_error *err)
{
	struct config_ctx ctx = { .file = path, .err = err };
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = config_read(path, &text, &len, err);

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = path;
	cfg->log_level = LOG_INFO;
	if (!r)
		r = strictjson_parse(path, text, len, &cfg->root, err);
	if (!r && !json_object_is_type(cfg->root, json_type_object))
		r = config_json_error(&ctx, "$", "must be a JSON object");
	if (!r)
		r = parse_logging(&ctx, cfg->root, cfg);
	if (r)
		config_free(cfg);
	return r;
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
