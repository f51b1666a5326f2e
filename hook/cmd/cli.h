/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-command command lines, as bpftool's do_* and crun's per-command
 * argp: each command has a table of the options it takes, parses its
 * arguments itself into its own options struct, and prints its own usage
 * (`oci-sockopt-hook CMD --help`, `oci-sockopt-hook help CMD`). An option
 * a command does not take is a usage error: one line naming the command,
 * exit status 2.
 */
#ifndef SH_CLI_H
#define SH_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <getopt.h>

#include "lib/sh_types.h"

/* The options given before the command, which apply to every command. */
struct cli_global {
	const char *config; /* --config PATH, or NULL */
	bool json; /* --json: refused by a command that has no JSON output */
};

struct cli_option {
	int id; /* what cli_next() returns for it: > 0 */
	const char *name; /* without the leading "--" */
	const char *value; /* the value's name in the usage; NULL: a flag */
	const char *help;
};

struct cli_command;
typedef int (*cli_run_fn)(const struct cli_command *cmd,
			  const struct cli_global *global, int argc,
			  char **argv);

struct cli_command {
	const char *name;
	const char *operands; /* in the synopsis, after the options; or NULL */
	int min_operands, max_operands;
	const char *summary; /* one line, in the list of commands */
	const char *description; /* the rest of its usage, or NULL */
	const struct cli_option *options; /* ends with { 0 } */
	cli_run_fn run; /* argv[0] is the command's name */
};

/*
 * Options several commands take, each written once. cli_next() handles
 * them itself (into the parser's config and json, which start as the
 * global options): a command lists them and reads the parser.
 */
enum {
	CLI_OPT_CONFIG = 1,
	CLI_OPT_JSON,
	CLI_OPT_OWN, /* a command's own options are numbered from here */
};
#define CLI_CONFIG                                                  \
	{                                                           \
		CLI_OPT_CONFIG, "config", "PATH",                   \
			"the operator config (else $" SH_CONFIG_ENV \
			", else " SH_DEFAULT_CONFIG ")"             \
	}
#define CLI_JSON                                         \
	{                                                \
		CLI_OPT_JSON, "json", NULL, "print JSON" \
	}

/* At most this many options per command, and operands kept (`record
 * merge` takes that many files or record names). */
#define CLI_MAX_OPTIONS 24
#define CLI_MAX_OPERANDS 64

struct cli_parser {
	const struct cli_command *cmd;
	int argc;
	char **argv;
	struct option longopts[CLI_MAX_OPTIONS + 2];
	const char *value; /* the value of the option cli_next() returned */
	const char *config; /* --config, before or after the command */
	bool json; /* --json, likewise */
	int nr_operands;
	char *operand[CLI_MAX_OPERANDS];
};

/* What a command returns for a usage error it has reported: main exits 2
 * (1 for a negative errno). */
#define CMD_USAGE 2

/* What cli_next() returns when the command line ends. */
enum {
	CLI_END = 0, /* well formed: the operands are in the parser */
	CLI_HELP = -1, /* the usage was printed on stdout: exit 0 */
	CLI_USAGE = -2, /* a usage error was reported: exit 2 */
};

void cli_start(struct cli_parser *p, const struct cli_command *cmd,
	       const struct cli_global *global, int argc, char **argv);
/*
 * The id of the next option the command takes itself (its value in
 * p->value), or how the command line ended: CLI_END once every argument
 * is read and the number of operands is right, CLI_HELP at --help or -h,
 * CLI_USAGE after reporting an option the command does not take, a value
 * missing or given to a flag, or too few or too many operands.
 */
int cli_next(struct cli_parser *p);
/* What a command returns for CLI_HELP (0) and CLI_USAGE (CMD_USAGE). */
int cli_exit(int end);
/* For a command that takes no option of its own: cli_start(), then
 * cli_next() to the end; what it returned at the end (CLI_END, CLI_HELP or
 * CLI_USAGE). */
int cli_parse(struct cli_parser *p, const struct cli_command *cmd,
	      const struct cli_global *global, int argc, char **argv);
/* The options of a command that takes --json alone. */
extern const struct cli_option cli_json_only[];
/* Whether the command takes --NAME. */
bool cli_takes(const struct cli_command *cmd, const char *name);
/* Reports a usage error about the command: "CMD: <what>", one line. */
void cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "Usage: oci-sockopt-hook CMD [OPTIONS] OPERANDS", then the rest. */
void cli_usage(FILE *out, const struct cli_command *cmd);

#endif /* SH_CLI_H */
