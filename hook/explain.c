// SPDX-License-Identifier: GPL-2.0-only
/*
 * `explain`: the dry run. The same resolution as prestart, from a bundle
 * or an OCI state, but it touches no kernel state and writes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"
#include "config.h"
#include "describe.h"
#include "log.h"
#include "oci.h"
#include "policy.h"

static int state_from_bundle(const char *dir, struct oci_state *st)
{
	_cleanup_free_ char *real = realpath(dir, NULL);
	_cleanup_json_ struct json_object *obj = json_object_new_object();
	const char *text;

	if (!real) {
		log_error("bundle %s: %s", dir, strerror(errno));
		return -errno;
	}
	json_object_object_add(obj, "id", json_object_new_string("explain"));
	json_object_object_add(obj, "bundle", json_object_new_string(real));
	text = json_object_to_json_string(obj);
	return oci_parse_state(text, strlen(text), st);
}

static int read_input(const struct cmd_args *args, struct oci_state *st)
{
	int r;

	if (args->bundle)
		r = state_from_bundle(args->bundle, st);
	else if (isatty(STDIN_FILENO)) {
		log_error(
			"explain needs --bundle DIR or an OCI state on stdin");
		return -EINVAL;
	} else
		r = oci_read_state(STDIN_FILENO, st);
	if (!r && st->bundle)
		r = oci_load_bundle(st);
	return r;
}

static void print_result(const struct cmd_args *args, const char *cfg_path,
			 const struct oci_state *st,
			 const struct sh_effective *eff, int refused)
{
	_cleanup_json_ struct json_object *o = NULL;

	o = refused ? json_object_new_object() : describe_effective(eff);
	json_object_object_add(o, "container", json_object_new_string(st->id));
	json_object_object_add(o, "config", json_object_new_string(cfg_path));
	json_object_object_add(
		o, "refused",
		refused ? json_object_new_string(log_last_error()) : NULL);
	if (args->json) {
		puts(json_object_to_json_string_ext(
			o, JSON_C_TO_STRING_PRETTY |
				   JSON_C_TO_STRING_NOSLASHESCAPE));
		return;
	}
	printf("container: %s\nconfig: %s\n", st->id, cfg_path);
	if (refused)
		printf("refused: %s\n", log_last_error());
	else if (eff->sandbox)
		printf("pod sandbox container: never policed\n");
	else
		describe_print_text(o);
}

int cmd_explain(const struct cmd_args *args)
{
	const char *path = config_path(args->config);
	struct sh_config cfg;
	struct oci_state st = { 0 };
	struct sh_effective eff;
	int r = config_load(path, &cfg);

	if (r)
		return r;
	r = read_input(args, &st);
	if (!r) {
		r = policy_resolve(&cfg, &st, &eff);
		print_result(args, path, &st, &eff, r);
	}
	oci_state_free(&st);
	config_free(&cfg);
	return r;
}
