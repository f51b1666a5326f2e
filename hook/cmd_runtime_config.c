// SPDX-License-Identifier: GPL-2.0-only
/*
 * `runtime configure` and `runtime unconfigure` (wiring.h): wire the hook
 * into a runtime, or take it out, with files of our own only. The runtime
 * table below is where another way of wiring goes (an NRI plugin's
 * registration, say): a name, a configure and an unconfigure that add
 * files to the plan, and the unit --restart restarts.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"
#include "config.h"
#include "log.h"
#include "wiring.h"
#include "wiring_crio.h"
#include "wiring_ctd.h"
#include "wiring_exec.h"
#include "wiring_hooksd.h"
#include "wiring_spec.h"

struct runtime {
	const char *name;
	const char *unit; /* what --restart restarts, or NULL */
	int (*configure)(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 const struct sh_config *cfg, struct wiring_plan *plan,
			 struct sh_error *err);
	int (*unconfigure)(const struct wiring_opts *o,
			   struct wiring_plan *plan, struct sh_error *err);
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
	  wiring_ctd_unconfigure },
	{ "crio", "crio", wiring_crio_configure, wiring_crio_unconfigure },
	{ "podman", NULL, wiring_hooksd_configure, wiring_hooksd_unconfigure },
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [--config PATH] runtime configure|unconfigure --runtime containerd|crio|podman\n"
		"          [--dry-run] [--restart] [--hook PATH] [--hook-env KEY=VALUE]...\n"
		"          [--containerd-config PATH] [--drop-in PATH] [--keep-net-raw]\n"
		"          [--hooks-dir DIR] [--crio-dir DIR] [--unit NAME]\n",
		SH_IDENT);
}

static const struct runtime *find_runtime(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(runtimes); i++)
		if (!strcmp(runtimes[i].name, name))
			return &runtimes[i];
	return NULL;
}

/* --name VALUE options into their field. */
static const char **value_of(struct wiring_opts *o, const char *name)
{
	static const struct {
		const char *name;
		size_t off;
	} opts[] = {
		{ "--runtime", offsetof(struct wiring_opts, runtime) },
		{ "--hook", offsetof(struct wiring_opts, hook) },
		{ "--config", offsetof(struct wiring_opts, config) },
		{ "--containerd-config",
		  offsetof(struct wiring_opts, containerd_config) },
		{ "--drop-in", offsetof(struct wiring_opts, drop_in) },
		{ "--hooks-dir", offsetof(struct wiring_opts, hooks_dir) },
		{ "--crio-dir", offsetof(struct wiring_opts, crio_dir) },
		{ "--unit", offsetof(struct wiring_opts, unit) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (!strcmp(opts[i].name, name))
			return (const char **)((char *)o + opts[i].off);
	return NULL;
}

static int parse(int argc, char **argv, struct wiring_opts *o)
{
	for (int i = 0; i < argc; i++) {
		const char **slot = value_of(o, argv[i]);

		if (!strcmp(argv[i], "--dry-run")) {
			o->dry_run = true;
		} else if (!strcmp(argv[i], "--restart")) {
			o->restart = true;
		} else if (!strcmp(argv[i], "--keep-net-raw")) {
			o->keep_net_raw = true;
		} else if (!strcmp(argv[i], "--hook-env") && i + 1 < argc) {
			if (o->nr_env == SH_WIRING_MAX_ENV - 1 ||
			    !strchr(argv[i + 1], '=')) {
				log_error("--hook-env: KEY=VALUE, at most %d",
					  SH_WIRING_MAX_ENV - 1);
				return -EINVAL;
			}
			o->env[o->nr_env++] = argv[++i];
		} else if (slot && i + 1 < argc) {
			*slot = argv[++i];
		} else {
			log_error("runtime: %s %s",
				  slot ? "option needs a value:" :
					 "unknown option",
				  argv[i]);
			return -EINVAL;
		}
	}
	if (find_runtime(o->runtime))
		return 0;
	log_error("runtime: --runtime containerd, crio or podman%s%s",
		  o->runtime ? ", not " : "", o->runtime ?: "");
	return -EINVAL;
}

/* The binary the runtime will run: --hook, else this one. It runs as
 * root for every container, so it must be root's alone. */
static int hook_path(struct wiring_opts *o, char *buf, struct sh_error *err)
{
	struct stat st;

	if (!o->hook) {
		if (!realpath("/proc/self/exe", buf))
			return error_errno(
				err, -errno,
				"cannot tell where this binary is: use --hook");
		o->hook = buf;
	}
	if (o->hook[0] != '/' || stat(o->hook, &st) < 0)
		return error_set(
			err, -ENOENT,
			"--hook %.200s: need the absolute path of an existing binary",
			o->hook);
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0100) || st.st_uid != 0 ||
	    (st.st_mode & 022))
		return error_set(
			err, -EPERM,
			"%.200s: the hook runs as root for every container: it must be an executable owned by root and writable by no one else",
			o->hook);
	return 0;
}

static int restart(const struct runtime *rt, const struct wiring_opts *o,
		   struct sh_error *err)
{
	char *argv[] = { "systemctl", "restart", (char *)(o->unit ?: rt->unit),
			 NULL };

	if (!argv[2]) {
		printf("%s reads its hooks.d files at each container start: nothing to restart\n",
		       rt->name);
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
	r = rt->configure(o, &hook, &cfg, plan, err);
	config_free(&cfg);
	return r;
}

static int run(const struct cmd_args *args, bool on, struct wiring_opts *o)
{
	const struct runtime *rt = find_runtime(o->runtime);
	struct wiring_plan plan = { .nr_files = 0 };
	struct sh_error err = { 0 };
	int r;

	if (!o->config)
		o->config = args->config;
	r = on ? configure(rt, o, &plan, &err) :
		 rt->unconfigure(o, &plan, &err);
	if (!r && !o->dry_run)
		r = wiring_plan_apply(&plan, &err);
	if (!r) {
		wiring_plan_print(&plan, stdout, o->dry_run);
		if (!wiring_plan_changes(&plan))
			printf("%s: nothing to change\n", rt->name);
		else if (!o->dry_run && o->restart)
			r = restart(rt, o, &err);
		else if (!o->dry_run && rt->unit)
			printf("restart %s to load the change: systemctl restart %s\n",
			       rt->name, o->unit ?: rt->unit);
	}
	if (r)
		error_report(&err, r);
	wiring_plan_free(&plan);
	return r;
}

int cmd_runtime_config(const struct cmd_args *args)
{
	struct wiring_opts o = { 0 };
	bool on;

	if (args->argc < 1 || (strcmp(args->argv[0], "configure") &&
			       strcmp(args->argv[0], "unconfigure"))) {
		usage(stderr);
		return CMD_USAGE;
	}
	on = !strcmp(args->argv[0], "configure");
	if (parse(args->argc - 1, args->argv + 1, &o))
		return CMD_USAGE;
	return run(args, on, &o);
}
