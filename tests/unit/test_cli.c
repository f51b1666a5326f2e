// SPDX-License-Identifier: GPL-2.0-only
/*
 * cli.c: one command's command line, on a command of the test's own
 * (what 01-cli.sh checks through the binary, here through the parser a
 * command sees): its own options with their values, in any order with the
 * operands; the shared --config and --json; --help printing the usage;
 * every mistake (unknown, ambiguous, missing or unwanted value, operands
 * too few or too many) one line naming the command, and CLI_USAGE.
 *
 * Modules: `cli.c`
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "helpers.h"
#include "tap.h"

enum { OPT_NAMESPACE = CLI_OPT_OWN, OPT_NAME, OPT_UNPIN };

static const struct cli_option frob_options[] = {
	CLI_CONFIG,
	CLI_JSON,
	{ OPT_NAMESPACE, "namespace", "NS", "only the pods of namespace NS" },
	{ OPT_NAME, "name", "NAME", "a name" },
	{ OPT_UNPIN, "unpin", NULL,
	  "a flag with a help text long enough to be wrapped under its column by the usage" },
	{ 0 },
};

static const struct cli_command frob = {
	.name = "frob",
	.operands = "ID",
	.min_operands = 1,
	.max_operands = 2,
	.summary = "frobnicate a container",
	.options = frob_options,
};

struct parsed {
	int end;
	int ids[8], nr;
	const char *values[8];
	struct cli_parser p;
	char said[1024];
};

/* Parses "frob" plus the words of line (split at spaces). */
static struct parsed *parse(const char *line, const struct cli_global *g)
{
	static struct parsed out;
	static char copy[512];
	static char *argv[32];
	int argc = 0, r;
	char *save = NULL;

	memset(&out, 0, sizeof(out));
	snprintf(copy, sizeof(copy), "%s", line);
	argv[argc++] = "frob";
	for (char *w = strtok_r(copy, " ", &save); w && argc < 31;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	cli_start(&out.p, &frob, g, argc, argv);
	capture_start();
	while ((r = cli_next(&out.p)) > 0 && out.nr < 8) {
		out.ids[out.nr] = r;
		out.values[out.nr++] = out.p.value;
	}
	snprintf(out.said, sizeof(out.said), "%s", capture_end());
	out.end = r;
	return out.end == r ? &out : &out;
}

static const struct cli_global none = { 0 };

static void test_good(void)
{
	struct cli_global g = { .config = "/etc/x.json", .json = false };
	struct parsed *r;

	r = parse("c1", &none);
	ok(r->end == CLI_END && r->nr == 0 && r->p.nr_operands == 1 &&
		   !strcmp(r->p.operand[0], "c1") && !*r->said,
	   "an operand alone: CLI_END, the operand kept");
	r = parse("--namespace team-a c1 --unpin", &none);
	ok(r->end == CLI_END && r->nr == 2 && r->ids[0] == OPT_NAMESPACE &&
		   !strcmp(r->values[0], "team-a") && r->ids[1] == OPT_UNPIN &&
		   r->p.nr_operands == 1,
	   "options before and after the operand, with their values, in order");
	r = parse("--namespace=ns2 c1", &none);
	ok(r->end == CLI_END && r->nr == 1 && !strcmp(r->values[0], "ns2"),
	   "--opt=value");
	r = parse("--nam ns c1", &none);
	ok(r->end == CLI_USAGE &&
		   strstr(r->said, "frob: ambiguous option '--nam'"),
	   "a prefix of two options: ambiguous");
	r = parse("--names ns c1", &none);
	ok(r->end == CLI_END && r->nr == 1 && r->ids[0] == OPT_NAMESPACE,
	   "an unambiguous prefix is taken (getopt_long)");
	r = parse("c1 --json", &g);
	ok(r->end == CLI_END && r->nr == 0 && r->p.json &&
		   !strcmp(r->p.config, "/etc/x.json"),
	   "--json is the parser's, not returned; the global --config carries");
	r = parse("--config /tmp/c.json c1", &g);
	ok(r->end == CLI_END && !strcmp(r->p.config, "/tmp/c.json"),
	   "--config after the command wins over the global one");
	r = parse("c1 -- --unpin", &none);
	ok(r->end == CLI_END && r->nr == 0 && r->p.nr_operands == 2 &&
		   !strcmp(r->p.operand[1], "--unpin"),
	   "after --, an option-looking word is an operand");
	r = parse("c1 c2", &none);
	ok(r->end == CLI_END && r->p.nr_operands == 2,
	   "two operands, the maximum");
}

static void bad(const char *line, const char *want, const char *what)
{
	struct parsed *r = parse(line, &none);

	ok(r->end == CLI_USAGE && count_lines(r->said) == 1 &&
		   strstr(r->said, want) &&
		   strstr(r->said, "(see 'oci-sockopt-hook frob --help')"),
	   "%s: CLI_USAGE, one line: %s", what, want);
	if (!strstr(r->said, want))
		tap_diag("  said: %s", r->said);
}

static void test_bad(void)
{
	bad("c1 --frobnicate", "frob: unknown option '--frobnicate'",
	    "an option no command has");
	bad("c1 -x", "frob: unknown option '-x'", "an unknown short option");
	bad("c1 --namespace", "frob: option --namespace needs a value",
	    "a value missing at the end");
	bad("c1 --unpin=yes", "frob: option --unpin takes no value",
	    "a value given to a flag");
	bad("", "frob: ID missing", "no operand");
	bad("c1 c2 c3", "frob: unexpected argument 'c3'",
	    "one operand too many");
	bad("c1 c2 -- 'x\ny'", "frob: unexpected argument",
	    "too many after --");
	ok(cli_exit(CLI_USAGE) == CMD_USAGE && CMD_USAGE == 2,
	   "cli_exit: a usage error exits 2");
	ok(cli_exit(CLI_HELP) == 0, "cli_exit: --help exits 0");
}

#define USAGE_HEAD \
	"Usage: oci-sockopt-hook frob [OPTION]... ID\nFrobnicate a container.\n\nOptions:\n"

static void test_help(void)
{
	FILE *f = tmpfile();
	int saved = dup(STDOUT_FILENO);
	struct parsed *r;
	char text[4096] = "";

	fflush(stdout);
	dup2(fileno(f), STDOUT_FILENO);
	r = parse("--unpin --help c1 --frobnicate", &none);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(f);
	(void)!fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	ok(r->end == CLI_HELP && r->nr == 1 && !*r->said,
	   "--help: CLI_HELP where it stands; what follows is not read");
	ok(!strncmp(text, USAGE_HEAD, strlen(USAGE_HEAD)),
	   "the usage: synopsis, summary capitalised, options");
	ok(strstr(text,
		  "\n  --namespace NS        only the pods of namespace NS\n") !=
		   NULL,
	   "an option with its value's name, help in its column");
	ok(strstr(text,
		  "\n  --unpin               a flag with a help text long enough to be wrapped under\n                        its column by the usage\n") !=
		   NULL,
	   "a long help wrapped at 79 columns under its column");
	ok(strstr(text, "\n  --config PATH ") && strstr(text, "\n  --json ") &&
		   strstr(text,
			  "\n  -h, --help            print this help and exit\n"),
	   "the shared options and --help are listed");
	ok(cli_takes(&frob, "unpin") && cli_takes(&frob, "config") &&
		   !cli_takes(&frob, "hooks-dir") && !cli_takes(&frob, "unpi"),
	   "cli_takes: exact names only");
}

int main(void)
{
	test_good();
	test_bad();
	test_help();
	return tap_done();
}
