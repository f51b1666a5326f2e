/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The commands, each in its cmd_*.c file with its options table, its own
 * options struct and its usage (cli.h); main.c lists them.
 */
#ifndef SH_COMMANDS_H
#define SH_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include "cmd/cli.h"

extern const struct cli_command cmd_prestart_command;
extern const struct cli_command cmd_create_runtime_command;
extern const struct cli_command cmd_poststop_command;
extern const struct cli_command cmd_hook_command;
extern const struct cli_command cmd_gc_command;
extern const struct cli_command cmd_probe_command;
extern const struct cli_command cmd_status_command;
extern const struct cli_command cmd_explain_command;
extern const struct cli_command cmd_validate_command;
extern const struct cli_command cmd_metrics_command;
extern const struct cli_command cmd_features_command;
extern const struct cli_command cmd_record_command;
/* Reached through `record merge`, not in the list of commands. */
extern const struct cli_command cmd_record_merge_command;
extern const struct cli_command cmd_preload_command;
extern const struct cli_command cmd_apply_command;
extern const struct cli_command cmd_nri_command;
extern const struct cli_command cmd_runtime_config_command;
extern const struct cli_command cmd_cdi_command;
extern const struct cli_command cmd_runtime_exec_command;

/* prestart on a state read elsewhere (the NRI plugin's StartContainer):
 * the hook's own path, counted in the stats and logged as a hook run under
 * stage is; the config through cache (config.h: what a fresh read would
 * give, read again when it changed). 0, or a negative errno with err
 * reported. */
struct config_cache;
struct oci_state;
struct sh_error;
int cmd_stages_attach_state(const char *stage, const char *config,
			    struct config_cache *cache, struct oci_state *st,
			    struct sh_error *err);

/* status's filters (--namespace, --pod, --container, --policy): exact
 * names, NULL for any. */
struct cmd_status_filter {
	const char *k8s_namespace;
	const char *pod;
	const char *container;
	const char *policy;
};

/* The first filter whose value is not a valid name ("--pod"), or NULL;
 * whether an attachment passes them all. */
struct sh_attachment;
const char *cmd_status_bad_filter(const struct cmd_status_filter *f);
bool cmd_status_match(const struct sh_attachment *att,
		      const struct cmd_status_filter *f);
/* A 64 hex digit id by its first 12, any other whole. */
void cmd_status_short_id(const char *id, char *buf, size_t len);
/* status --json: the rows as a JSON array on stdout. */
struct status_view_row;
struct status_view_rules;
int cmd_status_json(const struct status_view_row *rows, size_t nr,
		    const struct status_view_rules *rules);

/* Kubernetes label keys and values, checked as the API server checks
 * them (`features`). [prefix/]name: prefix a DNS subdomain of at most 253
 * bytes, name 1 to 63 of [A-Za-z0-9._-], starting and ending with a
 * letter or digit. */
bool cmd_features_label_valid(const char *key);
/* Empty, or what a key's name part may be. */
bool cmd_features_label_value_valid(const char *value);

#endif /* SH_COMMANDS_H */
