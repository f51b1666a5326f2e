// SPDX-License-Identifier: GPL-2.0-only
/*
 * One command's command line, read with getopt_long as bpftool's commands
 * read theirs. In "-" mode getopt hands over the operands in order (as
 * option 1) instead of permuting argv, so options may follow operands
 * (`status ID --json`, `validate FILE --hooks-dir DIR`) whatever
 * POSIXLY_CORRECT says. getopt's own messages are off: they would name
 * the binary's path rather than the command, unescaped.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "lib/log.h"

/* getopt returns this plus the option's index for a long option: above
 * every character, so that optopt tells a long option from a short one. */
#define CLI_VAL_BASE 0x100
/* What getopt returns for an operand in "-" mode. */
#define CLI_OPERAND 1
/* Options and their values in the usage: "  --namespace NS" and so on. */
#define CLI_HELP_COLUMN 24
#define CLI_WIDTH 79

void cli_start(struct cli_parser *p, const struct cli_command *cmd,
	       const struct cli_global *global, int argc, char **argv)
{
	int n = 0;

	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->argc = argc;
	p->argv = argv;
	p->config = global->config;
	p->json = global->json;
	/* A table longer than CLI_MAX_OPTIONS loses its last options: the
	 * CLI test, which tries every option of every command, says so. */
	for (const struct cli_option *o = cmd->options; o->id; o++) {
		if (n == CLI_MAX_OPTIONS)
			break;
		p->longopts[n] = (struct option){
			.name = o->name,
			.has_arg = o->value ? required_argument : no_argument,
			.val = CLI_VAL_BASE + n,
		};
		n++;
	}
	p->longopts[n] = (struct option){ .name = "help", .val = 'h' };
	/* glibc: start over, as for a new argv (main parsed the globals). */
	optind = 0;
	opterr = 0;
}

void cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	log_error("%s: %s (see '%s %s --help')", cmd->name, what, SH_IDENT,
		  cmd->name);
}

static int operand(struct cli_parser *p, char *arg)
{
	if (p->nr_operands == p->cmd->max_operands) {
		cli_usage_error(p->cmd, "unexpected argument %s", LOG_Q(arg));
		return CLI_USAGE;
	}
	if (p->nr_operands < CLI_MAX_OPERANDS)
		p->operand[p->nr_operands] = arg;
	p->nr_operands++;
	return 0;
}

static const char *long_name(const struct cli_parser *p, int val)
{
	return p->longopts[val - CLI_VAL_BASE].name;
}

/* How many options of the command start with the text after "--". */
static int matches(const struct cli_parser *p, const char *arg)
{
	size_t len = strcspn(arg + 2, "=");
	int n = 0;

	for (const struct option *o = p->longopts; o->name; o++)
		n += !strncmp(o->name, arg + 2, len);
	return n;
}

/* getopt said '?': which mistake it was. */
static int bad_option(struct cli_parser *p)
{
	const char *arg = p->argv[optind - 1];
	char text[3] = { '-', (char)optopt, '\0' };

	if (optopt >= CLI_VAL_BASE)
		cli_usage_error(p->cmd, "option --%s takes no value",
				long_name(p, optopt));
	else if (optopt)
		cli_usage_error(p->cmd, "unknown option %s", LOG_Q(text));
	else if (!strncmp(arg, "--", 2) && arg[2] && matches(p, arg) > 1)
		cli_usage_error(p->cmd, "ambiguous option %s", LOG_Q(arg));
	else
		cli_usage_error(p->cmd, "unknown option %s", LOG_Q(arg));
	return CLI_USAGE;
}

static int missing_value(struct cli_parser *p)
{
	if (optopt >= CLI_VAL_BASE)
		cli_usage_error(p->cmd, "option --%s needs a value",
				long_name(p, optopt));
	else
		cli_usage_error(p->cmd, "option -%c needs a value", optopt);
	return CLI_USAGE;
}

static int end(struct cli_parser *p)
{
	/* After "--", every argument is an operand. */
	for (; optind < p->argc; optind++)
		if (operand(p, p->argv[optind]))
			return CLI_USAGE;
	if (p->nr_operands < p->cmd->min_operands) {
		cli_usage_error(p->cmd, "%s missing", p->cmd->operands);
		return CLI_USAGE;
	}
	return CLI_END;
}

int cli_next(struct cli_parser *p)
{
	const struct cli_option *o;
	int c;

	while ((c = getopt_long(p->argc, p->argv, "-:h", p->longopts, NULL)) !=
	       -1) {
		if (c == CLI_OPERAND) {
			if (operand(p, optarg))
				return CLI_USAGE;
			continue;
		}
		if (c == 'h') {
			cli_usage(stdout, p->cmd);
			return CLI_HELP;
		}
		if (c == ':')
			return missing_value(p);
		if (c < CLI_VAL_BASE)
			return bad_option(p);
		o = &p->cmd->options[c - CLI_VAL_BASE];
		p->value = optarg;
		if (o->id == CLI_OPT_CONFIG)
			p->config = optarg;
		else if (o->id == CLI_OPT_JSON)
			p->json = true;
		else
			return o->id;
	}
	return end(p);
}

int cli_exit(int end_code)
{
	return end_code == CLI_HELP ? 0 : CMD_USAGE;
}

int cli_parse(struct cli_parser *p, const struct cli_command *cmd,
	      const struct cli_global *global, int argc, char **argv)
{
	int id;

	cli_start(p, cmd, global, argc, argv);
	while ((id = cli_next(p)) > 0)
		;
	return id;
}

const struct cli_option cli_json_only[] = {
	CLI_JSON,
	{ 0 },
};

bool cli_takes(const struct cli_command *cmd, const char *name)
{
	for (const struct cli_option *o = cmd->options; o->id; o++)
		if (!strcmp(o->name, name))
			return true;
	return false;
}

/* text from column col on, wrapped at CLI_WIDTH under that column. */
static void wrap(FILE *out, int col, const char *text)
{
	int at = col;

	while (*text) {
		size_t word = strcspn(text, " ");

		if (at > col && at + 1 + (int)word > CLI_WIDTH) {
			fprintf(out, "\n%*s", col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', out);
			at++;
		}
		fprintf(out, "%.*s", (int)word, text);
		at += (int)word;
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

static void option_line(FILE *out, const char *opt, const char *value,
			const char *help)
{
	char left[64];
	int n = snprintf(left, sizeof(left), "  %s%s%s", opt, value ? " " : "",
			 value ? value : "");

	if (n >= CLI_HELP_COLUMN - 1)
		fprintf(out, "%s\n%*s", left, CLI_HELP_COLUMN, "");
	else
		fprintf(out, "%-*s", CLI_HELP_COLUMN, left);
	wrap(out, CLI_HELP_COLUMN, help);
}

void cli_usage(FILE *out, const struct cli_command *cmd)
{
	char opt[40];

	fprintf(out, "Usage: %s %s [OPTION]...%s%s\n", SH_IDENT, cmd->name,
		cmd->operands ? " " : "", cmd->operands ? cmd->operands : "");
	fprintf(out, "%c%s.\n", toupper((unsigned char)cmd->summary[0]),
		cmd->summary + 1);
	if (cmd->description)
		fprintf(out, "\n%s", cmd->description);
	fprintf(out, "\nOptions:\n");
	for (const struct cli_option *o = cmd->options; o->id; o++) {
		snprintf(opt, sizeof(opt), "--%s", o->name);
		option_line(out, opt, o->value, o->help);
	}
	option_line(out, "-h, --help", NULL, "print this help and exit");
}
