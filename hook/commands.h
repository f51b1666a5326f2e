/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_COMMANDS_H
#define SH_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#define SH_MAX_HOOKS_DIRS 16

struct cmd_args {
	const char *command; /* the command's name */
	const char *config; /* --config, or NULL */
	const char *bundle; /* explain --bundle */
	bool json;
	bool unpin; /* preload --unpin */
	const char *hooks_dirs[SH_MAX_HOOKS_DIRS]; /* validate --hooks-dir */
	int nr_hooks_dirs;
	/* status filters: exact names, NULL for any */
	const char *namespace_filter; /* --namespace */
	const char *pod_filter; /* --pod */
	const char *container_filter; /* --container */
	const char *policy_filter; /* --policy */
	const char *output; /* metrics --output FILE */
	const char *nfd_file; /* features --nfd-file FILE */
	int argc; /* operands after the command */
	char **argv;
};

/* What a command returns for a usage error it has reported: main exits 2
 * (1 for a negative errno). */
#define CMD_USAGE 2

int cmd_prestart(const struct cmd_args *args);
int cmd_poststop(const struct cmd_args *args);
int cmd_hook(const struct cmd_args *args);
int cmd_probe(const struct cmd_args *args);
int cmd_gc(const struct cmd_args *args);
int cmd_preload(const struct cmd_args *args);
int cmd_validate(const struct cmd_args *args);
int cmd_status(const struct cmd_args *args);
/* status's filters: the first option whose value is not a valid name, or
 * NULL; whether a record passes them all. */
struct sh_record;
const char *cmd_status_bad_filter(const struct cmd_args *args);
bool cmd_status_match(const struct sh_record *rec, const struct cmd_args *args);
/* A 64 hex digit id by its first 12, any other whole. */
void cmd_status_short_id(const char *id, char *buf, size_t len);
int cmd_explain(const struct cmd_args *args);
int cmd_metrics(const struct cmd_args *args);
int cmd_features(const struct cmd_args *args);
int cmd_footprint(const struct cmd_args *args); /* `record ID` */
int cmd_record_merge(const struct cmd_args *args); /* `record merge ...` */

#endif /* SH_COMMANDS_H */
