// SPDX-License-Identifier: GPL-2.0-only
/*
 * `preload`: run at install, at boot and whenever the operator config
 * changes (the systemd units and the DaemonSet do), so that prestart only
 * attaches. `preload --unpin` undoes it.
 */
#include <errno.h>
#include <stdio.h>

#include "commands.h"
#include "config.h"
#include "pin.h"
#include "preload.h"

struct preload_options {
	const char *config; /* --config, or NULL */
	bool json;
	bool unpin; /* --unpin: remove every pin instead */
};

static void print_result(const struct preload_options *opts,
			 const struct preload_result *res)
{
	if (opts->json) {
		printf("{\"pin_dir\": \"%s\", \"variants\": %d, \"programs\": %d, \"pinned\": %d, \"kept\": %d, \"unpinned\": %d, \"bypass_prot_mem_skipped\": %s, \"generic\": %d, \"generic_pinned\": %d, \"generic_unpinned\": %d}\n",
		       pin_dir(), res->policies, res->programs, res->pinned,
		       res->kept, res->unpinned,
		       res->bypass_skipped ? "true" : "false", res->generic,
		       res->generic_pinned, res->generic_unpinned);
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
	  "remove every pin instead (uninstall, or a node leaving the hook)" },
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
		"removed. Run at install, at boot and whenever the config changes.\n",
	.options = options,
	.run = run,
};
