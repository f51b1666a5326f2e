// SPDX-License-Identifier: GPL-2.0-only
/*
 * `preload`: run at install, at boot and whenever the operator config
 * changes (the systemd units and the DaemonSet do), so that prestart only
 * attaches. `preload --unpin` undoes it.
 */
#include <errno.h>
#include <stdio.h>

#include "cleanup.h"
#include "commands.h"
#include "config.h"
#include "log.h"
#include "pin.h"
#include "preload.h"

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
	json_object_object_add(
		o, "cgroup",
		res->keys.cgroup[0] ? json_object_new_string(res->keys.cgroup) :
				      NULL);
	json_object_object_add(o, "error",
			       res->keys_error[0] ?
				       json_object_new_string(res->keys_error) :
				       NULL);
	return o;
}

static void print_json(const struct preload_result *res)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();

	json_object_object_add(o, "pin_dir", json_object_new_string(pin_dir()));
	json_object_object_add(o, "variants",
			       json_object_new_int(res->policies));
	json_object_object_add(o, "programs",
			       json_object_new_int(res->programs));
	json_object_object_add(o, "pinned", json_object_new_int(res->pinned));
	json_object_object_add(o, "kept", json_object_new_int(res->kept));
	json_object_object_add(o, "unpinned",
			       json_object_new_int(res->unpinned));
	json_object_object_add(o, "bypass_prot_mem_skipped",
			       json_object_new_boolean(res->bypass_skipped));
	json_object_object_add(o, "static_keys", keys_json(res));
	puts(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void print_result(const struct cmd_args *args,
			 const struct preload_result *res)
{
	char kept[64];

	/* A warning on stderr in both forms: the pins are fine. */
	if (res->keys_error[0])
		log_warn("static keys not kept on: %s", res->keys_error);
	if (args->json) {
		print_json(res);
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
	keys_text(&res->keys, kept, sizeof(kept));
	if (res->keys.cgroup[0])
		printf("static keys kept on for %s (cgroup %s)\n", kept,
		       res->keys.cgroup);
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
