// SPDX-License-Identifier: GPL-2.0-only
/*
 * `record merge NAME|FILE...`: the recordings of one workload's replicas
 * and restarts as one proposal, as the Security Profiles Operator merges
 * the profiles of a workload's replicas: the union of their footprints
 * (counts added, value ranges widened), proposed under the policy they
 * ran under. A NAME is every recording under record.dir/NAME; a FILE (an
 * operand with a '/') one recording file, or an earlier merge. They must
 * all have run under the same policy, as the config had it: a union of
 * recordings made under different policies would propose less than one of
 * them ran under. The result, checked by the config parser, goes to
 * stdout, with every recording's provenance.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "config/config.h"
#include "config/names.h"
#include "input/strictjson.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/trust.h"
#include "record/footprint_json.h"
#include "record/recording.h"

#define MERGE_FILES_MAX 4096

struct merge {
	const char *config; /* --config, or NULL */
	struct sh_config cfg; /* loaded for the first NAME */
	bool cfg_loaded;
	struct footprint *fp;
	struct json_object *recordings; /* every provenance, once */
	struct json_object *running; /* the first one's policy_config */
	char first[SH_RECORDING_FILE_MAX + 64]; /* where it came from */
	const char *name; /* the proposed policy's */
	int nr;
};

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

/* The same recording reached twice (by name and by file): once. */
static bool seen(const struct merge *m, struct json_object *prov)
{
	size_t n = json_object_array_length(m->recordings);

	for (size_t i = 0; i < n; i++) {
		struct json_object *o =
			json_object_array_get_idx(m->recordings, i);

		if (!strcmp(get_str(o, "container_id"),
			    get_str(prov, "container_id")) &&
		    !strcmp(get_str(o, "started"), get_str(prov, "started")))
			return true;
	}
	return false;
}

static int add_recording(struct merge *m, const char *what,
			 struct json_object *prov)
{
	struct json_object *running = recording_running(prov);
	struct sh_error err = { 0 };

	if (!json_object_is_type(prov, json_type_object)) {
		log_error("%s: a recording is not an object", what);
		return -EBADMSG;
	}
	if (seen(m, prov))
		return 0;
	if (!m->nr++) {
		m->running = running;
		snprintf(m->first, sizeof(m->first), "%s", what);
		if (!m->name && names_record_ok(get_str(prov, "record")))
			m->name = get_str(prov, "record");
	} else if (!json_object_equal(running, m->running)) {
		log_error(
			"%s: container %s ran under another policy (%s) than %s: merge the recordings of one workload under one policy",
			what, get_str(prov, "container_id"),
			*get_str(prov, "policy") ? get_str(prov, "policy") :
						   "none",
			m->first);
		return -EINVAL;
	}
	if (footprint_json_read(prov, m->fp, &err)) {
		log_error("%s: %s", what, err.msg);
		return err.code;
	}
	json_object_array_add(m->recordings, json_object_get(prov));
	return 0;
}

static int add_text(struct merge *m, const char *what, const char *text,
		    size_t len)
{
	_cleanup_json_ struct json_object *doc = NULL;
	struct json_object *arr;
	struct sh_error err = { 0 };
	int r;

	if (strictjson_parse(what, text, len, &doc, &err)) {
		log_error("%s", err.msg);
		return err.code;
	}
	if (!json_object_is_type(doc, json_type_object) ||
	    !json_object_object_get_ex(doc, "recordings", &arr) ||
	    !json_object_is_type(arr, json_type_array) ||
	    !json_object_array_length(arr)) {
		log_error("%s is not a recording: it has no \"recordings\"",
			  what);
		return -EBADMSG;
	}
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		r = add_recording(m, what, json_object_array_get_idx(arr, i));
		if (r)
			return r;
	}
	return 0;
}

static int add_file_at(struct merge *m, int dir, const char *name,
		       const char *what)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = fileio_read_at(dir, name, 1, SH_MAX_FILE_SIZE, &text, &len);

	if (r) {
		log_error("cannot read %s: %s", what, strerror(-r));
		return r;
	}
	return add_text(m, what, text, len);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json files of a directory, sorted. */
static int list_dir(int dir, char ***names, size_t *nr)
{
	int again = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_closedir_ DIR *d = again < 0 ? NULL : fdopendir(again);
	struct dirent *de;
	size_t len;

	if (!d) {
		if (again >= 0)
			close(again);
		return -errno;
	}
	*names = calloc(MERGE_FILES_MAX, sizeof(**names));
	if (!*names)
		return -ENOMEM;
	while ((de = readdir(d)) && *nr < MERGE_FILES_MAX) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 6 ||
		    strcmp(de->d_name + len - 5, ".json"))
			continue;
		(*names)[*nr] = strdup(de->d_name);
		if (!(*names)[(*nr)++])
			return -ENOMEM;
	}
	qsort(*names, *nr, sizeof(**names), cmp_names);
	return 0;
}

static const struct sh_config *config(struct merge *m)
{
	struct sh_error err = { 0 };
	int r;

	if (m->cfg_loaded)
		return &m->cfg;
	r = config_load(config_path(m->config), &m->cfg, &err);
	if (r) {
		error_report(&err, r);
		return NULL;
	}
	m->cfg_loaded = true;
	return &m->cfg;
}

/* Every recording under record.dir/NAME, reached as the hook writes it. */
static int add_name(struct merge *m, const char *name)
{
	const struct sh_config *cfg = config(m);
	struct sh_error err = { 0 };
	_cleanup_close_ int top = -1, dir = -1;
	char path[SH_RECORD_DIR_MAX + SH_POLICY_NAME_MAX + 2];
	char what[sizeof(path) + SH_RECORDING_FILE_MAX];
	char **names = NULL;
	size_t nr = 0;
	int r = 0;

	if (!cfg)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", cfg->record_dir, name);
	top = trust_open_dir_path("record.dir", cfg->record_dir, false, 0750,
				  &err);
	if (top >= 0)
		dir = trust_open_dir_at(top, name, "record.dir", path, false,
					0750, &err);
	if (top < 0 || dir < 0) {
		log_error("no recordings of '%s': %s", name, err.msg);
		return err.code;
	}
	r = list_dir(dir, &names, &nr);
	if (!r && !nr)
		r = -ENOENT;
	if (r)
		log_error("no recordings of '%s' in %s: %s", name, path,
			  strerror(-r));
	for (size_t i = 0; !r && i < nr; i++) {
		snprintf(what, sizeof(what), "%s/%s", path, names[i]);
		r = add_file_at(m, dir, names[i], what);
	}
	for (size_t i = 0; names && i < nr; i++)
		free(names[i]);
	free(names);
	return r;
}

static int add_operands(struct merge *m, int argc, char **argv)
{
	int r = 0;

	for (int i = 0; !r && i < argc; i++) {
		const char *op = argv[i];

		if (strchr(op, '/'))
			r = add_file_at(m, AT_FDCWD, op, op);
		else if (!names_record_ok(op)) {
			log_error(
				"record merge: '%.64s' is neither a record name (1 to 64 of [A-Za-z0-9._-]) nor a file (give a path with a '/')",
				op);
			r = -EINVAL;
		} else {
			m->name = m->name ? m->name : op;
			r = add_name(m, op);
		}
	}
	return r;
}

static int print_merged(struct merge *m)
{
	_cleanup_json_ struct json_object *doc = NULL;
	struct sh_error err = { 0 };

	footprint_policy_sort(m->fp);
	doc = recording_document(json_object_get(m->recordings), m->fp,
				 m->running, m->name ? m->name : "merged",
				 &err);
	if (!doc) {
		log_error("record merge: %s", err.msg);
		return err.code;
	}
	printf("%s\n",
	       json_object_to_json_string_ext(
		       doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
				    JSON_C_TO_STRING_NOSLASHESCAPE));
	return 0;
}

static int merge(const char *config, int argc, char **argv)
{
	_cleanup_json_ struct json_object *recordings = json_object_new_array();
	_cleanup_free_ struct footprint *fp = calloc(1, sizeof(*fp));
	struct merge m = { .config = config,
			   .fp = fp,
			   .recordings = recordings };
	int r;

	if (!fp || !recordings)
		return -ENOMEM;
	r = add_operands(&m, argc, argv);
	if (r)
		goto out;
	r = print_merged(&m);
out:
	if (m.cfg_loaded)
		config_free(&m.cfg);
	return r;
}

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	struct cli_parser p;
	int end = cli_parse(&p, cmd, global, argc, argv);

	if (end)
		return cli_exit(end);
	return merge(p.config, p.nr_operands, p.operand);
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	{ 0 },
};

const struct cli_command cmd_record_merge_command = {
	.name = "record merge",
	.operands = "NAME|FILE...",
	.min_operands = 1,
	.max_operands = CLI_MAX_OPERANDS,
	.summary = "one policy from the recordings of a workload's replicas",
	.description =
		"A NAME is every recording under record.dir/NAME (record.dir of\n"
		"the operator config); a FILE, an operand with a '/', one\n"
		"recording file or an earlier merge. Their footprints are added\n"
		"up (counts summed, value ranges widened) and proposed under the\n"
		"policy they ran under, with every recording's provenance, on\n"
		"stdout; the config parser checks it first. Recordings made under\n"
		"different policies are refused.\n",
	.options = options,
	.run = run,
};
