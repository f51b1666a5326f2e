// SPDX-License-Identifier: GPL-2.0-only
/*
 * `record ID [--json]`: the footprint of a container being recorded, as
 * its programs have noted it so far, and the policy it would propose if
 * it stopped now. `record merge NAME|FILE...` is below.
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
#include "input/container.h"
#include "input/strictjson.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "lib/trust.h"
#include "record/footprint.h"
#include "record/recording.h"
#include "state/state.h"

static const char *to_text(struct json_object *o)
{
	return json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			   JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void print_text(const struct sh_attachment *att,
		       const struct footprint *fp, struct json_object *doc,
		       const char *why)
{
	char line[SH_FOOTPRINT_TEXT_MAX], file[SH_RECORDING_FILE_MAX];
	struct json_object *policies = NULL;

	recording_file_name(att, file, sizeof(file));
	printf("container %s: record '%s', its recording goes to %s/%s/%s when it is gone\n",
	       att->id, att->footprint, att->footprint_dir, att->footprint,
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

static struct json_object *as_json(const struct sh_attachment *att,
				   const struct footprint *fp,
				   struct json_object *doc, const char *why)
{
	struct json_object *o = json_object_new_object();
	struct json_object *over = json_object_new_object();
	struct json_object *policies = NULL;

	jsonw_str(o, "id", att->id);
	jsonw_str(o, "record", att->footprint);
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
static struct json_object *document(const struct sh_attachment *att,
				    const struct footprint *fp,
				    struct sh_error *err)
{
	struct json_object *prov =
		recording_provenance(att, fp, /* ended= */ false, err);
	struct json_object *recordings;

	if (!prov)
		return NULL;
	recordings = json_object_new_array();
	json_object_array_add(recordings, prov);
	return recording_document(recordings, fp, recording_running(prov),
				  att->footprint, err);
}

static int show(bool json, const struct sh_attachment *att,
		const struct footprint *fp)
{
	struct sh_error err = { 0 };
	_cleanup_json_ struct json_object *doc = document(att, fp, &err);
	_cleanup_json_ struct json_object *o = NULL;

	if (!json) {
		print_text(att, fp, doc, err.msg);
		return 0;
	}
	o = as_json(att, fp, doc, err.msg);
	printf("%s\n", to_text(o));
	return 0;
}

static int record(const char *id, bool json)
{
	_cleanup_free_ struct footprint *fp = NULL;
	struct sh_error err = { 0 };
	struct sh_attachment att;
	int r = state_read(id, &att);

	if (r) {
		log_error("no record of container %s: %s", id, strerror(-r));
		return r;
	}
	fp = malloc(sizeof(*fp));
	if (!fp)
		return -ENOMEM;
	r = footprint_read(&att, fp, &err);
	if (r) {
		log_error("%s", err.msg);
		return r;
	}
	return show(json, &att, fp);
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

/*
 * `record merge NAME|FILE...`: the recordings of one workload's replicas
 * and restarts as one proposal, as the Security Profiles Operator merges
 * the profiles of a workload's replicas: the union of their footprints
 * (counts added, value ranges widened), proposed under the policy they
 * ran under. A NAME is every recording under record.dir/NAME; a FILE (an
 * operand with a '/') one recording file, or an earlier merge. They must
 * all have run under the same policy, as the config had it: a union of
 * recordings made under different policies would propose less than one of
 * them ran under. The record name is the pod's choice, so a NAME stays
 * within one workload: recordings of more than one namespace, or of pods
 * of more than one owner, under it are refused in one line naming them,
 * unless --namespace and --owner name the ones to take (a FILE is named
 * by the operator, and always taken). The result, checked
 * by the config parser, goes to stdout, with every recording's provenance.
 */

#define MERGE_FILES_MAX 4096
#define MERGE_NAMESPACES_MAX 16
#define MERGE_REFUSED_MAX 1024

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
	/* --namespace and --owner: the namespaces and pod owners a NAME's
	 * recordings are taken from ("-" for a recording of none); none
	 * given: one, whichever. */
	const char *namespaces[MERGE_NAMESPACES_MAX];
	int nr_namespaces;
	const char *owners[MERGE_NAMESPACES_MAX];
	int nr_owners;
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

/* A recording's namespace as its provenance has it; "-" for none. */
static const char *namespace_of(struct json_object *prov)
{
	const char *ns = get_str(prov, "namespace");

	return *ns ? ns : "-";
}

static bool named(const char *const *list, int nr, const char *word)
{
	for (int i = 0; i < nr; i++)
		if (!strcmp(list[i], word))
			return true;
	return false;
}

/* Where a recording file is from: its first provenance's namespace and
 * the owner its pod's name says (container_pod_owner()). */
struct scope {
	char ns[SH_MAX_CONTAINER_NAME + 2];
	char owner[SH_MAX_CONTAINER_NAME + 2];
	bool known; /* false: cannot be read (add_file_at() says why) */
};

static void file_scope(int dir, const char *name, struct scope *sc)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ struct json_object *doc = NULL;
	struct sh_error err = { 0 };
	struct json_object *arr, *prov;
	size_t len;

	sc->known = false;
	if (fileio_read_at(dir, name, 1, SH_MAX_FILE_SIZE, &text, &len) ||
	    strictjson_parse(name, text, len, &doc, &err) ||
	    !json_object_object_get_ex(doc, "recordings", &arr) ||
	    !json_object_is_type(arr, json_type_array) ||
	    !json_object_array_length(arr))
		return;
	prov = json_object_array_get_idx(arr, 0);
	snprintf(sc->ns, sizeof(sc->ns), "%s", namespace_of(prov));
	container_pod_owner(get_str(prov, "pod"), sc->owner, sizeof(sc->owner));
	sc->known = true;
}

/* Appends ", word" (or word, first) to buf. */
static void add_word(char *buf, size_t len, const char *word)
{
	size_t pos = strlen(buf);

	if (pos + 1 < len)
		snprintf(buf + pos, len - pos, "%s%s", pos ? ", " : "", word);
}

/*
 * One pass of scope_name() over one key of the scope (the namespace, then
 * the owner): with names given, only the recordings of those are kept;
 * without, those of the first kept one's, and the others, if any, are
 * listed in other. first: the first kept one's value.
 */
static void scope_pass(const struct scope *sc, char **names, size_t nr,
		       bool *keep, bool by_owner, const char *const *given,
		       int nr_given, char *first, size_t first_len, char *other,
		       size_t other_len)
{
	first[0] = '\0';
	for (size_t i = 0; i < nr; i++) {
		const char *v = by_owner ? sc[i].owner : sc[i].ns;

		if (!keep[i] || !sc[i].known)
			continue;
		if (nr_given)
			keep[i] = named(given, nr_given, v);
		else if (!first[0])
			snprintf(first, first_len, "%s", v);
		else if (strcmp(v, first)) {
			keep[i] = false;
			add_word(other, other_len, names[i]);
		}
	}
}

/* The first name kept. */
static const char *first_kept(char **names, size_t nr, const bool *keep,
			      const struct scope *sc)
{
	for (size_t i = 0; i < nr; i++)
		if (keep[i] && sc[i].known)
			return names[i];
	return "";
}

/*
 * A NAME is the pod's choice: a pod of namespace evil that records as
 * web would be merged into shop's proposal for web, and so would a pod of
 * shop's that another team runs. Without --namespace, its recordings must
 * all be of one namespace, and without --owner of pods of one owner (as
 * their names say it); with them, only those of the named ones are taken.
 * keep[i]: whether names[i] is taken.
 */
static int scope_name(struct merge *m, const char *name, int dir, char **names,
		      size_t nr, bool *keep)
{
	char other[MERGE_REFUSED_MAX] = "", first[SH_MAX_CONTAINER_NAME + 2];
	_cleanup_free_ struct scope *sc = calloc(nr, sizeof(*sc));
	int taken = 0;

	if (!sc)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		file_scope(dir, names[i], &sc[i]);
		keep[i] = true;
	}
	scope_pass(sc, names, nr, keep, /* by_owner= */ false, m->namespaces,
		   m->nr_namespaces, first, sizeof(first), other,
		   sizeof(other));
	if (other[0]) {
		log_error(
			"record merge: '%s' holds recordings of more than one namespace (the record name is the pod's choice): %s is of namespace %s, and %s are not; name the namespace to take with --namespace NS (or give each file)",
			name, first_kept(names, nr, keep, sc), first, other);
		return -EPERM;
	}
	scope_pass(sc, names, nr, keep, /* by_owner= */ true, m->owners,
		   m->nr_owners, first, sizeof(first), other, sizeof(other));
	if (other[0]) {
		log_error(
			"record merge: '%s' holds recordings of pods of more than one owner (the record name is the pod's choice): %s is of owner %s, and %s are not; name the owner to take with --owner OWNER (or give each file)",
			name, first_kept(names, nr, keep, sc), first, other);
		return -EPERM;
	}
	for (size_t i = 0; i < nr; i++)
		taken += keep[i];
	if (!taken) {
		log_error(
			"record merge: no recording of '%s' is of the namespaces named with --namespace and the owners named with --owner",
			name);
		return -ENOENT;
	}
	return 0;
}

/* Every recording under record.dir/NAME, reached as the hook writes it. */
static int add_name(struct merge *m, const char *name)
{
	const struct sh_config *cfg = config(m);
	struct sh_error err = { 0 };
	_cleanup_close_ int top = -1, dir = -1;
	char path[SH_RECORD_DIR_MAX + SH_POLICY_NAME_MAX + 2];
	char what[sizeof(path) + SH_RECORDING_FILE_MAX];
	_cleanup_free_ bool *keep = NULL;
	char **names = NULL;
	size_t nr = 0;
	int r = 0;

	if (!cfg)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", cfg->record_dir, name);
	top = trust_open_dir_path("record.dir", cfg->record_dir,
				  /* create= */ false, 0750, &err);
	if (top >= 0)
		dir = trust_open_dir_at(top, name, "record.dir", path,
					/* create= */ false, 0750, &err);
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
	keep = r ? NULL : calloc(nr, sizeof(*keep));
	if (!r && !keep)
		r = -ENOMEM;
	if (!r)
		r = scope_name(m, name, dir, names, nr, keep);
	for (size_t i = 0; !r && i < nr; i++) {
		if (!keep[i])
			continue;
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

static int merge(struct merge *m0, int argc, char **argv)
{
	_cleanup_json_ struct json_object *recordings = json_object_new_array();
	_cleanup_free_ struct footprint *fp = calloc(1, sizeof(*fp));
	struct merge m = *m0;
	int r;

	m.fp = fp;
	m.recordings = recordings;
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

enum { OPT_NAMESPACE = CLI_OPT_OWN, OPT_OWNER };

static int merge_run(const struct cli_command *cmd,
		     const struct cli_global *global, int argc, char **argv)
{
	struct merge m = { 0 };
	struct cli_parser p;
	int id;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0) {
		const char **list = id == OPT_OWNER ? m.owners : m.namespaces;
		int *nr = id == OPT_OWNER ? &m.nr_owners : &m.nr_namespaces;

		if (id != OPT_NAMESPACE && id != OPT_OWNER)
			continue;
		if (*nr == MERGE_NAMESPACES_MAX) {
			log_error("record merge: at most %d --%s",
				  MERGE_NAMESPACES_MAX,
				  id == OPT_OWNER ? "owner" : "namespace");
			return cli_exit(2);
		}
		list[(*nr)++] = p.value;
	}
	if (id)
		return cli_exit(id);
	m.config = p.config;
	return merge(&m, p.nr_operands, p.operand);
}

static const struct cli_option merge_options[] = {
	CLI_CONFIG,
	{ OPT_NAMESPACE, "namespace", "NS",
	  "take a NAME's recordings of namespace NS ('-' for none); repeat to merge several" },
	{ OPT_OWNER, "owner", "OWNER",
	  "take a NAME's recordings of pods of owner OWNER, as their names say it; repeat to merge several" },
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
		"different policies are refused. The record name is the pod's\n"
		"choice: a NAME whose recordings are of more than one namespace is\n"
		"refused unless --namespace names the ones to take, and one whose\n"
		"recordings are of pods of more than one owner unless --owner\n"
		"names those. A pod's owner is what its name says, as Kubernetes'\n"
		"controllers name their pods: web-7d4b9c8f6d-x2k9p (a Deployment's\n"
		"replica) and web-0 (a StatefulSet's) are of owner web; any other\n"
		"name is its own owner.\n",
	.options = merge_options,
	.run = merge_run,
};
