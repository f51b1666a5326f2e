// SPDX-License-Identifier: GPL-2.0-only
/*
 * `explain`: the dry run. The same resolution as prestart, from a bundle
 * or an OCI state, but it touches no kernel state and writes nothing:
 * the policy, where prestart would attach it, and what that means for
 * the processes a runtime starts later with exec.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/cg.h"
#include "cmd/commands.h"
#include "config/config.h"
#include "input/container.h"
#include "input/oci.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "policy/policy.h"

/* What the cgroup part says: two refusals and the text around them. */
#define EXPLAIN_TEXT_MAX (2 * SH_ERROR_MSG_MAX + 2 * PATH_MAX)

struct explain_options {
	const char *config; /* --config, or NULL */
	bool json;
	const char *bundle; /* --bundle DIR, or NULL: the state on stdin */
};

static int state_from_bundle(const char *dir, struct oci_state *st,
			     struct sh_error *err)
{
	_cleanup_free_ char *real = realpath(dir, NULL);
	_cleanup_json_ struct json_object *obj = json_object_new_object();
	const char *text;

	if (!real)
		return error_errno(err, -errno, "bundle %s", dir);
	jsonw_str(obj, "id", "explain");
	jsonw_str(obj, "bundle", real);
	text = json_object_to_json_string(obj);
	return oci_parse_state(text, strlen(text), st, err);
}

static int read_input(const struct explain_options *opts, struct oci_state *st,
		      struct sh_error *err)
{
	int r;

	if (opts->bundle)
		r = state_from_bundle(opts->bundle, st, err);
	else if (isatty(STDIN_FILENO))
		return error_set(
			err, -EINVAL,
			"explain needs --bundle DIR or an OCI state on stdin");
	else
		r = oci_read_state(STDIN_FILENO, st, err);
	if (r)
		return r;
	log_set_context("container %s", st->id);
	return st->bundle ? oci_load_bundle(st, err) : 0;
}

/*
 * prestart finds out by loading the bypass variant; a dry run must not
 * load anything, so it asks the per-netns sysctl that the same kernel
 * series added.
 */
static int check_kernel(const struct sh_config *cfg,
			const struct sh_effective *eff, struct sh_error *err)
{
	char src[SH_SOURCE_TEXT_MAX];

	if (!eff->bypass ||
	    access("/proc/sys/net/core/bypass_prot_mem", F_OK) == 0)
		return 0;
	policy_source_text(eff, /* bypass= */ true, src, sizeof(src));
	if (cfg->on_unsupported == ON_UNSUPPORTED_WARN) {
		log_warn(
			"bypass-prot-mem is requested (by %s) but this kernel lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19): the container would start without it",
			src);
		return 0;
	}
	return error_set(
		err, -EOPNOTSUPP,
		"bypass-prot-mem is requested (by %s) but this kernel lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19): prestart would refuse the container (on_unsupported is 'fail')",
		src);
}

static void add_choice(struct json_object *o, const char *rel, int choice)
{
	jsonw_str(o, "path", rel);
	jsonw_bool(o, "hook_creates", choice == CG_MAKE_OWN);
	json_object_object_add(
		o, "exec_policed",
		choice < 0 ? NULL :
			     json_object_new_boolean(choice == CG_USE_OWN));
}

/* The runtime's pid is known: look at its cgroup. */
static int decide_now(const struct sh_config *cfg, const struct oci_state *st,
		      struct json_object *o, struct sh_error *err)
{
	char text[EXPLAIN_TEXT_MAX];
	struct cg_root root;
	struct cg_target t;
	bool dedicated;
	int fd, choice;

	if (cg_find_root(&root, err))
		return err->code;
	fd = cg_locate(&root, st->pid, &t, &dedicated, err);
	if (fd < 0)
		return fd;
	close(fd);
	choice = cg_choice_decide(cfg, st, root.mount, t.rel, dedicated, err);
	add_choice(o, t.rel, choice);
	if (choice == CG_USE_OWN)
		snprintf(
			text, sizeof(text),
			"%s, the container's own: the policy attaches there, and processes started with exec join it",
			t.rel);
	else if (choice == CG_MAKE_OWN)
		snprintf(
			text, sizeof(text),
			"%s is not the container's own: the hook would create %s/%s%s and move the init there; processes started with exec stay outside it, NOT policed (on_shared_cgroup \"refuse\" refuses such containers)",
			t.rel, t.rel[1] ? t.rel : "", SH_CGROUP_PREFIX, st->id);
	else
		snprintf(text, sizeof(text), "%s: prestart would refuse",
			 t.rel);
	jsonw_str(o, "text", text);
	return choice < 0 ? choice : 0;
}

/* Only the bundle: say what prestart decides, either way. */
static int decide_later(const struct sh_config *cfg, const struct oci_state *st,
			struct json_object *o, struct sh_error *err)
{
	struct sh_error own_err = { 0 }, make_err = { 0 }, none = { 0 };
	char text[EXPLAIN_TEXT_MAX];
	const char *mount = "/sys/fs/cgroup";
	struct cg_root root;
	int own, make;

	if (cg_find_root(&root, &none) == 0)
		mount = root.mount;
	own = cg_choice_decide(cfg, st, mount, "<cgroup>",
			       /* dedicated= */ true, &own_err);
	make = cg_choice_decide(cfg, st, mount, "<cgroup>",
				/* dedicated= */ false, &make_err);
	jsonw_str(o, "path", NULL);
	jsonw_str(o, "hook_creates", NULL);
	jsonw_str(o, "exec_policed", NULL);
	snprintf(
		text, sizeof(text),
		"decided at prestart: in a cgroup the runtime made for the container, %s; in one it shares (a runtime without a cgroup manager), %s%s",
		own < 0 ?
			"prestart would refuse" :
			"the policy attaches there, and processes started with exec join it",
		make < 0 ?
			"prestart would refuse: " :
			"the hook creates <cgroup>/" SH_CGROUP_PREFIX
			"<id> and moves the init there, and processes started with exec are NOT policed",
		make < 0 ? make_err.msg : "");
	jsonw_str(o, "text", text);
	if (own < 0 && make < 0)
		*err = own_err;
	return own < 0 && make < 0 ? -EPERM : 0;
}

/*
 * Adds "cgroup" to desc: where prestart would attach (from the state's
 * pid, or both cases from the bundle alone) and whether processes started
 * with exec would be policed.
 */
static int explain_cgroup(const struct sh_config *cfg,
			  const struct oci_state *st, struct json_object *desc,
			  struct sh_error *err)
{
	struct json_object *o = json_object_new_object();
	int r = st->pid > 0 ? decide_now(cfg, st, o, err) :
			      decide_later(cfg, st, o, err);

	json_object_object_add(desc, "cgroup", o);
	return r;
}

/* A policy refusal has no effective policy to show; a kernel one has. */
static void print_result(const struct explain_options *opts,
			 const char *cfg_path, const struct oci_state *st,
			 const struct sh_effective *eff, struct json_object *o,
			 int policy_r, const char *refused)
{
	jsonw_str(o, "container", st->id);
	jsonw_str(o, "config", cfg_path);
	jsonw_str(o, "refused", refused);
	if (opts->json) {
		puts(json_object_to_json_string_ext(
			o, JSON_C_TO_STRING_PRETTY |
				   JSON_C_TO_STRING_NOSLASHESCAPE));
		return;
	}
	printf("container: %s\nconfig: %s\n", st->id, cfg_path);
	if (!policy_r && eff->sandbox)
		printf("pod sandbox container: %s\n",
		       eff->policy ?
			       "it gets sandbox_policy; annotations (the pod's) are not read" :
			       "not policed (sandbox_policy is \"\")");
	if (!policy_r)
		policy_describe_text(o);
	if (refused)
		printf("refused: %s\n", refused);
}

/* What prestart checks after the policy: the annotations it requires, the
 * kernel, and (when it attaches anything) the cgroup. */
static int explain_checks(const struct sh_config *cfg,
			  const struct sh_container *c,
			  const struct sh_effective *eff,
			  const struct oci_state *st, struct json_object *desc,
			  struct sh_error *err)
{
	int r = policy_require_check(cfg, c, err);

	if (r)
		return r;
	r = check_kernel(cfg, eff, err);
	if (r)
		return r;
	if (policy_is_empty(eff))
		return 0;
	return explain_cgroup(cfg, st, desc, err);
}

/* Everything but the config: the verdict on one container. */
static int explain_container(const struct explain_options *opts,
			     const char *path, const struct sh_config *cfg,
			     struct oci_state *st, struct sh_error *err)
{
	_cleanup_json_ struct json_object *desc = NULL;
	char refused[SH_LOG_LINE_MAX];
	struct sh_effective eff;
	struct sh_container c;
	int r = read_input(opts, st, err), policy_r;

	if (r)
		return r;
	container_read(st, &c);
	policy_r = policy_resolve(cfg, &c, &eff, err);
	desc = policy_r ? json_object_new_object() : policy_describe(&eff);
	r = policy_r ?: explain_checks(cfg, &c, &eff, st, desc, err);
	/* The same line as on stderr. */
	log_line(refused, sizeof(refused), error_text(err, r));
	print_result(opts, path, st, &eff, desc, policy_r, r ? refused : NULL);
	return r;
}

static int explain(const struct explain_options *opts)
{
	const char *path = config_path(opts->config);
	struct sh_error err = { 0 };
	struct oci_state st = { 0 };
	struct sh_config cfg;
	int r = config_load(path, &cfg, &err);

	if (r)
		goto out;
	r = explain_container(opts, path, &cfg, &st, &err);
	oci_state_free(&st);
	config_free(&cfg);
out:
	if (r)
		error_report(&err, r);
	return r;
}

enum { OPT_BUNDLE = CLI_OPT_OWN };

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	struct explain_options opts = { 0 };
	struct cli_parser p;
	int id;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0)
		if (id == OPT_BUNDLE)
			opts.bundle = p.value;
	if (id)
		return cli_exit(id);
	opts.config = p.config;
	opts.json = p.json;
	return explain(&opts);
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	CLI_JSON,
	{ OPT_BUNDLE, "bundle", "DIR",
	  "the container's bundle (its config.json), instead of an OCI state "
	  "on stdin" },
	{ 0 },
};

const struct cli_command cmd_explain_command = {
	.name = "explain",
	.summary = "dry run: a container's effective policy, and where it goes",
	.description =
		"The container comes from --bundle DIR, or from an OCI state on\n"
		"stdin. The same resolution as prestart (annotations, pod identity,\n"
		"the operator config's defaults, require_annotations, the kernel's\n"
		"features, the cgroup), but nothing is attached or written. Exit 1\n"
		"when prestart would refuse the container, with the reason.\n",
	.options = options,
	.run = run,
};
