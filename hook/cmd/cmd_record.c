// SPDX-License-Identifier: GPL-2.0-only
/*
 * `record ID [--json]`: the footprint of a container being recorded, as
 * its programs have noted it so far, and the policy it would propose if
 * it stopped now. `record merge NAME|FILE...` is cmd_record_merge.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "record/footprint.h"
#include "record/footprint_json.h"
#include "record/recording.h"
#include "state/state.h"

static const char *to_text(struct json_object *o)
{
	return json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			   JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void print_text(const struct sh_record *rec, const struct footprint *fp,
		       struct json_object *doc, const char *why)
{
	char line[SH_FOOTPRINT_TEXT_MAX], file[SH_RECORDING_FILE_MAX];
	struct json_object *policies = NULL;

	recording_file_name(rec, file, sizeof(file));
	printf("container %s: record '%s', its recording goes to %s/%s/%s when it is gone\n",
	       rec->id, rec->footprint, rec->footprint_dir, rec->footprint,
	       file);
	for (size_t i = 0; i < fp->nr; i++) {
		footprint_json_entry_text(&fp->e[i], line, sizeof(line));
		printf("  %s\n", line);
	}
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (fp->overflow[k])
			printf("  overflow: the %s table (%d entries) was full for %llu call(s)\n",
			       kind_get(k)->name, SH_FP_MAX,
			       (unsigned long long)fp->overflow[k]);
	if (!doc) {
		printf("no policy can be proposed: %s\n", why);
		return;
	}
	json_object_object_get_ex(doc, "policies", &policies);
	printf("proposed policy:\n%s\n", to_text(policies));
}

static struct json_object *as_json(const struct sh_record *rec,
				   const struct footprint *fp,
				   struct json_object *doc, const char *why)
{
	struct json_object *o = json_object_new_object();
	struct json_object *over = json_object_new_object();
	struct json_object *policies = NULL;

	jsonw_str(o, "id", rec->id);
	jsonw_str(o, "record", rec->footprint);
	json_object_object_add(o, "entries", footprint_json_entries(fp));
	jsonw_int(o, "table_size", SH_FP_MAX);
	for (int k = 0; k < SH_PROG_KINDS; k++)
		jsonw_int(over, kind_get(k)->name, (int64_t)fp->overflow[k]);
	json_object_object_add(o, "overflow", over);
	if (doc)
		json_object_object_get_ex(doc, "policies", &policies);
	json_object_object_add(o, "policy", json_object_get(policies));
	jsonw_str(o, "policy_error", doc ? NULL : why);
	return o;
}

/* The file the container would leave if it stopped now. */
static struct json_object *document(const struct sh_record *rec,
				    const struct footprint *fp,
				    struct sh_error *err)
{
	struct json_object *prov = recording_provenance(rec, fp, false, err);
	struct json_object *recordings;

	if (!prov)
		return NULL;
	recordings = json_object_new_array();
	json_object_array_add(recordings, prov);
	return recording_document(recordings, fp, recording_running(prov),
				  rec->footprint, err);
}

static int show(bool json, const struct sh_record *rec,
		const struct footprint *fp)
{
	struct sh_error err = { 0 };
	_cleanup_json_ struct json_object *doc = document(rec, fp, &err);
	_cleanup_json_ struct json_object *o = NULL;

	if (!json) {
		print_text(rec, fp, doc, err.msg);
		return 0;
	}
	o = as_json(rec, fp, doc, err.msg);
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
	int end;

	/* `record merge ...`: a command of its own, with its own usage. */
	if (argc > 1 && !strcmp(argv[1], "merge"))
		return cmd_record_merge_command.run(&cmd_record_merge_command,
						    global, argc - 1, argv + 1);
	end = cli_parse(&p, cmd, global, argc, argv);
	if (end)
		return cli_exit(end);
	return record(p.operand[0], p.json);
}

const struct cli_command cmd_record_command = {
	.name = "record",
	.operands = "ID",
	.min_operands = 1,
	.max_operands = 1,
	.summary = "record mode: a container's footprint so far, or merge",
	.description =
		"ID is the container's id, as status shows it. The footprint is\n"
		"the setsockopt and getsockopt options with counts (let through\n"
		"and refused) and value ranges and the socket tuples its programs\n"
		"noted, and the overflow counters; the proposed policy is in the\n"
		"operator config's schema, made under the policy the container\n"
		"runs under.\n"
		"\n"
		"record merge NAME|FILE... (see 'record merge --help') makes one\n"
		"proposal of the recordings of a workload's replicas and restarts.\n",
	.options = cli_json_only,
	.run = run,
};
