/* SPDX-License-Identifier: GPL-2.0-only */
/* The operator config: where it is, loading it, and looking things up. */
#ifndef SH_CONFIG_H
#define SH_CONFIG_H

#include "config/config_json.h"
#include "config/config_types.h"
#include "lib/error.h"

#define SH_MAX_FILE_SIZE (4 << 20)

/* Path resolution: --config, then $OCI_SOCKOPT_HOOK_CONFIG, then default. */
const char *config_path(const char *cli_path);
/* Reads (after trust_open_config()) and parses; nothing to free on error. */
int config_load(const char *path, struct sh_config *cfg, struct sh_error *err);
/* Only the log settings (log_level, log_file, log_format), checked; the
 * rest is not looked at: for the stages that go on without a config
 * (poststop), where checking every policy would only cost time. */
int config_load_logging(const char *path, struct sh_config *cfg,
			struct sh_error *err);
int config_parse(const char *path, const char *text, size_t len,
		 struct sh_config *cfg, struct sh_error *err);
void config_free(struct sh_config *cfg);
/* A policy of policies, or the built-in sandbox policy by its name. */
const struct sh_policy *config_find_policy(const struct sh_config *cfg,
					   const char *name);
bool config_policy_allowed(const struct sh_config *cfg, const char *name);
/* Whether the file cfg was loaded from has been replaced or written
 * since (true also when it cannot be told). */
bool config_changed(const struct sh_config *cfg);

/*
 * A parsed config kept between containers by a long-running process (the
 * NRI plugin), for exactly as long as a fresh config_load() would give the
 * same: the path resolves to the same file (realpath), and that file and
 * its directory (what trust_open_config() checks) have the same device,
 * inode, size, mtime and ctime (ctime moves on chmod, chown, link and
 * rename). A file or directory changed within the last second when it was
 * read is never kept: timestamps are coarse, and a write in the same tick
 * would not move them.
 */
struct config_cache {
	bool kept; /* cfg is valid and may be used again */
	struct sh_config cfg;
	char *path; /* what cfg.path points to */
	char *real; /* realpath(path) when read */
	struct sh_config_stamp file, dir;
	unsigned long long reads; /* config_load() calls, for tests */
};

/* The config at path through cc: the kept one when it holds, else read
 * again (config_load()), and kept when it may be. *ret points into cc
 * until the next call or config_cache_free(). */
int config_cache_get(struct config_cache *cc, const char *path,
		     const struct sh_config **ret, struct sh_error *err);
void config_cache_free(struct config_cache *cc);

/* defaults.policy or defaults.bypass_prot_mem: it concerns every container. */
bool config_has_defaults(const struct sh_config *cfg);

/* on_shared_cgroup and on_override_program. */
int config_cgroup_parse(struct config_ctx *ctx, struct json_object *root,
			struct sh_config *cfg);

/* nri: {"hook_path": "/abs/path", "attach": "hook" | "plugin",
 * "bundle_dir": "/abs/path"}, the NRI plugin's settings. */
int config_nri_parse(struct config_ctx *ctx, struct json_object *obj,
		     struct sh_config *cfg);

/* The hook the plugin gives containers: nri.hook_path, else the one
 * `make install` put in place. */
const char *config_nri_hook_path(const struct sh_config *cfg);
/* Where containerd keeps the k8s.io namespace's bundles: nri.bundle_dir,
 * else containerd's default. */
const char *config_nri_bundle_dir(const struct sh_config *cfg);

/* A Kubernetes RuntimeClass handler is an RFC 1123 label. */
#define SH_HANDLER_NAME_MAX 63

/* require_annotations: {"runtime_handlers": [...], "on_missing": ...}. */
int config_require_parse(struct config_ctx *ctx, struct json_object *obj,
			 struct sh_config *cfg);
/* Whether handler is one of require_annotations.runtime_handlers. */
bool config_require_handler(const struct sh_config *cfg, const char *handler);

#endif /* SH_CONFIG_H */
