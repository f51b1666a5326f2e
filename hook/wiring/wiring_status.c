// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether a runtime on this node runs the hook now (wiring_status.h), for
 * `features`: the label sockopt-hook.io/installed=true sends RuntimeClass
 * sockopt pods here, and a pod of a handler the runtime does not have
 * fails to start. So the label needs the wiring, not just the binary:
 *
 *  - where containerd is on PATH, it is the runtime the labels are for:
 *    its own `config dump` has the handler, whose base runtime spec
 *    exists and runs an existing oci-sockopt-hook, and a containerd
 *    running with that config started after that spec was written (a
 *    configure not followed by a restart is not wiring yet);
 *  - else podman, CRI-O (and NRI's hook-injector): a hooks.d file of
 *    ours, whose binary exists, in a directory they read with no setting
 *    (/usr/share/containers/oci/hooks.d) or in /etc/containers/oci/hooks.d,
 *    and where crio runs, its handler.
 *
 * Why each check failed is kept for `features --json` and its warning.
 *
 * Apart from those, whether the NRI plugin delivers pods' annotations and
 * the hook to every container (sockopt-hook.io/nri, which pods that need
 * no RuntimeClass select on): a plugin holds its lock in the state
 * directory and its status there says it is registered with the runtime
 * (nri_status.c). A plugin that stopped, or lost the runtime and has not
 * registered again, does not count.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "lib/cleanup.h"
#include "lib/context.h"
#include "lib/log.h"
#include "nri/nri_status.h"
#include "wiring/wiring_hooksd.h"
#include "wiring/toml/toml.h"
#include "wiring/wiring.h"
#include "wiring/wiring_ctd.h"
#include "wiring/wiring_status.h"

static void why(struct wiring_state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void why(struct wiring_state *st, const char *fmt, ...)
{
	size_t used = strlen(st->why);
	va_list ap;

	if (used + 3 >= sizeof(st->why))
		return;
	if (used)
		used += snprintf(st->why + used, sizeof(st->why) - used, "; ");
	va_start(ap, fmt);
	vsnprintf(st->why + used, sizeof(st->why) - used, fmt, ap);
	va_end(ap);
}

static bool on_path(const char *name)
{
	const char *path = context_get()->path ?:
						 "/usr/sbin:/usr/bin:/sbin:/bin";
	_cleanup_free_ char *copy = strdup(path);
	char file[PATH_MAX];

	for (char *save = NULL, *d = copy ? strtok_r(copy, ":", &save) : NULL;
	     d; d = strtok_r(NULL, ":", &save)) {
		snprintf(file, sizeof(file), "%s/%s", d, name);
		if (!access(file, X_OK))
			return true;
	}
	return false;
}

/* Whether pid runs with config (containerd's -c/--config; the default
 * path or none when config is the default). */
static bool runs_config(const char *pid, const char *config)
{
	char path[64], buf[4096];
	bool is_default = !strcmp(config, SH_WIRING_CTD_CONFIG), named = false;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		const char *a = buf + i;

		if (!strcmp(a, config) ||
		    (!strncmp(a, "--config=", 9) && !strcmp(a + 9, config)))
			return true;
		named |= !strcmp(a, "--config") || !strcmp(a, "-c") ||
			 !strncmp(a, "--config=", 9);
	}
	return is_default && !named;
}

/* When the oldest process called comm that runs config started, in ns
 * since the epoch; 0: none. */
static long long started_ns(const char *comm, const char *config)
{
	_cleanup_closedir_ DIR *d = opendir("/proc");
	long long ticks = sysconf(_SC_CLK_TCK), best = 0;
	struct timespec now, up;
	struct dirent *e;

	if (!d || ticks <= 0)
		return 0;
	clock_gettime(CLOCK_REALTIME, &now);
	clock_gettime(CLOCK_BOOTTIME, &up);
	while ((e = readdir(d))) {
		char path[64], buf[512], *rp;
		unsigned long long start;
		FILE *f;
		size_t n;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		rp = strrchr(buf, ')');
		/* pid (comm) state ... starttime is the 22nd field */
		if (!rp || strncmp(strchr(buf, '(') + 1, comm, strlen(comm)) ||
		    strchr(buf, '(') + 1 + strlen(comm) != rp ||
		    sscanf(rp + 2,
			   "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
			   &start) != 1)
			continue;
		if (runs_config(e->d_name, config) &&
		    (!best || (long long)start < best))
			best = start;
	}
	if (!best)
		return 0;
	return (now.tv_sec - up.tv_sec) * 1000000000LL +
	       (now.tv_nsec - up.tv_nsec) + best * (1000000000LL / ticks);
}

static long long mtime_ns(const char *path)
{
	struct stat s;

	if (stat(path, &s) < 0)
		return 0;
	return s.st_mtim.tv_sec * 1000000000LL + s.st_mtim.tv_nsec;
}

/* A hook entry ({path, ...}) that runs our binary, which exists. */
static bool hook_ok(struct json_object *entry)
{
	struct json_object *p = NULL;
	const char *path, *base;

	json_object_object_get_ex(entry, "path", &p);
	path = json_object_get_string(p);
	base = path ? strrchr(path, '/') : NULL;
	return base && !strcmp(base + 1, SH_IDENT) && !access(path, X_OK);
}

static bool runs_hook(struct json_object *list)
{
	for (size_t i = 0; json_object_is_type(list, json_type_array) &&
			   i < json_object_array_length(list);
	     i++)
		if (hook_ok(json_object_array_get_idx(list, i)))
			return true;
	return false;
}

/* The handler's base spec: it exists, runs our hook; its mtime. */
static bool handler_ok(struct wiring_state *st, struct json_object *rt,
		       const char *handler, long long *newest)
{
	struct json_object *h = NULL, *file = NULL;
	_cleanup_json_ struct json_object *spec = NULL;
	_cleanup_free_ char *text = NULL;
	const char *path;
	int r;

	if (!json_object_object_get_ex(rt, handler, &h)) {
		why(st, "containerd has no runtime handler %s", handler);
		return false;
	}
	json_object_object_get_ex(h, "base_runtime_spec", &file);
	path = json_object_get_string(file);
	text = path && *path ? wiring_read(path, &r) : NULL;
	spec = text ? json_tokener_parse(text) : NULL;
	if (!runs_hook(
		    toml_get(spec, (const char *const[]){ "hooks", "prestart",
							  NULL })) &&
	    !runs_hook(toml_get(spec,
				(const char *const[]){ "hooks", "createRuntime",
						       NULL }))) {
		why(st,
		    "the base runtime spec of containerd's handler %s (%s) runs no %s",
		    handler, path && *path ? path : "none", SH_IDENT);
		return false;
	}
	if (mtime_ns(path) > *newest)
		*newest = mtime_ns(path);
	return true;
}

static void check_containerd(struct wiring_state *st, const char *config)
{
	char *argv[] = { "containerd", "--config", (char *)config,
			 "config",     "dump",	   NULL };
	static const char *const handlers[] = SH_WIRING_HANDLERS;
	_cleanup_json_ struct json_object *dump = NULL;
	struct sh_error err = { 0 };
	struct json_object *rt;
	long long newest = 0, start;

	if (wiring_exec_toml(argv, NULL, &dump, &err)) {
		why(st, "cannot read containerd's config: %s", err.msg);
		return;
	}
	rt = wiring_ctd_node_runtimes(dump, 2) ?:
		     wiring_ctd_node_runtimes(dump, 1);
	if (!handler_ok(st, rt, handlers[0], &newest))
		return;
	st->bypass_handler = handler_ok(st, rt, handlers[1], &newest);
	start = started_ns("containerd", config);
	if (!start) {
		why(st, "no containerd runs with %s", config);
		st->bypass_handler = false;
		return;
	}
	if (start < newest) {
		why(st,
		    "containerd was started before its handler's spec was written: restart it");
		st->bypass_handler = false;
		return;
	}
	st->containerd = true;
}

/* CRI-O runs a RuntimeClass's pods only with a handler of its name. */
static void check_crio(struct wiring_state *st)
{
	char *argv[] = { "crio", "config", NULL };
	static const char *const handlers[] = SH_WIRING_HANDLERS;
	_cleanup_json_ struct json_object *cfg = NULL;
	struct sh_error err = { 0 };
	struct json_object *rt;

	if (wiring_exec_toml(argv, NULL, &cfg, &err)) {
		why(st, "cannot read CRI-O's config: %s", err.msg);
		st->hooksd = false;
		return;
	}
	rt = toml_get(cfg, (const char *const[]){ "crio", "runtime", "runtimes",
						  NULL });
	if (!toml_get(rt, (const char *const[]){ handlers[0], NULL })) {
		why(st, "CRI-O has no runtime handler %s", handlers[0]);
		st->hooksd = false;
		return;
	}
	st->bypass_handler =
		toml_get(rt, (const char *const[]){ handlers[1], NULL }) !=
		NULL;
}

static void check_hooksd(struct wiring_state *st, const char *const *dirs,
			 int nr)
{
	char path[PATH_MAX];

	for (int i = 0; i < nr && !st->hooksd; i++) {
		_cleanup_json_ struct json_object *f = NULL;
		_cleanup_free_ char *text = NULL;
		int r;

		snprintf(path, sizeof(path), "%s/" SH_IDENT ".json", dirs[i]);
		text = wiring_read(path, &r);
		f = text ? json_tokener_parse(text) : NULL;
		st->hooksd = hook_ok(
			toml_get(f, (const char *const[]){ "hook", NULL }));
	}
	if (!st->hooksd)
		why(st, "no hooks.d file of ours in %s%s", dirs[0],
		    nr > 1 ? " or the other hooks.d directories" : "");
	else if (on_path("crio"))
		check_crio(st);
	else
		st->bypass_handler = true; /* podman: no RuntimeClass */
}

static void check_nri(struct wiring_state *st)
{
	int r = nri_status_registered(st->nri_runtime, sizeof(st->nri_runtime));

	if (r < 0)
		log_warn(
			"features: cannot tell whether the NRI plugin is registered (%s): labelled false",
			strerror(-r));
	st->nri = r == 1;
}

void wiring_status_check(struct wiring_state *st, const char *containerd_config,
			 const char *const *hooks_dirs, int nr_hooks_dirs)
{
	static const char *const dirs[] = { SH_HOOKSD_SYSTEM, SH_HOOKSD_ETC };

	*st = (struct wiring_state){ .containerd = false };
	/* Where containerd runs, it is the CRI runtime the labels are for,
	 * and it reads no hooks.d file. */
	if (on_path("containerd"))
		check_containerd(st, containerd_config ?: SH_WIRING_CTD_CONFIG);
	else if (nr_hooks_dirs)
		check_hooksd(st, hooks_dirs, nr_hooks_dirs);
	else
		check_hooksd(st, dirs, ARRAY_SIZE(dirs));
	st->installed = st->containerd || st->hooksd;
	st->bypass_handler = st->installed && st->bypass_handler;
	check_nri(st);
}
