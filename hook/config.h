/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_CONFIG_H
#define SH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "sockopt_hook.h"

#define SH_DEFAULT_CONFIG "/etc/oci-sockopt-hook/config.json"
#define SH_MAX_FILE_SIZE (4 << 20)

enum on_unsupported {
	ON_UNSUPPORTED_FAIL,
	ON_UNSUPPORTED_WARN,
};

/* A container whose cgroup is not its own: make one for it, or refuse. */
enum on_shared_cgroup {
	ON_SHARED_CGROUP_CREATE,
	ON_SHARED_CGROUP_REFUSE,
};

/* Another tool's BPF_F_ALLOW_OVERRIDE program that our attach would
 * switch off for the container. */
enum on_override_program {
	ON_OVERRIDE_PROGRAM_REFUSE,
	ON_OVERRIDE_PROGRAM_WARN,
};

struct sh_rule_entry {
	const char *option_name; /* NULL when given as a number */
	struct sh_opt_key key;
	struct sh_opt_rule rule;
	int alias_of; /* index of the rule this one carries over, or -1 */
};

struct sh_policy {
	const char *name;
	bool has_bypass, bypass;
	bool has_mark, has_priority;
	__u32 mark, priority;
	__u32 nr_deny;
	struct sh_sock_rule deny[SH_MAX_SOCKET_RULES];
	bool default_deny;
	size_t nr_set, nr_get;
	struct sh_rule_entry *set_rules, *get_rules;
};

struct sh_config {
	const char *path;
	bool default_bypass;
	const char *default_policy; /* NULL when empty */
	bool allow_bypass;
	size_t nr_allowed;
	const char **allowed_policies;
	enum on_unsupported on_unsupported;
	enum on_shared_cgroup on_shared_cgroup;
	enum on_override_program on_override_program;
	int log_level;
	const char *log_file;
	size_t nr_policies;
	struct sh_policy *policies;
	struct json_object *root; /* owns every string above */
};

/* Path resolution: --config, then $OCI_SOCKOPT_HOOK_CONFIG, then default. */
const char *config_path(const char *cli_path);
int config_load(const char *path, struct sh_config *cfg);
int config_parse(const char *path, const char *text, size_t len,
		 struct sh_config *cfg);
void config_free(struct sh_config *cfg);
const struct sh_policy *config_policy(const struct sh_config *cfg,
				      const char *name);
bool config_policy_allowed(const struct sh_config *cfg, const char *name);
/* All of fd, at most max bytes (-EFBIG beyond), NUL-terminated. */
int read_fd(int fd, size_t max, char **out, size_t *len);
int read_file(const char *path, size_t max, char **out, size_t *len);
const char *config_on_shared_cgroup_name(enum on_shared_cgroup v);
const char *config_on_override_program_name(enum on_override_program v);
/* The JSON path of the last config error, for `validate --json`. */
const char *config_last_error_path(void);

#endif /* SH_CONFIG_H */
