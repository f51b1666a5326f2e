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
#include "explain_cgroup.h"
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

/*
 * prestart finds out by loading the bypass variant; a dry run must not
 * load anything, so it asks the per-netns sysctl that the same kernel
 * series added.
 */
static int check_kernel(const struct sh_config *cfg,
			const struct sh_effective *eff)
{
	char src[400];

	if (!eff->bypass ||
	    access("/proc/sys/net/core/bypass_prot_mem", F_OK) == 0)
		return 0;
	policy_source_text(eff, true, src, sizeof(src));
	if (cfg->on_unsupported == ON_UNSUPPORTED_WARN) {
		log_warn(
			"bypass-prot-mem is requested (by %s) but this kernel lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19): the container would start without it",
			src);
		return 0;
	}
	log_error(
		"bypass-prot-mem is requested (by %s) but this kernel lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19): prestart would refuse the container (on_unsupported is 'fail')",
		src);
	return -EOPNOTSUPP;
}

/* A policy refusal has no effective policy to show; a kernel one has. */
static void print_result(const struct cmd_args *args, const char *cfg_path,
			 const struct oci_state *st,
			 const struct sh_effective *eff, struct json_object *o,
			 int policy_r, int kernel_r)
{
	bool refused = policy_r || kernel_r;

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
	if (!policy_r && eff->sandbox)
		printf("pod sandbox container: never policed\n");
	else if (!policy_r)
		describe_print_text(o);
	if (refused)
		printf("refused: %s\n", log_last_error());
}

int cmd_explain(const struct cmd_args *args)
{
	const char *path = config_path(args->config);
	struct sh_config cfg;
	struct oci_state st = { 0 };
	struct sh_effective eff;
	_cleanup_json_ struct json_object *desc = NULL;
	int r = config_load(path, &cfg), kernel_r = 0;

	if (r)
		return r;
	r = read_input(args, &st);
	if (!r) {
		r = policy_resolve(&cfg, &st, &eff);
		if (!r && !eff.sandbox)
			kernel_r = check_kernel(&cfg, &eff);
		desc = r ? json_object_new_object() : describe_effective(&eff);
		if (!r && !kernel_r && !eff.sandbox && !policy_is_empty(&eff))
			kernel_r = explain_cgroup(&cfg, &st, desc);
		print_result(args, path, &st, &eff, desc, r, kernel_r);
	}
	oci_state_free(&st);
	config_free(&cfg);
	return r ? r : kernel_r;
}
