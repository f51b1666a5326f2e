// SPDX-License-Identifier: GPL-2.0-only
/*
 * `preload`: run at install, at boot and whenever the operator config
 * changes (the systemd units and the DaemonSet do), so that prestart only
 * attaches. `preload --unpin` undoes it.
 */
#include <errno.h>
#include <stdio.h>

#include "cmd/commands.h"
#include "config/config.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "lib/kind.h"
#include "lib/log.h"
#include "prog/pin.h"
#include "prog/preload.h"

struct preload_options {
	const char *config; /* --config, or NULL */
	bool json;
	bool unpin; /* --unpin: remove every pin instead */
};

/* The static keys kept on (keys.h), as JSON members. */
static struct json_object *keys_json(const struct preload_result *res)
{
	struct json_object *o = json_object_new_object();
	struct json_object *kept = json_object_new_array();

	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (res->keys.kept[k])
			json_object_array_add(kept, json_object_new_string(
							    kind_get(k)->name));
	json_object_object_add(o, "kept", kept);
	jsonw_str(o, "cgroup", res->keys.cgroup[0] ? res->keys.cgroup : NULL);
	jsonw_str(o, "error", res->keys_error[0] ? res->keys_error : NULL);
	return o;
}

static void print_json(const struct preload_result *res)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();

	jsonw_str(o, "pin_dir", pin_dir());
	jsonw_int(o, "variants", res->policies);
	jsonw_int(o, "programs", res->programs);
	jsonw_int(o, "pinned", res->pinned);
	jsonw_int(o, "kept", res->kept);
	jsonw_int(o, "unpinned", res->unpinned);
	jsonw_bool(o, "bypass_prot_mem_skipped", res->bypass_skipped);
	json_object_object_add(o, "static_keys", keys_json(res));
	json_object_object_add(o, "generic", json_object_new_int(res->generic));
	json_object_object_add(o, "generic_pinned",
			       json_object_new_int(res->generic_pinned));
	json_object_object_add(o, "generic_unpinned",
			       json_object_new_int(res->generic_unpinned));
	puts(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void print_result(const struct preload_options *opts,
			 const struct preload_result *res)
{
	char kept[64];

	/* A warning on stderr in both forms: the pins are fine. */
	if (res->keys_error[0])
		log_warn("static keys not kept on: %s", res->keys_error);
	if (opts->json) {
		print_json(res);
		return;
	}
	if (opts->unpin) {
		printf("unpinned %d program(s) from %s\n", res->unpinned,
		       pin_dir());
		printf("unpinned %d generic program(s)\n",
		       res->generic_unpinned);
		return;
	}
	printf("preloaded %d program(s) for %d policy variant(s) in %s: %d pinned now, %d already pinned, %d unpinned\n",
	       res->programs, res->policies, pin_dir(), res->pinned, res->kept,
	       res->unpinned);
	if (res->bypass_skipped)
		printf("bypass-prot-mem variants not preloaded: this kernel lacks SK_BPF_BYPASS_PROT_MEM\n");
	printf("generic programs: %d pinned (%d now, %d unpinned): a policy that is not preloaded starts without loading\n",
	       res->generic, res->generic_pinned, res->generic_unpinned);
	keys_text(&res->keys, kept, sizeof(kept));
	if (res->keys.cgroup[0])
		printf("static keys kept on for %s (cgroup %s)\n", kept,
		       res->keys.cgroup);
}

static int preload_config(const struct preload_options *opts,
			  struct preload_result *res, struct sh_error *err)
{
	struct sh_config cfg;
	int r = config_load(config_path(opts->config), &cfg, err);

	if (r)
		return r;
	r = preload_run(&cfg, res, err);
	config_free(&cfg);
	return r;
}

static int preload(const struct preload_options *opts)
{
	struct preload_result res;
	struct sh_error err = { 0 };
	int r = opts->unpin ? preload_unpin_all(&res, &err) :
			      preload_config(opts, &res, &err);

	if (r) {
		error_report(&err, r);
		return r;
	}
	print_result(opts, &res);
	return 0;
}

enum { OPT_UNPIN = CLI_OPT_OWN };

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	struct preload_options opts = { 0 };
	struct cli_parser p;
	int id;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0)
		if (id == OPT_UNPIN)
			opts.unpin = true;
	if (id)
		return cli_exit(id);
	opts.config = p.config;
	opts.json = p.json;
	return preload(&opts);
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	CLI_JSON,
	{ OPT_UNPIN, "unpin", NULL,
	  "remove every pin and the keys cgroup instead (uninstall, or a node leaving the hook)" },
	{ 0 },
};

const struct cli_command cmd_preload_command = {
	.name = "preload",
	.summary = "load and pin every policy's programs ahead of time",
	.description =
		"Every (policy, bypass-prot-mem) variant the operator config can\n"
		"produce is loaded and pinned as <kind>-<policy hash> in the pin\n"
		"directory (/sys/fs/bpf/oci-sockopt-hook, or\n"
		"$OCI_SOCKOPT_HOOK_PIN_DIR); pins no policy needs any more are\n"
		"removed. With keep_keys (the default) the static keys of the\n"
		"attach types they use stay on, from a program that never runs on\n"
		"an empty cgroup of its own (oci-sockopt-hook.keys); --unpin\n"
		"removes it too. Run at install, at boot and whenever the config\n"
		"changes.\n",
	.options = options,
	.run = run,
};
