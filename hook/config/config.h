/* SPDX-License-Identifier: GPL-2.0-only */
/* The operator config: where it is, loading it, and looking things up. */
#ifndef SH_CONFIG_H
#define SH_CONFIG_H

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
/* defaults.policy or defaults.bypass_prot_mem: it concerns every container. */
bool config_has_defaults(const struct sh_config *cfg);

#endif /* SH_CONFIG_H */
