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

static void print_result(const struct cmd_args *args,
			 const struct preload_result *res)
{
	if (args->json) {
		printf("{\"pin_dir\": \"%s\", \"variants\": %d, \"programs\": %d, \"pinned\": %d, \"kept\": %d, \"unpinned\": %d, \"bypass_prot_mem_skipped\": %s}\n",
		       pin_dir(), res->policies, res->programs, res->pinned,
		       res->kept, res->unpinned,
		       res->bypass_skipped ? "true" : "false");
		return;
	}
	if (args->unpin) {
		printf("unpinned %d program(s) from %s\n", res->unpinned,
		       pin_dir());
		return;
	}
	printf("preloaded %d program(s) for %d policy variant(s) in %s: %d pinned now, %d already pinned, %d unpinned\n",
	       res->programs, res->policies, pin_dir(), res->pinned, res->kept,
	       res->unpinned);
	if (res->bypass_skipped)
		printf("bypass-prot-mem variants not preloaded: this kernel lacks SK_BPF_BYPASS_PROT_MEM\n");
}

static int preload_config(const struct cmd_args *args,
			  struct preload_result *res, struct sh_error *err)
{
	struct sh_config cfg;
	int r = config_load(config_path(args->config), &cfg, err);

	if (r)
		return r;
	r = preload_run(&cfg, res, err);
	config_free(&cfg);
	return r;
}

int cmd_preload(const struct cmd_args *args)
{
	struct preload_result res;
	struct sh_error err = { 0 };
	int r;

	if (args->argc)
		r = error_set(&err, -EINVAL,
			      "preload takes no operands (try --help)");
	else
		r = args->unpin ? preload_unpin_all(&res, &err) :
				  preload_config(args, &res, &err);
	if (r) {
		error_report(&err, r);
		return r;
	}
	print_result(args, &res);
	return 0;
}
