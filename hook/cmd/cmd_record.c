// SPDX-License-Identifier: GPL-2.0-only
/*
 * `record ID [--json]`: the footprint of a container being recorded, as
 * its programs have noted it so far, and the policy it would propose if
 * it stopped now.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "commands.h"
#include "footprint.h"
#include "jsonw.h"
#include "log.h"
#include "state.h"

static const char *to_text(struct json_object *o)
{
	return json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			   JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void print_text(const struct sh_record *rec, const struct footprint *fp,
		       struct json_object *policy)
{
	char line[SH_FOOTPRINT_TEXT_MAX], file[256];

	footprint_file_name(rec, file, sizeof(file));
	printf("container %s: record '%s', policy to %s/%s when it is gone\n",
	       rec->id, rec->footprint, rec->footprint_dir, file);
	for (size_t i = 0; i < fp->nr; i++) {
		footprint_policy_entry_text(&fp->e[i], line, sizeof(line));
		printf("  %s\n", line);
	}
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (fp->overflow[k])
			printf("  overflow: the %s table (%d entries) was full for %llu call(s)\n",
			       kind_get(k)->name, SH_FP_MAX,
			       (unsigned long long)fp->overflow[k]);
	printf("proposed policy:\n%s\n", to_text(policy));
}

static int show(bool json, const struct sh_record *rec,
		const struct footprint *fp)
{
	_cleanup_json_ struct json_object *policy =
		footprint_policy_json(fp, rec->footprint);
	_cleanup_json_ struct json_object *o = NULL;

	if (!json) {
		print_text(rec, fp, policy);
		return 0;
	}
	o = footprint_policy_entries_json(fp);
	jsonw_str(o, "id", rec->id);
	jsonw_str(o, "record", rec->footprint);
	json_object_object_add(o, "policy", json_object_get(policy));
	printf("%s\n", to_text(o));
	return 0;
}

static int record(const char *id, bool json)
{
	_cleanup_free_ struct footprint *fp = NULL;
	struct sh_error err = { 0 };
	struct sh_record rec;
	int r = state_read(id, &rec);

	if (r) {
		log_error("no record of container %s: %s", id, strerror(-r));
		return r;
	}
	fp = malloc(sizeof(*fp));
	if (!fp)
		return -ENOMEM;
	r = footprint_read(&rec, fp, &err);
	if (r) {
		log_error("%s", err.msg);
		return r;
	}
	return show(json, &rec, fp);
}

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	struct cli_parser p;
	int end = cli_parse(&p, cmd, global, argc, argv);

	if (end)
		return cli_exit(end);
	return record(p.operand[0], p.json);
}

const struct cli_command cmd_record_command = {
	.name = "record",
	.operands = "ID",
	.min_operands = 1,
	.max_operands = 1,
	.summary = "record mode: a container's socket footprint so far",
	.description =
		"ID is the container's id, as status shows it. The footprint is\n"
		"the setsockopt and getsockopt options with counts and value\n"
		"ranges and the socket tuples its programs noted, and the overflow\n"
		"counters; the proposed policy is in the operator config's schema.\n",
	.options = cli_json_only,
	.run = run,
};
