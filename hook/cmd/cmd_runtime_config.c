// SPDX-License-Identifier: GPL-2.0-only
/*
 * `runtime configure` and `runtime unconfigure` (wiring.h): wire the hook
 * into a runtime, or take it out, with files of our own only. The runtime
 * table below has, per runtime, a name, a configure and an unconfigure
 * that add files to the plan (the RuntimeClass handlers, or podman's
 * hooks.d file), the unit --restart restarts, and for a runtime with NRI
 * the reader of its NRI settings and the fail-closed fallback's files:
 * --nri MODE wires the NRI plugin instead (wiring_nri.c), with the
 * fallback where the operator config has require_annotations.nri.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "config/config.h"
#include "input/container.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "wiring/wiring.h"
#include "wiring/wiring_cdi.h"
#include "wiring/wiring_crio.h"
#include "wiring/wiring_ctd.h"
#include "wiring/wiring_docker.h"
#include "wiring/wiring_hooksd.h"
#include "wiring/wiring_nri.h"
#include "wiring/wiring_spec.h"

struct runtime {
	const char *name;
	const char *unit; /* what --restart restarts, or NULL */
	int (*configure)(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 const struct sh_config *cfg, struct wiring_plan *plan,
			 struct sh_error *err);
	int (*unconfigure)(const struct wiring_opts *o,
			   struct wiring_plan *plan, struct sh_error *err);
	/* NULL: the runtime has no NRI */
	int (*nri)(const struct wiring_opts *o, struct wiring_nri *n,
		   struct sh_error *err);
	int (*fallback)(const struct wiring_opts *o,
			const struct wiring_hook *hook,
			struct wiring_plan *plan, struct sh_error *err);
	int (*unfallback)(const struct wiring_opts *o, struct wiring_plan *plan,
			  struct sh_error *err);
};

static int containerd_configure(const struct wiring_opts *o,
				const struct wiring_hook *hook,
				const struct sh_config *cfg,
				struct wiring_plan *plan, struct sh_error *err)
{
	(void)cfg;
	return wiring_ctd_configure(o, hook, plan, err);
}

static const struct runtime runtimes[] = {
	{ "containerd", "containerd", containerd_configure,
	  wiring_ctd_unconfigure, wiring_ctd_nri_read, wiring_ctd_nri_fallback,
	  wiring_ctd_nri_unfallback },
	{ "crio", "crio", wiring_crio_configure, wiring_crio_unconfigure,
	  wiring_crio_nri_read, wiring_crio_nri_fallback,
	  wiring_crio_nri_unfallback },
	{ "podman", NULL, wiring_hooksd_configure, wiring_hooksd_unconfigure,
	  NULL, NULL, NULL },
	{ "docker", "docker", wiring_docker_configure,
	  wiring_docker_unconfigure, NULL, NULL, NULL },
	/* --cdi alone: every runtime that reads CDI specs reads them when a
	 * container asks for a device, so there is nothing to restart. */
	{ "cdi", NULL, wiring_cdi_configure, wiring_cdi_unconfigure, NULL, NULL,
	  NULL },
};

/* The NRI plugin as o->nri says, after the runtime's NRI settings; the
 * fallback's files where require_annotations.nri needs them, else out. */
static int nri_configure(const struct runtime *rt, const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 const struct sh_config *cfg, struct wiring_plan *plan,
			 struct sh_error *err)
{
	struct wiring_nri n = { .connections = false };
	int r = rt->nri(o, &n, err) ?:
			wiring_nri_configure(o, hook, cfg, &n, plan, err);

	if (r)
		return r;
	if (cfg->require.nri)
		return rt->fallback(o, hook, plan, err);
	return rt->unfallback(o, plan, err);
}

static int nri_unconfigure(const struct runtime *rt,
			   const struct wiring_opts *o,
			   struct wiring_plan *plan, struct sh_error *err)
{
	struct wiring_nri n = { .connections = false };
	struct sh_error ignored = { 0 };
	/* the runtime's plugin directory if it says one, even with NRI off */
	bool have = rt->nri(o, &n, &ignored) == 0 || n.plugin_dir[0];

	return wiring_nri_unconfigure(o, have ? &n : NULL, plan, err) ?:
		       rt->unfallback(o, plan, err);
}

static const struct runtime *find_runtime(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(runtimes); i++)
		if (!strcmp(runtimes[i].name, name))
			return &runtimes[i];
	return NULL;
}

/* The binary the runtime will run: --hook-path, else this one. */
static int hook_path(struct wiring_opts *o, char *buf, struct sh_error *err)
{
	return wiring_hook_binary(&o->hook, buf, err);
}

static int restart(const struct runtime *rt, const struct wiring_opts *o,
		   struct sh_error *err)
{
	char *argv[] = { "systemctl", "restart", (char *)(o->unit ?: rt->unit),
			 NULL };

	if (!argv[2]) {
		printf("%s reads its %s at each container start: nothing to restart\n",
		       rt->name, o->cdi ? "CDI specs" : "hooks.d files");
		return 0;
	}
	if (wiring_exec_run(argv, NULL, NULL, err))
		return err->code;
	printf("restarted %s\n", argv[2]);
	return 0;
}

static int configure(const struct runtime *rt, struct wiring_opts *o,
		     struct wiring_plan *plan, struct sh_error *err)
{
	char self[PATH_MAX], config_env[PATH_MAX + 32];
	const char *env[SH_WIRING_MAX_ENV];
	struct wiring_hook hook = { .env = env };
	struct sh_config cfg;
	int r = hook_path(o, self, err);

	if (r)
		return r;
	/* The runtime would refuse every container with a config the hook
	 * refuses: check it now, as the hook will read it. */
	o->config = config_path(o->config);
	r = config_load(o->config, &cfg, err);
	if (r)
		return r;
	snprintf(config_env, sizeof(config_env), "OCI_SOCKOPT_HOOK_CONFIG=%s",
		 o->config);
	env[hook.nr_env++] = config_env;
	for (int i = 0; i < o->nr_env; i++)
		env[hook.nr_env++] = o->env[i];
	hook.path = o->hook;
	r = o->nri ? nri_configure(rt, o, &hook, &cfg, plan, err) :
		     rt->configure(o, &hook, &cfg, plan, err);
	config_free(&cfg);
	return r;
}

/* After the files: what the runtime must do to see them. */
static int finish(const struct runtime *rt, const struct wiring_opts *o,
		  const struct wiring_plan *plan, struct sh_error *err)
{
	if (!wiring_plan_changes(plan)) {
		printf("%s: nothing to change\n", rt->name);
		return 0;
	}
	if (o->dry_run || !wiring_plan_runtime_changes(plan))
		return 0;
	if (o->restart)
		return restart(rt, o, err);
	if (rt->unit)
		printf("restart %s to load the change: systemctl restart %s\n",
		       rt->name, o->unit ?: rt->unit);
	return 0;
}

static int run(bool on, struct wiring_opts *o)
{
	const struct runtime *rt = find_runtime(o->runtime);
	struct wiring_plan plan = { .nr_files = 0 };
	struct sh_error err = { 0 };
	int r = on     ? configure(rt, o, &plan, &err) :
		o->nri ? nri_unconfigure(rt, o, &plan, &err) :
			 rt->unconfigure(o, &plan, &err);

	if (r)
		goto out;
	if (o->nri) {
		r = wiring_nri_before(o, &plan, &err);
		if (r)
			goto out;
	}
	if (!o->dry_run) {
		r = wiring_plan_apply(&plan, &err);
		if (r)
			goto out;
	}
	if (o->nri) {
		r = wiring_nri_after(o, &plan, &err);
		if (r)
			goto out;
	}
	wiring_plan_print(&plan, stdout, o->dry_run);
	r = finish(rt, o, &plan, &err);
out:
	if (r)
		error_report(&err, r);
	wiring_plan_free(&plan);
	return r;
}

enum {
	OPT_RUNTIME = CLI_OPT_OWN,
	OPT_DRY_RUN,
	OPT_RESTART,
	OPT_HOOK,
	OPT_HOOK_ENV,
	OPT_CONTAINERD_CONFIG,
	OPT_DROP_IN,
	OPT_KEEP_NET_RAW,
	OPT_HOOKS_DIR,
	OPT_CRIO_DIR,
	OPT_UNIT,
	OPT_NRI,
	OPT_ADD_IMPORT,
	OPT_CDI,
	OPT_CDI_DIR,
	OPT_DOCKER_CONFIG,
	OPT_DEFAULT_RUNTIME,
};

/* An option into o; false, with one line, for a --hook-env too many. */
static bool take(const struct cli_command *cmd, struct wiring_opts *o, int id,
		 const char *value)
{
	const char **slot[] = {
		[OPT_RUNTIME] = &o->runtime,
		[OPT_HOOK] = &o->hook,
		[OPT_CONTAINERD_CONFIG] = &o->containerd_config,
		[OPT_DROP_IN] = &o->drop_in,
		[OPT_HOOKS_DIR] = &o->hooks_dir,
		[OPT_CRIO_DIR] = &o->crio_dir,
		[OPT_UNIT] = &o->unit,
		[OPT_NRI] = &o->nri,
		[OPT_CDI_DIR] = &o->cdi_dir,
		[OPT_DOCKER_CONFIG] = &o->docker_config,
	};

	if (id == OPT_DRY_RUN || id == OPT_RESTART || id == OPT_KEEP_NET_RAW ||
	    id == OPT_ADD_IMPORT || id == OPT_CDI ||
	    id == OPT_DEFAULT_RUNTIME) {
		*(id == OPT_DRY_RUN	    ? &o->dry_run :
		  id == OPT_RESTART	    ? &o->restart :
		  id == OPT_ADD_IMPORT	    ? &o->add_import :
		  id == OPT_CDI		    ? &o->cdi :
		  id == OPT_DEFAULT_RUNTIME ? &o->docker_default :
					      &o->keep_net_raw) = true;
		return true;
	}
	if (id != OPT_HOOK_ENV) {
		*slot[id] = value;
		return true;
	}
	if (o->nr_env < SH_WIRING_MAX_ENV - 1) {
		o->env[o->nr_env++] = value;
		return true;
	}
	cli_usage_error(cmd, "--hook-env at most %d times",
			SH_WIRING_MAX_ENV - 1);
	return false;
}

/* After the options (so that --help comes first): what they must be. */
static bool valid(const struct cli_command *cmd, const struct wiring_opts *o,
		  const char *verb)
{
	if (strcmp(verb, "configure") && strcmp(verb, "unconfigure")) {
		cli_usage_error(cmd, "configure or unconfigure, not '%.32s'",
				verb);
		return false;
	}
	for (int i = 0; i < o->nr_env; i++) {
		if (strchr(o->env[i], '=') && o->env[i][0] != '=')
			continue;
		cli_usage_error(cmd, "--hook-env takes KEY=VALUE, not '%.32s'",
				o->env[i]);
		return false;
	}
	if (!find_runtime(o->runtime) ||
	    (!o->cdi && !strcmp(o->runtime, "cdi"))) {
		cli_usage_error(
			cmd,
			"--runtime containerd, crio, podman or docker, or --cdi%s%.32s",
			o->runtime ? ", not " : "", o->runtime ?: "");
		return false;
	}
	if (o->nri && strcmp(o->nri, "service") && strcmp(o->nri, "plugin") &&
	    strcmp(o->nri, "pod")) {
		cli_usage_error(cmd,
				"--nri service, plugin or pod, not '%.32s'",
				o->nri);
		return false;
	}
	if (o->add_import && strcmp(o->runtime, "containerd")) {
		cli_usage_error(cmd, "--add-import: containerd only, not %s",
				o->runtime);
		return false;
	}
	if (o->nri && !find_runtime(o->runtime)->nri) {
		cli_usage_error(
			cmd, "--nri: %s has no NRI (containerd and crio have)",
			o->runtime);
		return false;
	}
	return true;
}

static int run_runtime(const struct cli_command *cmd,
		       const struct cli_global *global, int argc, char **argv)
{
	struct wiring_opts o = { 0 };
	struct cli_parser p;
	int id;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0)
		if (!take(cmd, &o, id, p.value))
			return CMD_USAGE;
	if (id)
		return cli_exit(id);
	o.config = p.config;
	if (o.cdi && o.runtime) {
		cli_usage_error(cmd,
				"--cdi stands alone: not with --runtime %.32s",
				o.runtime);
		return CMD_USAGE;
	}
	if (o.cdi)
		o.runtime = "cdi";
	if (!valid(cmd, &o, p.operand[0]))
		return CMD_USAGE;
	return run(!strcmp(p.operand[0], "configure"), &o);
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	{ OPT_RUNTIME, "runtime", "NAME",
	  "containerd, crio, podman or docker" },
	{ OPT_DRY_RUN, "dry-run", NULL,
	  "print what would change, as a diff; write nothing" },
	{ OPT_RESTART, "restart", NULL,
	  "restart the runtime's unit when a file changed" },
	{ OPT_HOOK, "hook-path", "PATH",
	  "the binary the runtime runs (else this one)" },
	{ OPT_HOOK_ENV, "hook-env", "KEY=VALUE",
	  "more environment for the hook; repeatable" },
	{ OPT_CONTAINERD_CONFIG, "ctd-config", "FILE",
	  "containerd's main config (else /etc/containerd/config.toml)" },
	{ OPT_DROP_IN, "drop-in", "PATH",
	  "containerd's drop-in (else 99-oci-sockopt-hook.toml in the first "
	  "directory the main config imports)" },
	{ OPT_ADD_IMPORT, "add-import", NULL,
	  "containerd: where the main config imports no directory, add the "
	  "imports line (a copy kept; unconfigure puts it back)" },
	{ OPT_KEEP_NET_RAW, "keep-net-raw", NULL,
	  "keep CAP_NET_RAW in containerd's base specs" },
	{ OPT_HOOKS_DIR, "hooks-dir", "DIR",
	  "where the hooks.d file goes (else the first one the runtime reads)" },
	{ OPT_CRIO_DIR, "crio-dir", "DIR",
	  "CRI-O's drop-in directory (else /etc/crio/crio.conf.d)" },
	{ OPT_UNIT, "unit", "NAME", "the unit --restart restarts" },
	{ OPT_DOCKER_CONFIG, "docker-config", "FILE",
	  "Docker's daemon.json (else " SH_DOCKER_DAEMON_JSON ")" },
	{ OPT_DEFAULT_RUNTIME, "default-runtime", NULL,
	  "docker: make the runtime " SH_DOCKER_RUNTIME " Docker's default" },
	{ OPT_CDI, "cdi", NULL,
	  "the CDI spec of kind " SH_CDI_KIND " instead (`cdi generate`)" },
	{ OPT_CDI_DIR, "cdi-dir", "DIR",
	  "where the CDI spec goes (else " SH_CDI_ETC ")" },
	{ OPT_NRI, "nri", "MODE",
	  "wire the NRI plugin instead of the handlers: service (a systemd "
	  "unit), plugin (started by the runtime) or pod (a DaemonSet's)" },
	{ 0 },
};

const struct cli_command cmd_runtime_config_command = {
	.name = "runtime",
	.operands = "configure|unconfigure",
	.min_operands = 1,
	.max_operands = 1,
	.summary =
		"wire the hook into containerd, CRI-O or podman, or take it out",
	.description =
		"Writes, or removes, files of its own only: a drop-in (containerd's\n"
		"imports, CRI-O's crio.conf.d) with the handlers sockopt and\n"
		"sockopt-bypass, base runtime specs made from the node's own\n"
		"defaults, the hooks.d file; a runtime's main config only with\n"
		"--add-import (containerd's imports line, a copy kept). Every\n"
		"file is checked with the runtime's own tool before it is written,\n"
		"all or none; a second run with nothing new changes nothing.\n"
		"With --nri (containerd 2.x, CRI-O): the NRI plugin instead, once the\n"
		"runtime's config has NRI on (else one line says what to change): a\n"
		"systemd unit, or a link in the runtime's plugin directory, or nothing\n"
		"(a pod runs it); with require_annotations.nri in the config, the\n"
		"fallback too: the default handler runs the hook (containerd's base\n"
		"spec, CRI-O's hooks.d), so that a container the plugin missed is refused.\n",
	.options = options,
	.run = run_runtime,
};
