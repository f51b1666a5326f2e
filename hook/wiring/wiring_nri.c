// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NRI plugin's wiring (wiring_nri.h), one mode at a time, as
 * `make install NRI=...` installs it:
 *
 *  - service: oci-sockopt-hook-nri.service in /etc/systemd/system (ours:
 *    it starts with SH_WIRING_MARK), the example unit's text for this
 *    binary and config (and --socket when the runtime listens elsewhere),
 *    enabled and started; it connects to the runtime's socket and
 *    registers again after the runtime restarts;
 *  - plugin: the link PLUGIN_DIR/50-oci-sockopt-hook to the binary: the
 *    runtime starts it at its next start (a pre-registered plugin). The
 *    runtime gives it no arguments, so it reads the default config;
 *  - pod: nothing on the node: the DaemonSet's nri container runs it.
 *
 * One copy per node (a second one refuses to register), so a mode takes
 * out the other modes' files of ours, and refuses where a unit of that
 * name that is not ours runs the plugin already (make install NRI=service).
 * The plugin gives containers the hook config_nri_hook_path() names and
 * passes only --config: configure refuses a hook path or --hook-env the
 * plugin would not pass on, rather than wire two different hooks.
 *
 * What no mode changes: the runtime's NRI must be on (its reader says how
 * to turn it on), and a plugin that runs only from a pod cannot serve
 * require_annotations.nri: while it is down, the hook refuses every pod,
 * its own included.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "wiring/wiring.h"
#include "wiring/wiring_nri.h"
#include "wiring/wiring_spec.h"

#define UNIT_PATH SH_WIRING_NRI_UNIT_DIR "/" SH_WIRING_NRI_UNIT

char *wiring_nri_unit_text(const char *hook, const char *config,
			   const char *socket)
{
	char *text = NULL;
	bool other = socket && strcmp(socket, SH_WIRING_NRI_SOCKET);

	if (asprintf(
		    &text,
		    SH_WIRING_MARK
		    "\n"
		    "# (`oci-sockopt-hook runtime unconfigure --nri MODE` removes it):\n"
		    "# the NRI plugin, as examples/systemd/" SH_WIRING_NRI_UNIT
		    " has it.\n"
		    "[Unit]\n"
		    "Description=NRI plugin of oci-sockopt-hook: pod annotations and the hook for every container\n"
		    "Documentation=man:oci-sockopt-hook(1)\n"
		    "After=containerd.service crio.service oci-sockopt-hook-preload.service\n"
		    "ConditionPathExists=%s\n"
		    "\n"
		    "[Service]\n"
		    "Type=simple\n"
		    "ExecStart=%s --config %s nri%s%s\n"
		    "Restart=always\n"
		    "RestartSec=1\n"
		    "\n"
		    "[Install]\n"
		    "WantedBy=multi-user.target\n",
		    config, hook, config, other ? " --socket " : "",
		    other ? socket : "") < 0)
		return NULL;
	return text;
}

static bool unit_is_ours(const char *text)
{
	return !strncmp(text, SH_WIRING_MARK, strlen(SH_WIRING_MARK));
}

static bool link_is_ours(const char *target)
{
	const char *base = strrchr(target, '/');

	return !strcmp(base ? base + 1 : target, SH_IDENT);
}

/* Our unit out of plan (if it is there and ours). */
static int remove_unit(struct wiring_plan *plan, struct sh_error *err)
{
	_cleanup_free_ char *text = wiring_read(UNIT_PATH, &(int){ 0 });
	int r;

	if (text && !unit_is_ours(text))
		return 0; /* not ours: left alone, refused below if it runs */
	r = wiring_plan_remove(plan, UNIT_PATH, err);
	if (r)
		return r;
	plan->files[plan->nr_files - 1].unit = true;
	return 0;
}

/* Our link out of plan, and the plugin directory with it if that is
 * empty then (the link's making made it, where no runtime had). */
static int remove_link(const char *path, struct wiring_plan *plan,
		       struct sh_error *err)
{
	char target[PATH_MAX], dir[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);

	if (n < 0)
		return wiring_plan_link(plan, path, NULL, err);
	target[n] = '\0';
	if (!link_is_ours(target))
		return 0;
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	wiring_plan_prune(plan, dir);
	return wiring_plan_link(plan, path, NULL, err);
}

static bool systemctl(const char *verb, const char *unit)
{
	char *argv[] = { "systemctl", (char *)verb, "--quiet", (char *)unit,
			 NULL };
	struct sh_error ignored = { 0 };

	return wiring_exec_run(argv, NULL, NULL, &ignored) == 0;
}

static int add_unit(const struct wiring_opts *o, const struct wiring_hook *hook,
		    const struct wiring_nri *n, struct wiring_plan *plan,
		    struct sh_error *err)
{
	_cleanup_free_ char *now = wiring_read(UNIT_PATH, &(int){ 0 });
	int r;

	if (now && !unit_is_ours(now))
		return error_set(
			err, -EPERM,
			"%s was not written by runtime configure: left alone (remove it, or run the plugin as it says)",
			UNIT_PATH);
	r = wiring_plan_write(plan, UNIT_PATH,
			      wiring_nri_unit_text(hook->path, o->config,
						   n->socket),
			      0644, err);
	if (r)
		return r;
	plan->files[plan->nr_files - 1].unit = true;
	return 0;
}

static int add_link(const struct wiring_hook *hook, const char *path,
		    struct wiring_plan *plan, struct sh_error *err)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);

	if (n >= 0) {
		target[n] = '\0';
		if (!link_is_ours(target))
			return error_set(
				err, -EPERM,
				"%s runs %.200s, not %s: left alone (a plugin of that name is another's)",
				path, target, SH_IDENT);
	}
	return wiring_plan_link(plan, path, hook->path, err);
}

/* What the plugin could not do as asked, in one line each. */
static int check_mode(const struct wiring_opts *o,
		      const struct wiring_hook *hook,
		      const struct sh_config *cfg, const struct wiring_nri *n,
		      struct sh_error *err)
{
	bool pod = !strcmp(o->nri, "pod");

	if (pod && cfg->require.nri)
		return error_set(
			err, -EINVAL,
			"%s has require_annotations.nri: a plugin that runs only from a pod would have its own pod refused while it is down; run it on the node (--nri service or plugin)",
			o->config);
	if (!strcmp(o->nri, "plugin") && strcmp(o->config, SH_DEFAULT_CONFIG))
		return error_set(
			err, -EINVAL,
			"the runtime starts a pre-registered plugin with no arguments, so it reads %s, not %s: use --nri service",
			SH_DEFAULT_CONFIG, o->config);
	if (strcmp(o->nri, "plugin") && !n->connections)
		return error_set(err, -EINVAL,
				 "%s takes no plugin connections: %s",
				 n->runtime, n->connect_fix);
	if (strcmp(config_nri_hook_path(cfg), hook->path))
		return error_set(
			err, -EINVAL,
			"the plugin gives containers the hook %s (%s), not %s: set nri.hook_path in %s, or --hook-path %s",
			config_nri_hook_path(cfg),
			cfg->nri_hook_path ? "nri.hook_path" :
					     "where make install puts it",
			hook->path, o->config, config_nri_hook_path(cfg));
	if (o->nr_env)
		return error_set(
			err, -EINVAL,
			"--hook-env: the NRI plugin passes the hook only --config");
	return 0;
}

int wiring_nri_configure(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 const struct sh_config *cfg,
			 const struct wiring_nri *n, struct wiring_plan *plan,
			 struct sh_error *err)
{
	char link[PATH_MAX];
	bool service = !strcmp(o->nri, "service");
	bool plugin = !strcmp(o->nri, "plugin");
	struct wiring_file *unit;
	int r = check_mode(o, hook, cfg, n, err);

	if (r)
		return r;
	snprintf(link, sizeof(link), "%s/" SH_WIRING_NRI_LINK, n->plugin_dir);
	r = service ? add_unit(o, hook, n, plan, err) : remove_unit(plan, err);
	if (r)
		return r;
	r = plugin ? add_link(hook, link, plan, err) :
		     remove_link(link, plan, err);
	if (r)
		return r;
	/* a unit of ours there is stopped first; another may run now */
	unit = wiring_plan_find(plan, UNIT_PATH);
	if (!service && !(unit && unit->old) &&
	    systemctl("is-active", SH_WIRING_NRI_UNIT))
		return error_set(
			err, -EBUSY,
			"%s runs the plugin already (make install NRI=service?), and a second copy would not register: systemctl disable --now %s, or use --nri service",
			SH_WIRING_NRI_UNIT, SH_WIRING_NRI_UNIT);
	wiring_plan_note(plan, "NRI: %s, socket %s, plugins in %s", n->runtime,
			 n->socket, n->plugin_dir);
	wiring_plan_note(
		plan, "%s",
		service ?
			"the plugin runs from " SH_WIRING_NRI_UNIT :
		plugin ?
			"the runtime starts the plugin at its next start" :
			"the plugin runs from a pod (the DaemonSet's nri container): nothing of it on the node");
	return 0;
}

int wiring_nri_unconfigure(const struct wiring_opts *o,
			   const struct wiring_nri *n, struct wiring_plan *plan,
			   struct sh_error *err)
{
	char link[PATH_MAX];

	(void)o;
	snprintf(link, sizeof(link), "%s/" SH_WIRING_NRI_LINK,
		 n ? n->plugin_dir : SH_WIRING_NRI_PLUGIN_DIR);
	return remove_unit(plan, err) ?: remove_link(link, plan, err);
}

/* systemctl ARGS..., its failure as err. */
static int run_systemctl(char *const argv[], struct sh_error *err)
{
	return wiring_exec_run(argv, NULL, NULL, err);
}

int wiring_nri_before(const struct wiring_opts *o, struct wiring_plan *plan,
		      struct sh_error *err)
{
	char *argv[] = { "systemctl", "disable", "--now", SH_WIRING_NRI_UNIT,
			 NULL };
	struct wiring_file *f = wiring_plan_find(plan, UNIT_PATH);

	if (!f || f->text || !f->old)
		return 0;
	plan->actions++;
	if (o->dry_run) {
		wiring_plan_note(plan, "would stop and disable %s",
				 SH_WIRING_NRI_UNIT);
		return 0;
	}
	if (run_systemctl(argv, err))
		return err->code;
	wiring_plan_note(plan, "%s: stopped and disabled", SH_WIRING_NRI_UNIT);
	return 0;
}

int wiring_nri_after(const struct wiring_opts *o, struct wiring_plan *plan,
		     struct sh_error *err)
{
	char *reload[] = { "systemctl", "daemon-reload", NULL };
	char *enable[] = { "systemctl", "enable", SH_WIRING_NRI_UNIT, NULL };
	char *restart[] = { "systemctl", "restart", SH_WIRING_NRI_UNIT, NULL };
	struct wiring_file *f = wiring_plan_find(plan, UNIT_PATH);
	bool changed = f && wiring_file_changes(f);
	bool up;

	if (!f || (!f->text && !changed))
		return 0;
	if (!f->text)
		return o->dry_run ? 0 : run_systemctl(reload, err);
	up = !changed && systemctl("is-enabled", SH_WIRING_NRI_UNIT) &&
	     systemctl("is-active", SH_WIRING_NRI_UNIT);
	if (up)
		return 0;
	plan->actions++;
	if (o->dry_run) {
		wiring_plan_note(plan, "would enable and (re)start %s",
				 SH_WIRING_NRI_UNIT);
		return 0;
	}
	if ((changed && run_systemctl(reload, err)) ||
	    run_systemctl(enable, err) || run_systemctl(restart, err))
		return err->code;
	wiring_plan_note(plan, "%s: enabled and (re)started",
			 SH_WIRING_NRI_UNIT);
	return 0;
}
