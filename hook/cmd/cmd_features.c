// SPDX-License-Identifier: GPL-2.0-only
/*
 * `features`: this node's capabilities as node labels, for Node Feature
 * Discovery's "local" source (a file in its features.d directory) or on
 * stdout. The DaemonSet rewrites the file every 15 s with an expiry time,
 * so a node whose agent died loses its labels and new pods that need the
 * hook stop landing there.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>

#include "cmd/commands.h"
#include "config/config.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "prog/load.h"
#include "wiring/wiring_status.h"

#define FEATURES_PREFIX "sockopt-hook.io/"
#define FEATURES_KEY_MAX 320
/* nfd-worker reads features.d every 60 s by default: an agent that missed
 * several 15 s rounds is gone. */
#define FEATURES_EXPIRY_SEC 300
#define FEATURES_TIME_MAX 32
#define FEATURES_FILE_MAX 65536 /* NFD skips larger feature files */

struct features {
	struct json_object *labels; /* key -> "true" / "false", in order */
	struct wiring_state wiring;
	char expiry[FEATURES_TIME_MAX]; /* RFC 3339, UTC */
	int skipped;
};

/*
 * Kubernetes label keys and values (apimachinery's IsQualifiedName and
 * IsValidLabelValue): a node label the API server would refuse makes
 * nfd-master drop the whole update, so `features` checks before writing.
 */
#define LABEL_NAME_MAX 63
#define LABEL_PREFIX_MAX 253

static bool alnum(char c)
{
	return isascii((unsigned char)c) && isalnum((unsigned char)c);
}

/* 1 to 63 bytes of [A-Za-z0-9._-], alphanumeric at both ends. */
static bool name_valid(const char *s, size_t len)
{
	if (len < 1 || len > LABEL_NAME_MAX || !alnum(s[0]) ||
	    !alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!alnum(s[i]) && !strchr("-_.", s[i]))
			return false;
	return true;
}

/* One part of a DNS-1123 subdomain: [a-z0-9-], alphanumeric at both ends. */
static bool dns_label_valid(const char *s, size_t len)
{
	if (len < 1 || !alnum(s[0]) || !alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((!alnum(s[i]) && s[i] != '-') ||
		    isupper((unsigned char)s[i]))
			return false;
	return true;
}

static bool subdomain_valid(const char *s, size_t len)
{
	size_t start = 0;

	if (len < 1 || len > LABEL_PREFIX_MAX)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (!dns_label_valid(s + start, i - start))
			return false;
		start = i + 1;
	}
	return true;
}

bool cmd_features_label_valid(const char *key)
{
	const char *slash = strchr(key, '/');

	if (!slash)
		return name_valid(key, strlen(key));
	return subdomain_valid(key, slash - key) &&
	       name_valid(slash + 1, strlen(slash + 1));
}

bool cmd_features_label_value_valid(const char *value)
{
	return !*value || name_valid(value, strlen(value));
}

static int add_label(struct features *f, const char *key, bool value)
{
	if (!cmd_features_label_valid(key)) {
		log_warn(
			"features: '%s' is not a valid Kubernetes label key, skipped",
			key);
		f->skipped++;
		return 0;
	}
	return json_object_object_add(f->labels, key,
				      json_object_new_string(value ? "true" :
								     "false")) ?
		       -ENOMEM :
		       0;
}

/* One label per policy that annotations may choose: a pod asking for it
 * can select the nodes whose config offers it. */
static int add_policies(struct features *f, const struct sh_config *cfg)
{
	char key[FEATURES_KEY_MAX];
	int r = 0;

	for (size_t i = 0; i < cfg->nr_allowed && !r; i++) {
		snprintf(key, sizeof(key), FEATURES_PREFIX "policy.%s",
			 cfg->allowed_policies[i]);
		r = add_label(f, key, /* value= */ true);
	}
	return r;
}

static bool kernel_bypass(void)
{
	int r;

	r = load_probe_bypass();
	if (r < 0)
		log_warn(
			"features: cannot tell whether this kernel has SK_BPF_BYPASS_PROT_MEM (%s): labelled false",
			strerror(-r));
	return r == 1;
}

#define FEATURES_MAX_HOOKS_DIRS 8

struct features_options {
	const char *config; /* --config, or NULL */
	bool json;
	const char *nfd_file; /* --nfd-file FILE, or NULL: stdout */
	const char *containerd_config; /* --ctd-config, or NULL */
	const char *hooks_dirs[FEATURES_MAX_HOOKS_DIRS]; /* --hooks-dir */
	int nr_hooks_dirs;
};

static int add_labels(struct features *f, const struct sh_config *cfg)
{
	int r = add_label(f, FEATURES_PREFIX "installed", f->wiring.installed);

	if (r)
		return r;
	r = add_label(f, FEATURES_PREFIX "bypass-prot-mem",
		      kernel_bypass() && f->wiring.bypass_handler);
	if (r)
		return r;
	r = add_label(f, FEATURES_PREFIX "nri", f->wiring.nri);
	if (r)
		return r;
	return add_policies(f, cfg);
}

static int collect(const struct features_options *opts, struct features *f,
		   struct sh_error *err)
{
	struct sh_config cfg;
	time_t t = time(NULL) + FEATURES_EXPIRY_SEC;
	struct tm tm;
	int r = config_load(config_path(opts->config), &cfg, err);

	if (r)
		return r;
	f->labels = json_object_new_object();
	/* RuntimeClass sockopt's pods fail where the runtime lacks its
	 * handler: installed only with the wiring, bypass with its handler. */
	wiring_status_check(&f->wiring, opts->containerd_config,
			    opts->hooks_dirs, opts->nr_hooks_dirs);
	if (!f->wiring.installed)
		log_warn("features: sockopt-hook.io/installed=false: %s",
			 f->wiring.why);
	r = f->labels ? add_labels(f, &cfg) : -ENOMEM;
	config_free(&cfg);
	if (r)
		return error_set(err, r, "features: out of memory");
	gmtime_r(&t, &tm);
	strftime(f->expiry, sizeof(f->expiry), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return 0;
}

/* NFD's local source format: `key=value` lines after the directive. */
static char *render(const struct features *f, bool directive)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		return NULL;
	fprintf(out, "# Written by `" SH_IDENT " features`.\n");
	if (directive)
		fprintf(out, "# +expiry-time=%s\n", f->expiry);
	json_object_object_foreach(f->labels, key, val)
		fprintf(out, "%s=%s\n", key, json_object_get_string(val));
	if (fclose(out)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The directory of --nfd-file, opened before any work, so that a wrong
 * path is the one line the command prints; *base points into path. */
static int open_target(const char *path, const char **base,
		       struct sh_error *err)
{
	_cleanup_free_ char *dir_copy = strdup(path);
	const char *slash = strrchr(path, '/');
	int dir;

	if (!dir_copy)
		return error_set(err, -ENOMEM, "features: out of memory");
	*base = slash ? slash + 1 : path;
	if (!**base || **base == '.')
		return error_set(
			err, -EINVAL,
			"--nfd-file %.128s: need a file name that does not start with '.' (NFD skips those)",
			path);
	dir = open(dirname(dir_copy), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return error_errno(
			err, -errno,
			"cannot open the directory of --nfd-file %.128s", path);
	return dir;
}

static struct json_object *wiring_json(const struct wiring_state *w)
{
	struct json_object *o = json_object_new_object();

	jsonw_bool(o, "containerd", w->containerd);
	jsonw_bool(o, "hooks_d", w->hooksd);
	jsonw_bool(o, "bypass_handler", w->bypass_handler);
	jsonw_bool(o, "nri", w->nri);
	jsonw_str(o, "nri_runtime", w->nri_runtime[0] ? w->nri_runtime : NULL);
	jsonw_str(o, "missing", w->why[0] ? w->why : NULL);
	return o;
}

static void print_json(const struct features *f, const char *file)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();

	json_object_object_add(o, "labels", json_object_get(f->labels));
	jsonw_int(o, "skipped", f->skipped);
	json_object_object_add(o, "wiring", wiring_json(&f->wiring));
	jsonw_str(o, "nfd_file", file);
	jsonw_str(o, "expiry_time", file ? f->expiry : NULL);
	puts(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static int write_labels(const struct features_options *opts, struct features *f,
			struct sh_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int dir = -1;
	const char *base = NULL;
	int r;

	if (opts->nfd_file) {
		dir = open_target(opts->nfd_file, &base, err);
		if (dir < 0)
			return dir;
	}
	r = collect(opts, f, err);
	if (r)
		return r;
	text = render(f, opts->nfd_file != NULL);
	if (!text || strlen(text) >= FEATURES_FILE_MAX)
		return error_set(err, text ? -EFBIG : -ENOMEM,
				 "features: cannot render the label file");
	r = dir < 0 ? 0 : fileio_replace_at(dir, base, text, strlen(text));
	if (r)
		return error_errno(err, r, "cannot write --nfd-file %.128s",
				   opts->nfd_file);
	if (opts->json)
		print_json(f, opts->nfd_file);
	else if (opts->nfd_file)
		printf("wrote %d label(s) to %s, expiring at %s\n",
		       json_object_object_length(f->labels), opts->nfd_file,
		       f->expiry);
	else
		fputs(strchr(text, '\n') + 1, stdout); /* past the comment */
	return 0;
}

static int features(const struct features_options *opts)
{
	struct features f = { 0 };
	struct sh_error err = { 0 };
	int r = write_labels(opts, &f, &err);

	if (f.labels)
		json_object_put(f.labels);
	if (r)
		error_report(&err, r);
	return r;
}

enum { OPT_NFD_FILE = CLI_OPT_OWN, OPT_CONTAINERD_CONFIG, OPT_HOOKS_DIR };

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	struct features_options opts = { 0 };
	struct cli_parser p;
	int id;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0) {
		if (id == OPT_NFD_FILE) {
			opts.nfd_file = p.value;
		} else if (id == OPT_CONTAINERD_CONFIG) {
			opts.containerd_config = p.value;
		} else if (opts.nr_hooks_dirs == FEATURES_MAX_HOOKS_DIRS) {
			cli_usage_error(cmd, "at most %d --hooks-dir options",
					FEATURES_MAX_HOOKS_DIRS);
			return CMD_USAGE;
		} else {
			opts.hooks_dirs[opts.nr_hooks_dirs++] = p.value;
		}
	}
	if (id)
		return cli_exit(id);
	opts.config = p.config;
	opts.json = p.json;
	return features(&opts);
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	CLI_JSON,
	{ OPT_NFD_FILE, "nfd-file", "FILE",
	  "replace FILE atomically, in Node Feature Discovery's local-source "
	  "format with an expiry time, instead of printing the labels" },
	{ OPT_CONTAINERD_CONFIG, "ctd-config", "FILE",
	  "containerd's main config, for whether it runs the hook (else "
	  "/etc/containerd/config.toml)" },
	{ OPT_HOOKS_DIR, "hooks-dir", "DIR",
	  "where a hooks.d file of ours counts as the wiring, instead of "
	  "/usr/share/containers/oci/hooks.d and /etc/containers/oci/hooks.d; "
	  "repeatable" },
	{ 0 },
};

const struct cli_command cmd_features_command = {
	.name = "features",
	.summary = "node labels for Node Feature Discovery",
	.description =
		"sockopt-hook.io/installed=true only while the node's runtime runs\n"
		"the hook (where containerd is on PATH: its config dump has the\n"
		"handler sockopt and it started after its spec was written; else a\n"
		"hooks.d file of ours, and CRI-O's handler where crio runs),\n"
		"sockopt-hook.io/bypass-prot-mem (the kernel probe, and the handler\n"
		"sockopt-bypass), sockopt-hook.io/nri (the NRI plugin registered\n"
		"now), and sockopt-hook.io/policy.<name>=true for each\n"
		"policy the operator config's annotations.allow_policies lists;\n"
		"printed, or with --nfd-file written for NFD, expiring five minutes\n"
		"ahead (the DaemonSet rewrites it every 15 s). What wiring is\n"
		"missing is a warning, and wiring.missing in --json.\n",
	.options = options,
	.run = run,
};
