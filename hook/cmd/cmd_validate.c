// SPDX-License-Identifier: GPL-2.0-only
/*
 * `validate`: is the operator config valid, and will its defaults reach
 * every container? defaults.policy and defaults.bypass_prot_mem apply
 * only where the runtime runs the hook, and a hooks.d file that runs it
 * only for annotated containers leaves every other container without
 * them: a warning, since the config itself is valid.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "config/config.h"
#include "config/families.h"
#include "config/lint.h"
#include "input/container.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "lib/sh_types.h"
#include "policy/sysctl.h"
#include "wiring/wiring_hooksd.h"
#include "wiring/wiring.h"
#include "wiring/wiring_cdi.h"

#define MAX_HOOKS_DIRS 16 /* --hooks-dir options */
#define MAX_DIRS (MAX_HOOKS_DIRS + 3) /* and the three standard ones */
#define DEFAULTS_TEXT_MAX \
	(sizeof("defaults.policy '' and bypass_prot_mem") + SH_POLICY_NAME_MAX)
#define DIRS_TEXT_MAX 512 /* the list of hooks.d directories, cut short */

struct validate_options {
	const char *path; /* the config to check */
	bool json;
	const char *hooks_dirs[MAX_HOOKS_DIRS]; /* --hooks-dir DIR... */
	int nr_hooks_dirs;
};

static void add_dir(const char **dirs, size_t *nr, const char *dir)
{
	for (size_t i = 0; i < *nr; i++)
		if (!strcmp(dirs[i], dir))
			return;
	dirs[(*nr)++] = dir;
}

static size_t hooks_dirs(const struct validate_options *opts, const char **dirs)
{
	size_t nr = 0;

	add_dir(dirs, &nr, SH_HOOKSD_SYSTEM);
	add_dir(dirs, &nr, SH_HOOKSD_ETC);
	add_dir(dirs, &nr, SH_HOOKSD_PREFIX);
	for (int i = 0; i < opts->nr_hooks_dirs; i++)
		add_dir(dirs, &nr, opts->hooks_dirs[i]);
	return nr;
}

static void describe_defaults(const struct sh_config *cfg, char *buf,
			      size_t len)
{
	if (cfg->default_policy)
		snprintf(buf, len, "defaults.policy '%s'%s",
			 cfg->default_policy,
			 cfg->default_bypass ? " and bypass_prot_mem" : "");
	else
		snprintf(buf, len, "defaults.bypass_prot_mem");
}

static void join_dirs(const char **dirs, size_t nr, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nr && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 dirs[i]);
}

/* Adds to w what keeps the defaults from every container. */
static void check_hooksd(const struct validate_options *opts, const char *path,
			 const struct sh_config *cfg, struct lint_warnings *w)
{
	const char *dirs[MAX_DIRS];
	size_t nr = hooks_dirs(opts, dirs);
	struct hooksd_report rep;
	char what[DEFAULTS_TEXT_MAX], list[DIRS_TEXT_MAX];

	if (!cfg->default_policy && !cfg->default_bypass)
		return;
	wiring_hooksd_scan(dirs, nr, &rep);
	describe_defaults(cfg, what, sizeof(what));
	if (rep.nr_narrow)
		lint_add(
			w,
			"the defaults of %s (%s) will not reach unannotated containers: %s%s does not run the hook for every container (install the \"when\": {\"always\": true} hooks.d file, as `make install` does for a config with defaults)",
			path, what, rep.narrow,
			rep.nr_narrow > 2 ? " and more" : "");
	else if (!rep.found && opts->nr_hooks_dirs > 0) {
		join_dirs(dirs, nr, list, sizeof(list));
		lint_add(
			w,
			"the defaults of %s (%s) apply only to containers whose runtime config runs the hook: no hooks.d file for %s in %s",
			path, what, SH_IDENT, list);
	}
}

/* require_annotations needs the hook to run for unannotated containers of
 * its handlers: hooks.d files that run it only for annotated ones never
 * show it those (containerd's base_runtime_spec hooks run for every
 * container of the handler, whatever the annotations). */
static void check_require_hooksd(const struct validate_options *opts,
				 const char *path, const struct sh_config *cfg,
				 struct lint_warnings *w)
{
	const char *dirs[MAX_DIRS];
	size_t nr = hooks_dirs(opts, dirs);
	struct hooksd_report rep;

	if (!cfg->require.nr_handlers)
		return;
	wiring_hooksd_scan(dirs, nr, &rep);
	if (rep.found > rep.nr_narrow || rep.nr_handler || !rep.found)
		return;
	lint_add(
		w,
		"require_annotations of %s will not see unannotated containers where hooks.d files run the hook (podman, CRI-O, NRI): %s%s run it only for annotated ones (install the \"when\": {\"always\": true} file, or one whose when.annotations matches %s)",
		path, rep.narrow, rep.nr_narrow > 2 ? " and more" : "",
		SH_ANNOTATION_HANDLER);
}

static void join_handlers(const struct sh_config *cfg, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < cfg->require.nr_handlers && used < len; i++)
		used += snprintf(buf + used, len - used, "%s'%s'",
				 i ? ", " : "", cfg->require.handlers[i]);
}

/* What require_annotations does, in one line after "valid". */
static void print_require(const struct sh_config *cfg)
{
	char list[DIRS_TEXT_MAX];
	const char *action =
		cfg->require.on_missing == ON_MISSING_REFUSE ?
			"refused at prestart (on_missing 'refuse')" :
			"started with a warning in the log (on_missing 'warn')";

	if (cfg->require.nri)
		printf("require_annotations.nri: a Kubernetes workload container without %s (the NRI plugin did not handle it) is %s\n",
		       SH_ANNOTATION_NRI, action);
	if (!cfg->require.nr_handlers)
		return;
	join_handlers(cfg, list, sizeof(list));
	printf("require_annotations: a Kubernetes container (not a pod sandbox) whose %s is %s and which carries no sockopt-hook.io/ policy annotation is %s\n",
	       SH_ANNOTATION_HANDLER, list,
	       cfg->require.on_missing == ON_MISSING_REFUSE ?
		       "refused at prestart (on_missing 'refuse')" :
		       "started with a warning in the log (on_missing 'warn')");
}

static void print_sandbox(const struct sh_config *cfg)
{
	const struct sh_policy *p = cfg->sandbox_policy;

	if (!p)
		printf("sandbox_policy: pod sandboxes (pause containers) are not policed\n");
	else
		printf("sandbox_policy: pod sandboxes (pause containers) get '%s'%s\n",
		       p->name,
		       strcmp(p->name, SH_SANDBOX_BUILTIN) ?
			       "" :
			       " (built in: no AF_INET or AF_INET6 socket)");
}

static struct json_object *require_json(const struct sh_config *cfg)
{
	struct json_object *o, *list;

	if (!cfg->require.nr_handlers && !cfg->require.nri)
		return NULL;
	o = json_object_new_object();
	list = json_object_new_array();
	for (size_t i = 0; i < cfg->require.nr_handlers; i++)
		json_object_array_add(
			list, json_object_new_string(cfg->require.handlers[i]));
	json_object_object_add(o, "runtime_handlers", list);
	jsonw_str(o, "on_missing",
		  cfg->require.on_missing == ON_MISSING_REFUSE ? "refuse" :
								 "warn");
	jsonw_str(o, "handler_annotation", SH_ANNOTATION_HANDLER);
	jsonw_bool(o, "nri", cfg->require.nri);
	jsonw_str(o, "nri_annotation", SH_ANNOTATION_NRI);
	return o;
}

static void print_warnings(const struct lint_warnings *w)
{
	for (int i = 0; i < w->nr; i++)
		log_warn("%s", w->text[i]);
	if (w->dropped)
		log_warn("and %d more warning(s)", w->dropped);
}

static void add_device_json(const char *name, void *arg)
{
	json_object_array_add(arg, json_object_new_string(name));
}

static void print_json(const char *path, int r, const struct sh_error *err,
		       const struct sh_config *cfg,
		       const struct lint_warnings *w)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	struct json_object *list = json_object_new_array();
	const char *where = err->path;

	jsonw_str(o, "config", path);
	jsonw_bool(o, "valid", !r);
	jsonw_str(o, "path", r && *where ? where : NULL);
	jsonw_str(o, "error", r ? error_text(err, r) : NULL);
	/* Whether the config needs a hooks.d file that runs for every
	 * container; `make install` picks the hooks.d file from it. */
	json_object_object_add(
		o, "has_defaults",
		r ? NULL :
		    json_object_new_boolean(cfg->default_policy ||
					    cfg->default_bypass));
	json_object_object_add(o, "require_annotations",
			       r ? NULL : require_json(cfg));
	json_object_object_add(
		o, "sandbox_policy",
		r || !cfg->sandbox_policy ?
			NULL :
			json_object_new_string(cfg->sandbox_policy->name));
	if (!r) {
		struct json_object *devices = json_object_new_array();

		wiring_cdi_devices(cfg, add_device_json, NULL, devices);
		json_object_object_add(o, "cdi_devices", devices);
	} else {
		json_object_object_add(o, "cdi_devices", NULL);
	}
	for (int i = 0; i < w->nr; i++)
		json_object_array_add(list, json_object_new_string(w->text[i]));
	json_object_object_add(o, "warnings", list);
	puts(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void warn_skipped(const char *policy, const char *why, void *arg)
{
	lint_add(
		arg,
		"policy '%s' in annotations.allow_policies gets no CDI device (%s): a workload can name it by annotation only",
		policy, why);
}

/* A spec of ours in dir for this config that offers other devices than
 * the config gives now: a runtime would inject a device the hook then
 * refuses, or lack one a workload may ask for. */
static void check_cdi_spec(const char *path, const struct sh_config *cfg,
			   const char *dir, struct lint_warnings *w)
{
	_cleanup_free_ char *text = NULL, *hook = NULL;
	char file[PATH_MAX], *env[8] = { NULL };
	size_t n = strlen(SH_CONFIG_ENV "=");
	const char *config = SH_DEFAULT_CONFIG;
	int nr_env = 0, r;

	snprintf(file, sizeof(file), "%s/" SH_CDI_SPEC_NAME, dir);
	text = wiring_read(file, &r);
	if (r || !wiring_cdi_is_ours(text) ||
	    wiring_cdi_hook_of(text, &hook, env, 8, &nr_env))
		return;
	for (int i = 0; i < nr_env; i++)
		if (!strncmp(env[i], SH_CONFIG_ENV "=", n))
			config = env[i] + n;
	if (!strcmp(config, path) && !wiring_cdi_same_devices(text, cfg))
		lint_add(
			w,
			"%s offers other CDI devices than %s gives now: run `oci-sockopt-hook cdi refresh` (the preload unit does when the config changes)",
			file, path);
	for (int i = 0; i < nr_env; i++)
		free(env[i]);
}

static void check_cdi(const char *path, const struct sh_config *cfg,
		      struct lint_warnings *w)
{
	wiring_cdi_devices(cfg, NULL, warn_skipped, w);
	check_cdi_spec(path, cfg, SH_CDI_ETC, w);
	check_cdi_spec(path, cfg, SH_CDI_RUN, w);
}

static void print_device(const char *name, void *arg)
{
	int *n = arg;

	printf("%s" SH_CDI_KIND "=%s", (*n)++ ? ", " : "", name);
}

static void print_cdi(const struct sh_config *cfg)
{
	int n = 0;

	printf("CDI devices (`cdi generate`): ");
	wiring_cdi_devices(cfg, print_device, NULL, &n);
	printf("%s\n", n ? "" : "none");
}

/* log_format changes log_file only: without one it does nothing. */
static void check_logging(const struct sh_config *cfg, struct lint_warnings *w)
{
	if (cfg->log_format == LOG_FORMAT_JSON && !cfg->log_file)
		lint_add(
			w,
			"log_format is 'json' but no log_file is set: it changes log_file only (stderr and syslog stay text; audit events go to journald with their fields)");
}

/* The kernel, not the config: but every policy misses these sockets. */
static void check_families(struct lint_warnings *w)
{
	struct family_seen seen[FAMILIES_MAX];
	char text[SH_LINT_TEXT_MAX];

	families_probe(seen);
	families_warning(seen, text, sizeof(text));
	if (text[0])
		lint_add(w, "%s", text);
}

/* The node's autotuning ceilings against the buffer clamps. */
static void check_autotuning(const struct sh_config *cfg,
			     struct lint_warnings *w)
{
	long long rmem[3] = { 0 }, wmem[3] = { 0 };

	if (sysctl_node_ints("net.ipv4.tcp_rmem", rmem, 3) != 3)
		rmem[2] = 0;
	if (sysctl_node_ints("net.ipv4.tcp_wmem", wmem, 3) != 3)
		wmem[2] = 0;
	lint_autotuning(cfg, rmem[2], wmem[2], w);
}

static int validate(const struct validate_options *opts)
{
	const char *path = opts->path;
	struct lint_warnings w = { 0 };
	struct sh_error err = { 0 };
	struct sh_config cfg;
	int r = config_load(path, &cfg, &err);

	if (r) {
		error_report(&err, r);
		if (opts->json)
			print_json(path, r, &err, &cfg, &w);
		return r;
	}
	check_hooksd(opts, path, &cfg, &w);
	check_require_hooksd(opts, path, &cfg, &w);
	lint_policies(&cfg, &w);
	check_autotuning(&cfg, &w);
	check_logging(&cfg, &w);
	check_cdi(path, &cfg, &w);
	check_families(&w);
	print_warnings(&w);
	if (opts->json) {
		print_json(path, 0, &err, &cfg, &w);
	} else {
		printf("%s: valid (%zu policies)\n", path, cfg.nr_policies);
		print_require(&cfg);
		print_sandbox(&cfg);
		print_cdi(&cfg);
	}
	config_free(&cfg);
	return 0;
}

enum { OPT_HOOKS_DIR = CLI_OPT_OWN };

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	struct validate_options opts = { 0 };
	struct cli_parser p;
	int id;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0) {
		if (id != OPT_HOOKS_DIR)
			continue;
		if (opts.nr_hooks_dirs == MAX_HOOKS_DIRS) {
			cli_usage_error(cmd, "at most %d --hooks-dir options",
					MAX_HOOKS_DIRS);
			return CMD_USAGE;
		}
		opts.hooks_dirs[opts.nr_hooks_dirs++] = p.value;
	}
	if (id)
		return cli_exit(id);
	opts.path = p.nr_operands ? p.operand[0] : config_path(p.config);
	opts.json = p.json;
	return validate(&opts);
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	CLI_JSON,
	{ OPT_HOOKS_DIR, "hooks-dir", "DIR",
	  "also look for the hook's hooks.d file in DIR (up to 16 times)" },
	{ 0 },
};

const struct cli_command cmd_validate_command = {
	.name = "validate",
	.operands = "[CONFIG]",
	.max_operands = 1,
	.summary = "check an operator config",
	.description =
		"CONFIG, else the config --config names. Errors name the JSON path,\n"
		"with \"did you mean\" hints. Warns when\n"
		"the config's defaults will not reach every container: a hooks.d\n"
		"file (in the standard directories and each --hooks-dir) that runs\n"
		"the hook only for annotated containers; when sandbox_policy leaves\n"
		"pod sandboxes open; when the kernel offers socket families whose\n"
		"TCP/UDP no cgroup program sees.\n",
	.options = options,
	.run = run,
};
