// SPDX-License-Identifier: GPL-2.0-only
/*
 * The operator config: top level, defaults and annotation allow-lists.
 * Policies are parsed in config_policy.c. Parsing is strict: an unknown key
 * is an operator's typo, and a typo in a security policy must not pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "config_parse.h"
#include "log.h"
#include "trust.h"

const char *config_path(const char *cli_path)
{
	const char *env = getenv("OCI_SOCKOPT_HOOK_CONFIG");

	if (cli_path)
		return cli_path;
	if (env && *env)
		return env;
	return SH_DEFAULT_CONFIG;
}

int read_fd(int fd, size_t max, char **out, size_t *len)
{
	_cleanup_free_ char *buf = malloc(max + 1);
	size_t used = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while ((n = read(fd, buf + used, max + 1 - used)) > 0) {
		used += n;
		if (used > max)
			return -EFBIG;
	}
	if (n < 0)
		return -errno;
	buf[used] = '\0';
	*out = TAKE_PTR(buf);
	*len = used;
	return 0;
}

/* Regular files only: a FIFO or a device must not make the hook wait. */
int read_file(const char *path, size_t max, char **out, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return read_fd(fd, max, out, len);
}

static int parse_defaults(struct cfg_ctx *ctx, struct json_object *obj,
			  struct sh_config *cfg)
{
	static const char *const keys[] = { "bypass_prot_mem", "policy", NULL };
	const char *policy = NULL;
	int r;

	r = cfg_check_object(ctx, obj, "defaults", keys);
	if (!r)
		r = cfg_get_bool(ctx, obj, "defaults", "bypass_prot_mem",
				 &cfg->default_bypass);
	if (!r)
		r = cfg_get_string(ctx, obj, "defaults", "policy", &policy);
	if (!r && policy && *policy)
		cfg->default_policy = policy;
	return r;
}

static int parse_allowed(struct cfg_ctx *ctx, struct json_object *arr,
			 struct sh_config *cfg)
{
	size_t n = json_object_array_length(arr);
	char path[64];

	cfg->allowed_policies = calloc(n ? n : 1, sizeof(char *));
	if (!cfg->allowed_policies)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *item = json_object_array_get_idx(arr, i);

		snprintf(path, sizeof(path), "annotations.allow_policies[%zu]",
			 i);
		if (!json_object_is_type(item, json_type_string))
			return cfg_error(ctx, path, "must be a string");
		cfg->allowed_policies[cfg->nr_allowed++] =
			json_object_get_string(item);
	}
	return 0;
}

static int parse_annotations(struct cfg_ctx *ctx, struct json_object *obj,
			     struct sh_config *cfg)
{
	static const char *const keys[] = { "allow_bypass_prot_mem",
					    "allow_policies", NULL };
	struct json_object *arr = NULL;
	int r;

	r = cfg_check_object(ctx, obj, "annotations", keys);
	if (!r)
		r = cfg_get_bool(ctx, obj, "annotations",
				 "allow_bypass_prot_mem", &cfg->allow_bypass);
	if (!r)
		r = cfg_get_typed(ctx, obj, "annotations", "allow_policies",
				  json_type_array, &arr);
	if (!r && arr)
		r = parse_allowed(ctx, arr, cfg);
	return r;
}

static int parse_on_unsupported(struct cfg_ctx *ctx, struct json_object *root,
				struct sh_config *cfg)
{
	const char *v = NULL;
	int r = cfg_get_string(ctx, root, NULL, "on_unsupported", &v);

	if (r || !v || !strcmp(v, "fail"))
		return r;
	if (!strcmp(v, "warn")) {
		cfg->on_unsupported = ON_UNSUPPORTED_WARN;
		return 0;
	}
	return cfg_error(ctx, "on_unsupported",
			 "unknown value '%.64s' (expected 'fail' or 'warn')",
			 v);
}

static int parse_logging(struct cfg_ctx *ctx, struct json_object *root,
			 struct sh_config *cfg)
{
	const char *level = NULL;
	int r;

	r = cfg_get_string(ctx, root, NULL, "log_level", &level);
	if (!r && level) {
		cfg->log_level = log_level_from_name(level);
		if (cfg->log_level < 0)
			return cfg_error(
				ctx, "log_level",
				"unknown level '%.64s' (expected error, warning, info or debug)",
				level);
	}
	if (!r)
		r = cfg_get_string(ctx, root, NULL, "log_file", &cfg->log_file);
	if (!r && cfg->log_file && cfg->log_file[0] != '/')
		return cfg_error(ctx, "log_file", "must be an absolute path");
	return r;
}

static int check_references(struct cfg_ctx *ctx, struct sh_config *cfg)
{
	char path[64];

	if (cfg->default_policy && !config_policy(cfg, cfg->default_policy))
		return cfg_error(ctx, "defaults.policy",
				 "names unknown policy '%.64s'",
				 cfg->default_policy);
	for (size_t i = 0; i < cfg->nr_allowed; i++) {
		if (config_policy(cfg, cfg->allowed_policies[i]))
			continue;
		snprintf(path, sizeof(path), "annotations.allow_policies[%zu]",
			 i);
		return cfg_error(ctx, path, "names unknown policy '%.64s'",
				 cfg->allowed_policies[i]);
	}
	return 0;
}

static int parse_root(struct cfg_ctx *ctx, struct json_object *root,
		      struct sh_config *cfg)
{
	static const char *const keys[] = { "defaults",
					    "annotations",
					    "on_unsupported",
					    "on_shared_cgroup",
					    "on_override_program",
					    "policies",
					    "log_level",
					    "log_file",
					    NULL };
	struct json_object *sub;
	int r;

	if (!json_object_is_type(root, json_type_object))
		return cfg_error(ctx, "$", "must be a JSON object");
	r = cfg_check_object(ctx, root, NULL, keys);
	if (!r && json_object_object_get_ex(root, "defaults", &sub))
		r = parse_defaults(ctx, sub, cfg);
	if (!r && json_object_object_get_ex(root, "annotations", &sub))
		r = parse_annotations(ctx, sub, cfg);
	if (!r)
		r = parse_on_unsupported(ctx, root, cfg);
	if (!r)
		r = parse_cgroup_settings(ctx, root, cfg);
	if (!r)
		r = parse_logging(ctx, root, cfg);
	if (!r && json_object_object_get_ex(root, "policies", &sub))
		r = parse_policies(ctx, sub, cfg);
	if (!r)
		r = check_references(ctx, cfg);
	return r;
}

int config_parse(const char *path, const char *text, size_t len,
		 struct sh_config *cfg)
{
	struct cfg_ctx ctx = { .file = path };
	int r;

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = path;
	cfg->log_level = LOG_INFO;
	r = cfg_parse_json(path, text, len, &cfg->root);
	if (r)
		return r;
	r = parse_root(&ctx, cfg->root, cfg);
	if (r)
		config_free(cfg);
	return r;
}

int config_load(const char *path, struct sh_config *cfg)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	size_t len;
	int r = trust_open_config(path, &fd);

	if (r)
		return r;
	r = read_fd(fd, SH_MAX_FILE_SIZE, &text, &len);
	if (r) {
		log_error("cannot read operator config %.128s: %s", path,
			  strerror(-r));
		return r;
	}
	return config_parse(path, text, len, cfg);
}

void config_free(struct sh_config *cfg)
{
	for (size_t i = 0; i < cfg->nr_policies; i++) {
		free(cfg->policies[i].set_rules);
		free(cfg->policies[i].get_rules);
	}
	free(cfg->policies);
	free(cfg->allowed_policies);
	if (cfg->root)
		json_object_put(cfg->root);
	memset(cfg, 0, sizeof(*cfg));
}

const struct sh_policy *config_policy(const struct sh_config *cfg,
				      const char *name)
{
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
