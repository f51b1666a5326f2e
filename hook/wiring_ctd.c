// SPDX-License-Identifier: GPL-2.0-only
/*
 * containerd's wiring (wiring_ctd.h): the handlers sockopt and
 * sockopt-bypass in a drop-in that the main config imports, each with a
 * base runtime spec that carries the hook. How containerd loads its
 * config decides the drop-in's shape (cmd/containerd/server/config,
 * LoadConfig, mergeConfig, resolveImports):
 *
 *  - the main config first, then its imports in order (a glob's matches
 *    sorted); an import is globbed only if it holds '*';
 *  - 1.x replaces a whole plugin section with an imported file's
 *    (mergeConfig: `to.Plugins[k] = v`), so a drop-in holding only the
 *    handlers would drop the node's runc handler, sandbox image and CNI
 *    settings: ours carries the node's whole CRI section as containerd
 *    resolves it, less nothing, plus the handlers (config version 2);
 *  - 2.x merges imported files key by key (mergo), then migrates the
 *    merged config once, by its version, which the last file to set one
 *    decides: a version 3 drop-in under Debian's version 2 config.toml
 *    would leave the node's own CRI settings unmigrated and unused. Ours
 *    has the main config's version and only the handlers.
 *
 * Whatever the drop-in holds, `containerd config dump` is asked twice,
 * in a view of the drop-in's directory without it and with it as planned
 * (wiring_exec.c): the configs must differ in our handlers and nothing
 * else before anything is written.
 */
#include <errno.h>
#include <fnmatch.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>

#include "cleanup.h"
#include "toml.h"
#include "toml_write.h"
#include "wiring.h"
#include "wiring_ctd.h"
#include "wiring_ctd_dropin.h"
#include "wiring_exec.h"
#include "wiring_spec.h"

static const char *const handlers[] = SH_WIRING_HANDLERS;

/* The CRI runtime section's path in a dump of this containerd. */
const char *const wiring_ctd_cri_v2[] = { "plugins",
					  "io.containerd.grpc.v1.cri",
					  "containerd", NULL };
const char *const wiring_ctd_cri_v3[] = { "plugins",
					  "io.containerd.cri.v1.runtime",
					  "containerd", NULL };

struct json_object *wiring_ctd_runtimes(struct json_object *dump, int major)
{
	const char *const key[] = { "runtimes", NULL };

	return toml_get(toml_get(dump, major == 1 ? wiring_ctd_cri_v2 :
						    wiring_ctd_cri_v3),
			key);
}

/* `containerd config dump`, in a view without the drop-in or with text. */
int wiring_ctd_dump(const struct ctd *c, const char *text,
		    struct json_object **out, struct sh_error *err)
{
	char *argv[] = { "containerd", "--config", (char *)c->main_path,
			 "config",     "dump",	   NULL };
	struct wiring_view view = { c->dropin_dir, c->dropin_name, text };
	_cleanup_free_ char *raw = NULL;
	char terr[SH_TOML_ERR_MAX];
	int r;

	r = wiring_exec_run(argv, access(c->dropin_dir, F_OK) ? NULL : &view,
			    &raw, err);
	if (r)
		return r;
	if (toml_parse(raw, strlen(raw), out, terr))
		return error_set(err, -EINVAL,
				 "cannot read `containerd config dump`: %s",
				 terr);
	return 0;
}

/* Go's filepath.Match globs, which '*' and '?' do not cross '/' in. */
static bool covers(const struct ctd *c, const char *entry)
{
	char path[PATH_MAX];
	bool glob = strchr(entry, '*') != NULL;

	/* 1.x globs a relative pattern from its working directory, "/"
	 * under systemd; 2.x and plain paths from the main config's. */
	if (entry[0] == '/')
		snprintf(path, sizeof(path), "%s", entry);
	else
		snprintf(path, sizeof(path), "%s/%s",
			 glob && c->major == 1 ? "" : c->main_dir, entry);
	if (glob)
		return fnmatch(path, c->dropin, FNM_PATHNAME) == 0;
	return !strcmp(path, c->dropin);
}

static struct json_object *imports_of(const struct ctd *c)
{
	struct json_object *imports = NULL;

	json_object_object_get_ex(c->main, "imports", &imports);
	return json_object_is_type(imports, json_type_array) ? imports : NULL;
}

static int set_dropin(struct ctd *c, const char *path)
{
	char *slash;

	if (snprintf(c->dropin, sizeof(c->dropin), "%s", path) >=
		    (int)sizeof(c->dropin) ||
	    path[0] != '/')
		return -EINVAL;
	snprintf(c->dropin_dir, sizeof(c->dropin_dir), "%s", path);
	slash = strrchr(c->dropin_dir, '/');
	*slash = '\0';
	c->dropin_name = c->dropin + (slash - c->dropin_dir) + 1;
	if (!c->dropin_dir[0])
		snprintf(c->dropin_dir, sizeof(c->dropin_dir), "/");
	return 0;
}

/* The first import glob DIR/PATTERN whose PATTERN our file name matches. */
static void choose_dropin(struct ctd *c)
{
	struct json_object *imports = imports_of(c);
	char path[PATH_MAX];

	for (size_t i = 0; imports && i < json_object_array_length(imports);
	     i++) {
		const char *e = json_object_get_string(
			json_object_array_get_idx(imports, i));
		const char *slash = e ? strrchr(e, '/') : NULL;

		if (!slash || !strchr(slash, '*') || strpbrk(e, "*?[") < slash)
			continue;
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - e), e,
			 SH_WIRING_CTD_DROPIN);
		if (set_dropin(c, path) == 0 && covers(c, e))
			return;
	}
	c->dropin[0] = '\0';
}

static int find_dropin(struct ctd *c, struct sh_error *err)
{
	struct json_object *imports = imports_of(c);

	if (c->o->drop_in) {
		if (set_dropin(c, c->o->drop_in))
			return error_set(
				err, -EINVAL,
				"--drop-in %.200s: need an absolute path",
				c->o->drop_in);
	} else {
		choose_dropin(c);
	}
	for (size_t i = 0;
	     c->dropin[0] && imports && i < json_object_array_length(imports);
	     i++)
		if (covers(c,
			   json_object_get_string(json_object_array_get_idx(imports, i)) ?:
				   ""))
			return 0;
	return error_set(
		err, -ENOENT,
		"containerd reads no drop-in of ours: %s has no imports entry that covers %s; add `imports = [\"%s/conf.d/*.toml\"]` above its first [table] and run this again",
		c->main_path,
		c->dropin[0] ? c->dropin : "DIR/" SH_WIRING_CTD_DROPIN,
		c->main_dir);
}

static int read_version(struct ctd *c, struct sh_error *err)
{
	char *argv[] = { "containerd", "--version", NULL };
	_cleanup_free_ char *out = NULL;
	char word[3][128];
	int r = wiring_exec_run(argv, NULL, &out, err);

	if (r)
		return r;
	/* containerd github.com/containerd/containerd[/v2] [v]X.Y.Z ... */
	if (sscanf(out, "%127s %127s %127s", word[0], word[1], word[2]) != 3 ||
	    sscanf(word[2] + (word[2][0] == 'v'), "%d.", &c->major) != 1 ||
	    c->major < 1)
		return error_set(
			err, -EINVAL,
			"cannot tell containerd's version from '%.80s'", out);
	if (c->major > 2)
		return error_set(err, -ENOTSUP,
				 "containerd %d.x: this hook knows 1.x and 2.x",
				 c->major);
	return 0;
}

static int read_main(struct ctd *c, struct sh_error *err)
{
	_cleanup_free_ char *text = NULL;
	struct json_object *v = NULL;
	char terr[SH_TOML_ERR_MAX];
	int r;

	text = wiring_read(c->main_path, &r);
	if (r == -ENOENT)
		return error_set(
			err, r,
			"%s does not exist, so containerd imports no drop-in: create it with `version = %d` and `imports = [\"%s/conf.d/*.toml\"]` and run this again",
			c->main_path, c->major == 1 ? 2 : 3, c->main_dir);
	if (r)
		return error_errno(err, r, "cannot read %s", c->main_path);
	if (toml_parse(text, strlen(text), &c->main, terr))
		return error_set(err, -EINVAL, "%s: %s", c->main_path, terr);
	json_object_object_get_ex(c->main, "version", &v);
	c->main_version = json_object_is_type(v, json_type_int) ?
				  json_object_get_int(v) :
				  1;
	if (c->main_version < 2 || c->main_version > 3 ||
	    (c->major == 1 && c->main_version != 2))
		return error_set(
			err, -ENOTSUP,
			"%s has config version %d: containerd %d.x needs %s (`containerd config migrate` writes it)",
			c->main_path, c->main_version, c->major,
			c->major == 1 ? "2" : "2 or 3");
	return 0;
}

int wiring_ctd_open(struct ctd *c, const struct wiring_opts *o,
		    struct sh_error *err)
{
	char *slash;

	c->o = o;
	snprintf(c->main_path, sizeof(c->main_path), "%s",
		 o->containerd_config ?: SH_WIRING_CTD_CONFIG);
	if (c->main_path[0] != '/')
		return error_set(
			err, -EINVAL,
			"--containerd-config %.200s: need an absolute path",
			c->main_path);
	snprintf(c->main_dir, sizeof(c->main_dir), "%s", c->main_path);
	slash = strrchr(c->main_dir, '/');
	*slash = '\0';
	snprintf(c->spec_dir, sizeof(c->spec_dir), "%s/" SH_WIRING_CTD_SPEC_DIR,
		 c->main_dir);
	return read_version(c, err) ?: read_main(c, err) ?: find_dropin(c, err);
}

void wiring_ctd_close(struct ctd *c)
{
	json_object_put(c->main);
	json_object_put(c->before);
	c->main = c->before = NULL;
}

void wiring_ctd_spec_path(const struct ctd *c, const char *handler, char *buf,
			  size_t len)
{
	snprintf(buf, len, "%s/%s-base-spec.json", c->spec_dir, handler);
}

/* The default handler's section in the dump without our drop-in. */
static int default_runtime(struct ctd *c, struct json_object **rt,
			   struct sh_error *err)
{
	const char *const name_key[] = { "default_runtime_name", NULL };
	const char *name;
	int r = wiring_ctd_dump(c, NULL, &c->before, err);

	if (r)
		return r;
	name = json_object_get_string(
		toml_get(toml_get(c->before, c->major == 1 ? wiring_ctd_cri_v2 :
							     wiring_ctd_cri_v3),
			 name_key));
	if (!name ||
	    !json_object_object_get_ex(wiring_ctd_runtimes(c->before, c->major),
				       name, rt) ||
	    !json_object_is_type(*rt, json_type_object))
		return error_set(
			err, -ENOENT,
			"containerd's config has no default runtime handler (%s)",
			name ?: "default_runtime_name unset");
	for (int i = 0; i < SH_WIRING_NR_HANDLERS; i++)
		if (!strcmp(name, handlers[i]))
			return error_set(
				err, -EINVAL,
				"containerd's default runtime is '%s': the handlers of the hook copy the default one, choose another default",
				name);
	snprintf(c->default_name, sizeof(c->default_name), "%s", name);
	return 0;
}

/* The spec containerd gives the default handler's containers. */
static int spec_source(struct ctd *c, struct json_object *rt, char **text,
		       bool *generated, struct sh_error *err)
{
	struct json_object *base = NULL;
	char *argv[] = { "ctr", "oci", "spec", NULL };
	const char *file;
	int r;

	json_object_object_get_ex(rt, "base_runtime_spec", &base);
	file = json_object_get_string(base);
	*generated = !file || !*file;
	if (*generated)
		return wiring_exec_run(argv, NULL, text, err);
	*text = wiring_read(file, &r);
	if (r)
		return error_errno(
			err, r,
			"cannot read the base_runtime_spec %.200s of handler %s",
			file, c->default_name);
	return 0;
}

int wiring_ctd_build(struct ctd *c, const struct wiring_hook *hook,
		     struct wiring_plan *plan, struct sh_error *err)
{
	struct json_object *rt = NULL;
	_cleanup_free_ char *source = NULL;
	_cleanup_json_ struct json_object *doc = NULL;
	char path[PATH_MAX];
	bool generated;
	int r = default_runtime(c, &rt, err) ?:
			spec_source(c, rt, &source, &generated, err);

	for (int i = 0; !r && i < SH_WIRING_NR_HANDLERS; i++) {
		char *text = NULL;

		r = wiring_spec_build(source, generated, handlers[i], hook,
				      c->o->keep_net_raw, &text, err);
		wiring_ctd_spec_path(c, handlers[i], path, sizeof(path));
		if (!r)
			r = wiring_plan_write(plan, path, text, 0644, err);
	}
	if (!r)
		r = wiring_ctd_dropin_build(c, rt, &doc, err);
	if (!r)
		r = wiring_ctd_dropin_plan(c, doc, plan, err);
	return r;
}

int wiring_ctd_configure(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 struct wiring_plan *plan, struct sh_error *err)
{
	struct ctd c = { 0 };
	int r = wiring_ctd_open(&c, o, err) ?:
			wiring_ctd_build(&c, hook, plan, err);

	if (!r)
		wiring_plan_note(
			plan,
			"containerd %d.x, %s (config version %d) imports %s",
			c.major, c.main_path, c.main_version, c.dropin);
	wiring_ctd_close(&c);
	return r;
}

/* Ours to remove: a drop-in that starts with our mark. */
static int remove_dropin(const struct ctd *c, struct wiring_plan *plan,
			 struct sh_error *err)
{
	_cleanup_free_ char *text = wiring_read(c->dropin, &(int){ 0 });

	if (text && strncmp(text, SH_WIRING_MARK, strlen(SH_WIRING_MARK)))
		return error_set(
			err, -EPERM,
			"%s was not written by runtime configure: left alone",
			c->dropin);
	return wiring_plan_remove(plan, c->dropin, err);
}

int wiring_ctd_unconfigure(const struct wiring_opts *o,
			   struct wiring_plan *plan, struct sh_error *err)
{
	struct ctd c = { 0 };
	struct sh_error ignored = { 0 };
	char path[PATH_MAX];
	int r;

	/* Whatever the main config says now, the files of ours go. */
	if (wiring_ctd_open(&c, o, &ignored) && !c.dropin[0]) {
		if (!c.main_dir[0])
			return error_set(err, ignored.code ?: -EINVAL, "%s",
					 ignored.msg);
		snprintf(path, sizeof(path), "%s/conf.d/" SH_WIRING_CTD_DROPIN,
			 c.main_dir);
		set_dropin(&c, o->drop_in ?: path);
	}
	r = remove_dropin(&c, plan, err);
	snprintf(plan->prune, sizeof(plan->prune), "%s", c.spec_dir);
	for (int i = 0; !r && i < SH_WIRING_NR_HANDLERS; i++) {
		wiring_ctd_spec_path(&c, handlers[i], path, sizeof(path));
		r = wiring_plan_remove(plan, path, err);
	}
	wiring_ctd_close(&c);
	return r;
}
