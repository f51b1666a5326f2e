/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What an operator config compiles to: policies, rules and settings. The
 * parser's modules (config_*.c) fill it; everything else reads it.
 */
#ifndef SH_CONFIG_TYPES_H
#define SH_CONFIG_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include <json-c/json.h>

#include "lib/sh_types.h"
#include "sockopt_hook.h"

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

/* A Kubernetes container under a listed runtime handler whose spec carries
 * none of our annotations: refuse it, or log a warning and start it. */
enum on_missing_annotations {
	ON_MISSING_REFUSE,
	ON_MISSING_WARN,
};

/* require_annotations: the handlers whose containers must carry a key. */
struct sh_require {
	size_t nr_handlers; /* 0: no runtime_handlers */
	const char **handlers;
	/* require_annotations.nri: every Kubernetes workload container
	 * must carry the NRI plugin's mark (nri_deliver.h) */
	bool nri;
	enum on_missing_annotations on_missing;
};

#define SH_RECORD_DIR_DEFAULT "/var/lib/oci-sockopt-hook/recorded"

/* The built-in sandbox_policy: no AF_INET or AF_INET6 socket (all that
 * cgroup/sock_create sees). '@' is not a policy name's character, so no
 * operator policy can be mistaken for it. */
#define SH_SANDBOX_BUILTIN "@deny-sockets"

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
	bool audit; /* "mode": "audit": count what it would do, apply nothing */
	/* "audit_by_annotation": true: a workload may get this audit-mode
	 * policy by naming it, even where allow_audit_mode is false. */
	bool audit_by_annotation;
	size_t nr_set, nr_get;
	struct sh_rule_entry *set_rules, *get_rules;
};

/* Which file a config was read from, as it was then (config_changed()). */
struct sh_config_stamp {
	bool set;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

/* keep_keys when the config does not say: see README "Performance" for
 * the measurements behind it. */
#define SH_KEEP_KEYS_DEFAULT true

struct sh_config {
	const char *path;
	struct sh_config_stamp stamp; /* set by config_load() */
	bool default_bypass;
	const char *default_policy; /* NULL when empty */
	bool allow_bypass;
	bool allow_audit_mode; /* annotations.allow_audit_mode */
	size_t nr_allowed;
	const char **allowed_policies;
	bool record_allow; /* record.allow: sockopt-hook.io/record is taken */
	const char *record_dir; /* record.dir, or SH_RECORD_DIR_DEFAULT */
	/* preload keeps the static keys of the policies' attach types on
	 * (keys.h) */
	bool keep_keys;
	enum on_unsupported on_unsupported;
	enum on_shared_cgroup on_shared_cgroup;
	enum on_override_program on_override_program;
	struct sh_require require;
	/* sandbox_policy: what a pod sandbox (pause) container gets, the
	 * built-in by default; NULL when it is "" (sandboxes unpoliced). */
	const struct sh_policy *sandbox_policy;
	const char *nri_hook_path; /* nri.hook_path, or NULL: the default */
	/* nri.attach "plugin": the plugin attaches at StartContainer itself
	 * (containerd); "hook" (the default): it gives containers the hook */
	bool nri_attach_plugin;
	const char *nri_bundle_dir; /* nri.bundle_dir, or NULL: the default */
	int log_level;
	const char *log_file;
	int log_format; /* enum log_format: text or json lines in log_file */
	size_t nr_policies;
	struct sh_policy *policies;
	struct json_object *root; /* owns every string above */
};

#endif /* SH_CONFIG_TYPES_H */
