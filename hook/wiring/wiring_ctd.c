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
 * (wiring.c): the configs must differ in our handlers and nothing
 * else before anything is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include <sys/stat.h>

#include "lib/cleanup.h"
#include "lib/context.h"
#include "lib/fileio.h"
#include "wiring/toml/toml.h"
#include "wiring/wiring.h"
#include "wiring/wiring_ctd.h"
#include "wiring/wiring_nri.h"
#include "wiring/wiring_spec.h"
static const char *const handlers[] = SH_WIRING_HANDLERS;

int wiring_ctd_default(struct ctd *c, struct json_object **rt,
		       struct sh_error *err)
{
	const char *const name_key[] = { "default_runtime_name", NULL };
	const char *name;
	int r = wiring_ctd_node_dump(c, NULL, &c->before, err);

	if (r)
		return r;
	name = json_object_get_string(toml_get(
		toml_get(c->before, c->major == 1 ? wiring_ctd_node_cri_v2 :
						    wiring_ctd_node_cri_v3),
		name_key));
	if (!name ||
	    !json_object_object_get_ex(
		    wiring_ctd_node_runtimes(c->before, c->major), name, rt) ||
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

int wiring_ctd_spec_source(struct ctd *c, struct json_object *rt, char **text,
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
	int r = wiring_ctd_default(c, &rt, err) ?:
			wiring_ctd_spec_source(c, rt, &source, &generated, err);

	if (r)
		return r;
	for (int i = 0; i < SH_WIRING_NR_HANDLERS; i++) {
		char *text = NULL;

		r = wiring_spec_build(source, generated, handlers[i], hook,
				      c->o->keep_net_raw, &text, err);
		if (r)
			return r;
		wiring_ctd_node_spec_path(c, handlers[i], path, sizeof(path));
		r = wiring_plan_write(plan, path, text, 0644, err);
		if (r)
			return r;
	}
	r = wiring_ctd_dropin_build(c, rt, &doc, err);
	if (r)
		return r;
	return wiring_ctd_dropin_plan(c, doc, plan, err) ?:
		       wiring_ctd_import_plan(c, plan, err);
}

int wiring_ctd_configure(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 struct wiring_plan *plan, struct sh_error *err)
{
	struct ctd c = { 0 };
	int r = wiring_ctd_import_open(&c, o, err) ?:
			wiring_ctd_build(&c, hook, plan, err);

	if (r)
		goto out;
	wiring_plan_note(plan,
			 "containerd %d.x, %s (config version %d) imports %s",
			 c.major, c.main_path, c.main_version, c.dropin);
out:
	wiring_ctd_node_close(&c);
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
	if (wiring_ctd_node_open(&c, o, &ignored) && !c.dropin[0]) {
		if (!c.main_dir[0])
			return error_set(err, ignored.code ?: -EINVAL, "%s",
					 ignored.msg);
		snprintf(path, sizeof(path), "%s/conf.d/" SH_WIRING_CTD_DROPIN,
			 c.main_dir);
		wiring_ctd_node_set_dropin(&c, o->drop_in ?: path);
	}
	r = remove_dropin(&c, plan, err) ?:
		    wiring_ctd_import_undo(&c, SH_WIRING_CTD_FALLBACK_DROPIN,
					   plan, err);
	wiring_plan_prune(plan, c.spec_dir);
	for (int i = 0; !r && i < SH_WIRING_NR_HANDLERS; i++) {
		wiring_ctd_node_spec_path(&c, handlers[i], path, sizeof(path));
		r = wiring_plan_remove(plan, path, err);
	}
	wiring_ctd_node_close(&c);
	return r;
}

/*
 * What a node's containerd is made of, found out once for `runtime
 * configure` and `features`: its version (containerd
 * --version), its main config and the imports that name our drop-in's
 * path, and its effective config as its own loader makes it
 * (`containerd config dump`), with or without our drop-in (a view of the
 * drop-in's directory, wiring.c). How the imports are resolved is
 * containerd's resolveImports (cmd/containerd/server/config): an entry is
 * globbed only if it holds '*'; 1.x globs a relative pattern from its
 * working directory, 2.x from the main config's.
 */
/* The CRI runtime section's path in a dump of this containerd. */
const char *const wiring_ctd_node_cri_v2[] = { "plugins",
					       "io.containerd.grpc.v1.cri",
					       "containerd", NULL };
const char *const wiring_ctd_node_cri_v3[] = { "plugins",
					       "io.containerd.cri.v1.runtime",
					       "containerd", NULL };

struct json_object *wiring_ctd_node_runtimes(struct json_object *dump,
					     int major)
{
	const char *const key[] = { "runtimes", NULL };

	return toml_get(toml_get(dump, major == 1 ? wiring_ctd_node_cri_v2 :
						    wiring_ctd_node_cri_v3),
			key);
}

/* `containerd config dump`, in a view without the drop-in or with text. */
int wiring_ctd_node_dump(const struct ctd *c, const char *text,
			 struct json_object **ret, struct sh_error *err)
{
	char *argv[] = { "containerd",
			 "--config",
			 (char *)(c->dump_path[0] ? c->dump_path :
						    c->main_path),
			 "config",
			 "dump",
			 NULL };
	struct wiring_view view = { c->dropin_dir, c->dropin_name, text };

	return wiring_exec_toml(
		argv, access(c->dropin_dir, F_OK) ? NULL : &view, ret, err);
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

int wiring_ctd_node_set_dropin(struct ctd *c, const char *path)
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
			 c->name ?: SH_WIRING_CTD_DROPIN);
		if (wiring_ctd_node_set_dropin(c, path) == 0 && covers(c, e))
			return;
	}
	c->dropin[0] = '\0';
}

static int find_dropin(struct ctd *c, struct sh_error *err)
{
	struct json_object *imports = imports_of(c);

	if (c->o->drop_in) {
		if (wiring_ctd_node_set_dropin(c, c->o->drop_in))
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
	if (c->o->add_import) {
		/* wiring_ctd_import_open() makes the edit */
		c->needs_import = true;
		return 0;
	}
	if (c->dropin[0])
		return error_set(
			err, -ENOENT,
			"containerd reads no drop-in of ours: no imports entry of %s covers %s; add `imports = [\"%s/conf.d/*.toml\"]` above its first [table] and run this again",
			c->main_path, c->dropin, c->main_dir);
	return error_set(
		err, -ENOENT,
		"containerd reads no drop-in of ours: %s imports no directory (DIR/*.toml); add `imports = [\"%s/conf.d/*.toml\"]` above its first [table] and run this again, or run this again with --add-import",
		c->main_path, c->main_dir);
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
	snprintf(c->version, sizeof(c->version), "%s",
		 word[2] + (word[2][0] == 'v'));
	if (c->major > 2)
		return error_set(err, -ENOTSUP,
				 "containerd %d.x: this hook knows 1.x and 2.x",
				 c->major);
	return 0;
}

static int read_main(struct ctd *c, struct sh_error *err)
{
	struct json_object *v = NULL;
	char terr[SH_TOML_ERR_MAX];
	struct stat st;
	char *text;
	int r;

	text = wiring_read(c->main_path, &r);
	if (r == -ENOENT)
		return error_set(
			err, r,
			"%s does not exist, so containerd imports no drop-in: create it with `version = %d` and `imports = [\"%s/conf.d/*.toml\"]` and run this again",
			c->main_path, c->major == 1 ? 2 : 3, c->main_dir);
	if (r)
		return error_errno(err, r, "cannot read %s", c->main_path);
	c->main_text = text;
	c->main_mode = stat(c->main_path, &st) ? 0644 : st.st_mode & 07777;
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

int wiring_ctd_node_probe(struct ctd *c, const struct wiring_opts *o,
			  struct sh_error *err)
{
	char *slash;

	c->o = o;
	snprintf(c->main_path, sizeof(c->main_path), "%s",
		 o->containerd_config ?: SH_WIRING_CTD_CONFIG);
	if (c->main_path[0] != '/')
		return error_set(err, -EINVAL,
				 "--ctd-config %.200s: need an absolute path",
				 c->main_path);
	snprintf(c->main_dir, sizeof(c->main_dir), "%s", c->main_path);
	slash = strrchr(c->main_dir, '/');
	*slash = '\0';
	snprintf(c->spec_dir, sizeof(c->spec_dir), "%s/" SH_WIRING_CTD_SPEC_DIR,
		 c->main_dir);
	return read_version(c, err);
}

int wiring_ctd_node_open(struct ctd *c, const struct wiring_opts *o,
			 struct sh_error *err)
{
	return wiring_ctd_node_probe(c, o, err) ?:
		       read_main(c, err)	?:
						  find_dropin(c, err);
}

void wiring_ctd_node_close(struct ctd *c)
{
	json_object_put(c->main);
	json_object_put(c->before);
	c->main = c->before = NULL;
	free(c->main_text);
	c->main_text = NULL;
	if (c->dump_path[0])
		unlink(c->dump_path);
	if (c->dump_dir[0])
		rmdir(c->dump_dir);
	c->dump_path[0] = c->dump_dir[0] = '\0';
	free(c->main_new);
	c->main_new = NULL;
}

void wiring_ctd_node_spec_path(const struct ctd *c, const char *handler,
			       char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s-base-spec.json", c->spec_dir, handler);
}

bool wiring_ctd_node_differ(struct json_object *a, struct json_object *b,
			    char *path, size_t len)
{
	size_t used = strlen(path);

	if (json_object_get_type(a) != json_object_get_type(b) ||
	    !json_object_is_type(a, json_type_object))
		return !json_object_equal(a, b);
	json_object_object_foreach(a, k, va) {
		struct json_object *vb = NULL;

		snprintf(path + used, len - used, "%s%s", used ? "." : "", k);
		if (!json_object_object_get_ex(b, k, &vb) ||
		    wiring_ctd_node_differ(va, vb, path, len))
			return true;
	}
	json_object_object_foreach(b, kb, vb) {
		(void)vb;
		snprintf(path + used, len - used, "%s%s", used ? "." : "", kb);
		if (!json_object_object_get_ex(a, kb, NULL))
			return true;
	}
	path[used] = '\0';
	return false;
}

/*
 * --add-import. Debian's containerd config.toml,
 * like `containerd config default`, imports no directory, so no drop-in
 * of ours is ever read. With --add-import, `runtime configure` adds the
 * one line that makes it read one, as a single edit that can be undone:
 *
 *  - the line, under a comment that names us, takes the place of an
 *    `imports = []` line (what `containerd config default` writes), or
 *    goes after the file's leading comments and blank lines (top-level
 *    keys come before the first [table]); a main config that imports
 *    files of its own is left to the operator;
 *  - the edited text must parse to the same document plus our imports
 *    entry, and containerd's own loader (`containerd --config CANDIDATE
 *    config dump`, the candidate in a directory of ours) must make of it,
 *    without our drop-in, exactly the config it makes of the file as it
 *    is: a directory that already holds other files would load them too,
 *    and is refused;
 *  - the file as it was is kept beside the base specs, written with the
 *    plan (the main config last, after the drop-in it imports);
 *  - `runtime unconfigure` writes that copy back, byte for byte, while
 *    the main config is still exactly what the edit made of it; a main
 *    config changed since (node tooling rewrote it) is left as it is.
 */
#define IMPORT_NOTE                                                    \
	"# Added by `oci-sockopt-hook runtime configure --add-import`" \
	" (`runtime unconfigure` takes it out).\n"
#define DIFF_PATH_MAX 256

static const char *skip_blank(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Whether the line at s (up to its newline) is `imports = []`. */
static bool empty_imports_line(const char *s)
{
	s = skip_blank(s);
	if (strncmp(s, "imports", 7))
		return false;
	s = skip_blank(s + 7);
	if (*s++ != '=')
		return false;
	s = skip_blank(s);
	if (*s++ != '[')
		return false;
	s = skip_blank(s);
	if (*s++ != ']')
		return false;
	s = skip_blank(s);
	return *s == '\n' || *s == '\0' || *s == '#' || *s == '\r';
}

static const char *line_end(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? nl + 1 : s + strlen(s);
}

int wiring_ctd_import_edit(const char *text, const char *glob, bool has_key,
			   char **ret)
{
	const char *at = NULL, *end = NULL, *s;

	for (s = text; *s; s = line_end(s)) {
		const char *t = skip_blank(s);

		if (has_key && empty_imports_line(s)) {
			if (at)
				return -EINVAL; /* twice: not TOML anyway */
			at = s;
			end = line_end(s);
		} else if (!has_key && *t != '#' && *t != '\n' && *t != '\r') {
			break;
		}
	}
	if (!has_key)
		at = end = s;
	if (!at)
		return -EINVAL;
	if (asprintf(ret, "%.*s%s" IMPORT_NOTE "imports = [\"%s\"]\n%s",
		     (int)(at - text), text,
		     at > text && at[-1] != '\n' ? "\n" : "", glob, end) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* doc less its imports key (a copy), or NULL. */
static struct json_object *without_imports(struct json_object *doc)
{
	struct json_object *copy = NULL;

	if (json_object_deep_copy(doc, &copy, NULL))
		return NULL;
	json_object_object_del(copy, "imports");
	return copy;
}

/* The edited text parses to the main config plus imports = [glob]. */
static bool same_but_imports(const struct ctd *c, const char *glob)
{
	_cleanup_json_ struct json_object *doc = NULL, *a = NULL, *b = NULL;
	struct json_object *imports = NULL;
	char terr[SH_TOML_ERR_MAX];

	if (toml_parse(c->main_new, strlen(c->main_new), &doc, terr) ||
	    !json_object_object_get_ex(doc, "imports", &imports) ||
	    json_object_array_length(imports) != 1 ||
	    strcmp(json_object_get_string(json_object_array_get_idx(imports, 0)) ?:
			   "",
		   glob))
		return false;
	a = without_imports(c->main);
	b = without_imports(doc);
	return a && b && json_object_equal(a, b);
}

/* The candidate where containerd reads it: a file in a directory of ours. */
static int write_candidate(struct ctd *c, struct sh_error *err)
{
	const char *tmp = context_get()->tmpdir ?: "/tmp";
	_cleanup_close_ int fd = -1;
	int r;

	if (snprintf(c->dump_dir, sizeof(c->dump_dir),
		     "%s/oci-sockopt-hook-import.XXXXXX",
		     tmp) >= (int)sizeof(c->dump_dir) ||
	    !mkdtemp(c->dump_dir)) {
		c->dump_dir[0] = '\0';
		return error_errno(err, -errno ?: -ENAMETOOLONG,
				   "cannot make a directory in %.200s", tmp);
	}
	snprintf(c->dump_path, sizeof(c->dump_path), "%s/config.toml",
		 c->dump_dir);
	fd = open(c->dump_path,
		  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	r = fd < 0 ? -errno :
		     fileio_write_all(fd, c->main_new, strlen(c->main_new));
	if (r) {
		c->dump_path[0] = '\0';
		return error_errno(err, r, "cannot write a copy of %s in %s",
				   c->main_path, c->dump_dir);
	}
	return 0;
}

/* containerd's view of the node with the edit, our drop-in left out, is
 * its view without the edit. */
static int check_dump(struct ctd *c, const char *glob, struct sh_error *err)
{
	_cleanup_json_ struct json_object *was = NULL, *now = NULL;
	_cleanup_json_ struct json_object *a = NULL, *b = NULL;
	char path[DIFF_PATH_MAX] = "";
	int r = wiring_ctd_node_dump(c, NULL, &was, err) ?:
			write_candidate(c, err)		 ?:
			wiring_ctd_node_dump(c, NULL, &now, err);

	if (r)
		return r;
	a = without_imports(was);
	b = without_imports(now);
	if (!a || !b)
		return error_set(err, -ENOMEM, "runtime: out of memory");
	if (wiring_ctd_node_differ(a, b, path, sizeof(path)))
		return error_set(
			err, -EEXIST,
			"--add-import: with `imports = [\"%s\"]` containerd would load more than our drop-in ('%s' changes): %s holds other files; import them yourself or move them away",
			glob, path, c->dropin_dir);
	return 0;
}

static int prepare(struct ctd *c, struct sh_error *err)
{
	struct json_object *imports = NULL;
	bool has_key = json_object_object_get_ex(c->main, "imports", &imports);
	char path[PATH_MAX], glob[PATH_MAX];
	const char *dot;
	int r;

	if (!c->o->drop_in) {
		snprintf(path, sizeof(path), "%s/conf.d/%s", c->main_dir,
			 c->name ?: SH_WIRING_CTD_DROPIN);
		if (wiring_ctd_node_set_dropin(c, path))
			return error_set(err, -ENAMETOOLONG,
					 "%.200s: path too long", path);
	}
	if (snprintf(glob, sizeof(glob), "%s/*.toml", c->dropin_dir) >=
		    (int)sizeof(glob) ||
	    strpbrk(glob, "\"\\\n\r\t") || strpbrk(c->dropin_dir, "*?["))
		return error_set(
			err, -EINVAL,
			"--add-import: %.200s cannot be written as an import glob",
			c->dropin_dir);
	dot = strrchr(c->dropin_name, '.');
	if (!dot || strcmp(dot, ".toml"))
		return error_set(
			err, -EINVAL,
			"--add-import: the drop-in %.200s must end in .toml, which the import glob names",
			c->dropin);
	if (has_key && (!json_object_is_type(imports, json_type_array) ||
			json_object_array_length(imports)))
		return error_set(
			err, -ENOTSUP,
			"%s imports files but no directory: --add-import edits only a config with no imports or `imports = []`; add \"%s\" to its imports by hand and run this again",
			c->main_path, glob);
	r = wiring_ctd_import_edit(c->main_text, glob, has_key, &c->main_new);
	if (r == -ENOMEM)
		return error_set(err, r, "runtime: out of memory");
	if (r || !same_but_imports(c, glob))
		return error_set(
			err, -EINVAL,
			"--add-import: cannot add `imports = [\"%s\"]` to %s as one line (its imports key is not on a line of its own): add it by hand",
			glob, c->main_path);
	r = check_dump(c, glob, err);
	if (r)
		return r;
	c->add_import = true;
	return 0;
}

static void copy_path(const struct ctd *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s/" SH_WIRING_CTD_IMPORT_COPY, c->spec_dir);
}

static int plan_copy(struct wiring_plan *plan, const char *path,
		     const char *text, mode_t mode, struct sh_error *err)
{
	int r = text ? wiring_plan_write(plan, path, strdup(text), mode, err) :
		       wiring_plan_remove(plan, path, err);

	if (!r)
		wiring_plan_find(plan, path)->copy = true;
	return r;
}

int wiring_ctd_import_plan(const struct ctd *c, struct wiring_plan *plan,
			   struct sh_error *err)
{
	char copy[PATH_MAX];
	int r;

	if (!c->add_import)
		return 0;
	copy_path(c, copy, sizeof(copy));
	r = plan_copy(plan, copy, c->main_text, c->main_mode, err) ?:
		    wiring_plan_write(plan, c->main_path, strdup(c->main_new),
				      c->main_mode, err);
	if (r)
		return r;
	wiring_plan_note(
		plan,
		"--add-import: %s imports %s/*.toml (the file before: %s)",
		c->main_path, c->dropin_dir, copy);
	return 0;
}

int wiring_ctd_import_undo(struct ctd *c, const char *other,
			   struct wiring_plan *plan, struct sh_error *err)
{
	_cleanup_json_ struct json_object *doc = NULL;
	_cleanup_free_ char *before = NULL, *want = NULL;
	char copy[PATH_MAX], path[PATH_MAX], glob[PATH_MAX];
	char terr[SH_TOML_ERR_MAX];
	int r;

	copy_path(c, copy, sizeof(copy));
	before = wiring_read(copy, &r);
	if (r == -ENOENT)
		return 0;
	if (r)
		return error_errno(err, r, "cannot read %s", copy);
	snprintf(path, sizeof(path), "%s/%s", c->dropin_dir, other);
	if (!access(path, F_OK)) {
		wiring_plan_note(plan, "%s keeps its imports line: %s needs it",
				 c->main_path, path);
		return 0;
	}
	r = plan_copy(plan, copy, NULL, 0, err);
	if (r)
		return r;
	snprintf(glob, sizeof(glob), "%s/*.toml", c->dropin_dir);
	if (!c->main_text || toml_parse(before, strlen(before), &doc, terr) ||
	    wiring_ctd_import_edit(
		    before, glob,
		    json_object_object_get_ex(doc, "imports", NULL), &want) ||
	    strcmp(want, c->main_text)) {
		wiring_plan_note(
			plan,
			"%s changed since --add-import edited it: left as it is (it may still import %s)",
			c->main_path, glob);
		return 0;
	}
	r = wiring_plan_write(plan, c->main_path, before, c->main_mode, err);
	before = NULL;
	if (r)
		return r;
	/* the directory the import named, made by configure or not, is
	 * no one's once empty and imported by nothing */
	wiring_plan_prune(plan, c->dropin_dir);
	return 0;
}

int wiring_ctd_import_open(struct ctd *c, const struct wiring_opts *o,
			   struct sh_error *err)
{
	int r = wiring_ctd_node_open(c, o, err);

	if (r || !c->needs_import)
		return r;
	return prepare(c, err);
}

/*
 * containerd's drop-in: the handlers sockopt and
 * sockopt-bypass, each a copy of the node's default handler (runtime
 * type, binary, cgroup driver and every other option, so their pods run
 * as the node's other pods do) with our base runtime spec and
 * pod_annotations that let sockopt-hook.io/ keys through. A glob of the
 * default handler that would let a pod set SH_WIRING_HANDLER_KEY, which
 * only the base spec may, is left out.
 *
 * Before the plan takes the file, containerd's own loader reads the
 * node's config with it (wiring_ctd_node_dump): the result must be the config
 * without it plus exactly our two handlers. A file imported after ours
 * that replaces the CRI section (1.x), a handler of the same name
 * configured elsewhere (2.x merges it with ours), or a drop-in that
 * containerd reads differently than we wrote it: each stops configure
 * with the first difference.
 */
#define POD_ANNOTATIONS "sockopt-hook.io/*"

/* The default's pod_annotations, less a glob that passes our node key,
 * with ours added. */
static struct json_object *pod_annotations(struct json_object *old)
{
	struct json_object *list = json_object_new_array();

	for (size_t i = 0; list && json_object_is_type(old, json_type_array) &&
			   i < json_object_array_length(old);
	     i++) {
		const char *g = json_object_get_string(
			json_object_array_get_idx(old, i));

		if (g && strcmp(g, POD_ANNOTATIONS) &&
		    fnmatch(g, SH_WIRING_HANDLER_KEY, FNM_PATHNAME))
			json_object_array_add(list, json_object_new_string(g));
	}
	if (list)
		json_object_array_add(list,
				      json_object_new_string(POD_ANNOTATIONS));
	return list;
}

static struct json_object *handler_section(const struct ctd *c,
					   struct json_object *rt,
					   const char *handler)
{
	struct json_object *h = NULL, *old = NULL;
	char spec[PATH_MAX];

	if (json_object_deep_copy(rt, &h, NULL))
		return NULL;
	wiring_ctd_node_spec_path(c, handler, spec, sizeof(spec));
	json_object_object_get_ex(h, "pod_annotations", &old);
	if (json_object_object_add(h, "base_runtime_spec",
				   json_object_new_string(spec)) ||
	    json_object_object_add(h, "pod_annotations",
				   pod_annotations(old))) {
		json_object_put(h);
		return NULL;
	}
	return h;
}

/* obj[key], made an empty object when missing. */
static struct json_object *sub(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (obj && json_object_object_get_ex(obj, key, &v))
		return v;
	v = json_object_new_object();
	if (!v || !obj || json_object_object_add(obj, key, v)) {
		json_object_put(v);
		return NULL;
	}
	return v;
}

int wiring_ctd_dropin_build(const struct ctd *c, struct json_object *rt,
			    struct json_object **doc, struct sh_error *err)
{
	const char *plugin = c->major == 2 && c->main_version == 3 ?
				     "io.containerd.cri.v1.runtime" :
				     "io.containerd.grpc.v1.cri";
	struct json_object *d = json_object_new_object();
	struct json_object *cri = NULL, *runtimes;

	json_object_object_add(d, "version",
			       json_object_new_int(c->main_version));
	/* 1.x: the node's whole CRI section, which ours replaces. */
	if (c->major == 1 &&
	    json_object_deep_copy(
		    toml_get(c->before,
			     (const char *const[]){ "plugins", plugin, NULL }),
		    &cri, NULL) == 0)
		json_object_object_add(sub(d, "plugins"), plugin, cri);
	runtimes = sub(sub(sub(sub(d, "plugins"), plugin), "containerd"),
		       "runtimes");
	for (int i = 0; runtimes && i < SH_WIRING_NR_HANDLERS; i++) {
		struct json_object *h = handler_section(c, rt, handlers[i]);

		if (!h || json_object_object_add(runtimes, handlers[i], h)) {
			json_object_put(h);
			runtimes = NULL;
		}
	}
	if (!runtimes || (c->major == 1 && !cri)) {
		json_object_put(d);
		return error_set(err, -ENOMEM,
				 "runtime: cannot make the containerd drop-in");
	}
	*doc = d;
	return 0;
}

static char *render_dropin(const struct ctd *c, struct json_object *doc)
{
	return wiring_toml_text(
		doc,
		"# (`oci-sockopt-hook runtime unconfigure` removes it).\n"
		"# The runtime handlers sockopt and sockopt-bypass: copies of\n"
		"# the default handler '%s' whose base runtime specs in\n"
		"# %s/ carry the hook.\n%s",
		c->default_name, c->spec_dir,
		c->major == 1 ?
			"# containerd 1.x replaces a whole plugin section with an\n"
			"# imported file's: this one holds the node's CRI section as\n"
			"# containerd resolved it at configure time. Change CRI\n"
			"# settings in the main config, then run configure again.\n" :
			"");
}

/* A dump less what the drop-in may change: our handlers, the list of
 * files loaded. */
static struct json_object *comparable(const struct ctd *c,
				      struct json_object *dump)
{
	struct json_object *copy = NULL;

	if (json_object_deep_copy(dump, &copy, NULL))
		return NULL;
	json_object_object_del(copy, "imports");
	for (int i = 0; i < SH_WIRING_NR_HANDLERS; i++)
		json_object_object_del(wiring_ctd_node_runtimes(copy, c->major),
				       handlers[i]);
	return copy;
}

static int compare(const struct ctd *c, struct json_object *doc,
		   struct json_object *after, struct sh_error *err)
{
	_cleanup_json_ struct json_object *a = comparable(c, c->before);
	_cleanup_json_ struct json_object *b = comparable(c, after);
	struct json_object *want = wiring_ctd_node_runtimes(
		doc, c->major == 2 && c->main_version == 3 ? 2 : 1);
	char path[DIFF_PATH_MAX] = "";

	if (!a || !b)
		return error_set(err, -ENOMEM, "runtime: out of memory");
	if (wiring_ctd_node_differ(a, b, path, sizeof(path)))
		return error_set(
			err, -EINVAL,
			"containerd would load more than the handlers from %s: '%s' changes (a handler of that name configured elsewhere, or a file imported after it)",
			c->dropin, path);
	for (int i = 0; i < SH_WIRING_NR_HANDLERS; i++) {
		struct json_object *got = NULL, *exp = NULL;

		json_object_object_get_ex(wiring_ctd_node_runtimes(after,
								   c->major),
					  handlers[i], &got);
		json_object_object_get_ex(want, handlers[i], &exp);
		path[0] = '\0';
		if (!got ||
		    wiring_ctd_node_differ(exp, got, path, sizeof(path)))
			return error_set(
				err, -EINVAL,
				"containerd does not load handler %s as %s has it ('%s' differs): another file of its config sets it too, or one imported later replaces the CRI section",
				handlers[i], c->dropin, got ? path : "missing");
	}
	return 0;
}

int wiring_ctd_dropin_try(const struct ctd *c, const char *text,
			  struct wiring_plan *plan, struct json_object **after,
			  struct sh_error *err)
{
	bool made = false;
	int r;

	*after = NULL;
	if (access(c->dropin_dir, F_OK) && c->o->dry_run) {
		wiring_plan_note(
			plan,
			"not checked with `containerd config dump`: %s does not exist yet",
			c->dropin_dir);
		return 0;
	}
	/* The view needs the directory: it is ours to make now. */
	if (access(c->dropin_dir, F_OK)) {
		if (mkdir(c->dropin_dir, 0755) < 0)
			return error_errno(err, -errno, "cannot make %s",
					   c->dropin_dir);
		made = true;
	}
	r = wiring_ctd_node_dump(c, text, after, err);
	if (r && made)
		rmdir(c->dropin_dir);
	return r;
}

int wiring_ctd_dropin_plan(const struct ctd *c, struct json_object *doc,
			   struct wiring_plan *plan, struct sh_error *err)
{
	_cleanup_json_ struct json_object *after = NULL;
	char *text = render_dropin(c, doc);
	int r;

	if (!text)
		return error_set(
			err, -ENOMEM,
			"runtime: cannot write the containerd drop-in");
	r = wiring_ctd_dropin_try(c, text, plan, &after, err);
	if (!r && after)
		r = compare(c, doc, after, err);
	if (r) {
		free(text);
		return r;
	}
	return wiring_plan_write(plan, c->dropin, text, 0644, err);
}

/*
 * containerd's part of `runtime configure --nri`, read
 * in containerd's own config (`containerd config dump`, the plugin
 * io.containerd.nri.v1.nri: internal/nri/config.go in 2.x):
 *
 *  - 1.6 has no NRI; 1.7 has it off (disable = true), 2.x on. Off, the
 *    runtime starts containers without any plugin: configure says the
 *    one line to change instead of wiring a plugin nobody calls;
 *  - disable_connections = true admits pre-registered plugins only;
 *  - the default validator (2.2 and later) with reject_oci_hook_adjustment
 *    fails every container a plugin adds a hook to: ours would break
 *    every pod it serves.
 *
 * The fail-closed fallback (for require_annotations.nri): the default
 * handler runs the hook from a base runtime spec, so that a container the
 * plugin missed still meets the hook, which refuses it. A drop-in of its
 * own (99-oci-sockopt-hook-nri.toml beside the handlers' one) sets the
 * default handler's base_runtime_spec to a copy of what that handler's
 * containers get now (wiring_spec.c) plus the hooks, and nothing else:
 * checked with containerd's dump as the handlers' drop-in is. Only 2.x,
 * which merges a drop-in key by key (1.x would take the whole CRI section
 * from it).
 */
#define NRI_PLUGIN "io.containerd.nri.v1.nri"
#define FALLBACK_DROPIN SH_WIRING_CTD_FALLBACK_DROPIN

int wiring_ctd_nri_settings(struct json_object *dump, const char *version,
			    const char *main_path, struct wiring_nri *n,
			    struct sh_error *err)
{
	struct json_object *nri = toml_get(
		dump, (const char *const[]){ "plugins", NRI_PLUGIN, NULL });
	struct json_object *val = toml_get(
		nri, (const char *const[]){ "default_validator", NULL });

	snprintf(n->runtime, sizeof(n->runtime), "containerd %s", version);
	if (!json_object_is_type(nri, json_type_object))
		return error_set(
			err, -ENOTSUP,
			"containerd %s has no NRI (it came in 1.7): wire the handlers instead (runtime configure without --nri)",
			version);
	if (toml_flag(nri, "disable"))
		return error_set(
			err, -ENOTSUP,
			"NRI is off in containerd %s: set `disable = false` under [plugins.'" NRI_PLUGIN
			"'] in %s (or a drop-in it imports), restart containerd and run this again",
			version, main_path);
	if (toml_flag(val, "enable") &&
	    toml_flag(val, "reject_oci_hook_adjustment"))
		return error_set(
			err, -EPERM,
			"containerd's NRI default validator rejects OCI hooks from plugins (reject_oci_hook_adjustment = true under [plugins.'" NRI_PLUGIN
			"'.default_validator] in %s): it would fail every container the plugin gives the hook",
			main_path);
	n->connections = !toml_flag(nri, "disable_connections");
	snprintf(n->connect_fix, sizeof(n->connect_fix),
		 "set `disable_connections = false` under [plugins.'" NRI_PLUGIN
		 "'] in %.120s, or use --nri plugin",
		 main_path);
	toml_text(nri, "socket_path", SH_WIRING_NRI_SOCKET, n->socket,
		  sizeof(n->socket));
	toml_text(nri, "plugin_path", SH_WIRING_NRI_PLUGIN_DIR, n->plugin_dir,
		  sizeof(n->plugin_dir));
	return 0;
}

int wiring_ctd_nri_read(const struct wiring_opts *o, struct wiring_nri *n,
			struct sh_error *err)
{
	_cleanup_json_ struct json_object *dump = NULL;
	struct ctd c = { 0 };
	int r = wiring_ctd_node_probe(&c, o, err) ?:
			wiring_ctd_node_dump(&c, NULL, &dump, err);

	if (r)
		goto out;
	r = wiring_ctd_nri_settings(dump, c.version, c.main_path, n, err);
out:
	wiring_ctd_node_close(&c);
	return r;
}

/* obj[key], made an empty object when missing; NULL on no memory. */
static struct json_object *at(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (!obj || json_object_object_get_ex(obj, key, &v))
		return v;
	v = json_object_new_object();
	if (v && json_object_object_add(obj, key, v)) {
		json_object_put(v);
		return NULL;
	}
	return v;
}

/* The drop-in: the default handler's base_runtime_spec, nothing else. */
static struct json_object *fallback_doc(const struct ctd *c, const char *spec)
{
	const char *plugin = c->main_version == 3 ?
				     "io.containerd.cri.v1.runtime" :
				     "io.containerd.grpc.v1.cri";
	struct json_object *d = json_object_new_object();
	struct json_object *h = at(
		at(at(at(at(d, "plugins"), plugin), "containerd"), "runtimes"),
		c->default_name);

	if (!h ||
	    json_object_object_add(d, "version",
				   json_object_new_int(c->main_version)) ||
	    json_object_object_add(h, "base_runtime_spec",
				   json_object_new_string(spec))) {
		json_object_put(d);
		return NULL;
	}
	return d;
}

/* Whether containerd loads exactly the default handler's new spec. */
static int check(const struct ctd *c, const char *spec,
		 struct json_object *after, struct sh_error *err)
{
	_cleanup_json_ struct json_object *want = NULL, *got = NULL;
	char path[DIFF_PATH_MAX] = "";
	struct json_object *h = NULL;

	if (json_object_deep_copy(c->before, &want, NULL) ||
	    json_object_deep_copy(after, &got, NULL))
		return error_set(err, -ENOMEM, "runtime: out of memory");
	json_object_object_del(want, "imports");
	json_object_object_del(got, "imports");
	json_object_object_get_ex(wiring_ctd_node_runtimes(want, c->major),
				  c->default_name, &h);
	json_object_object_add(h, "base_runtime_spec",
			       json_object_new_string(spec));
	if (wiring_ctd_node_differ(want, got, path, sizeof(path)))
		return error_set(
			err, -EINVAL,
			"containerd would load more than the default handler's base_runtime_spec from %s: '%s' changes (a file imported after it, or a setting of the same key elsewhere)",
			c->dropin, path);
	return 0;
}

static char *render_nri(const struct ctd *c, struct json_object *doc)
{
	return wiring_toml_text(
		doc,
		"# (`oci-sockopt-hook runtime unconfigure --nri MODE` removes it).\n"
		"# The NRI plugin's fallback: the default handler '%s' runs the\n"
		"# hook from %s/, so that a container\n"
		"# the plugin missed meets require_annotations.nri.\n",
		c->default_name, c->spec_dir);
}

static int plan_fallback(struct ctd *c, const struct wiring_hook *hook,
			 struct wiring_plan *plan, struct sh_error *err)
{
	_cleanup_free_ char *source = NULL;
	_cleanup_json_ struct json_object *doc = NULL, *after = NULL;
	struct json_object *rt = NULL;
	char spec[PATH_MAX], *spec_text = NULL, *text;
	bool generated;
	int r = wiring_ctd_default(c, &rt, err) ?:
			wiring_ctd_spec_source(c, rt, &source, &generated, err);

	if (r)
		return r;
	/* the default handler's own capabilities stay: its pods asked for
	 * nothing of ours */
	r = wiring_spec_build(source, generated, NULL, hook,
			      /* keep_net_raw= */ true, &spec_text, err);
	if (r)
		return r;
	wiring_ctd_node_spec_path(c, c->default_name, spec, sizeof(spec));
	r = wiring_plan_write(plan, spec, spec_text, 0644, err);
	if (r)
		return r;
	doc = fallback_doc(c, spec);
	text = doc ? render_nri(c, doc) : NULL;
	if (!text)
		return error_set(err, -ENOMEM, "runtime: out of memory");
	r = wiring_ctd_dropin_try(c, text, plan, &after, err);
	if (r)
		goto fail;
	if (after) {
		r = check(c, spec, after, err);
		if (r)
			goto fail;
	}
	return wiring_plan_write(plan, c->dropin, text, 0644, err);
fail:
	free(text);
	return r;
}

int wiring_ctd_nri_fallback(const struct wiring_opts *o,
			    const struct wiring_hook *hook,
			    struct wiring_plan *plan, struct sh_error *err)
{
	struct ctd c = { .name = FALLBACK_DROPIN };
	int r = wiring_ctd_import_open(&c, o, err);

	if (r)
		goto out;
	if (c.major == 1) {
		r = error_set(
			err, -ENOTSUP,
			"containerd %s takes a drop-in's whole CRI section: the NRI fallback needs containerd 2.x",
			c.version);
		goto out;
	}
	r = plan_fallback(&c, hook, plan, err) ?:
		    wiring_ctd_import_plan(&c, plan, err);
	if (r)
		goto out;
	wiring_plan_note(
		plan,
		"fallback: containerd's default handler '%s' runs the hook, for require_annotations.nri",
		c.default_name);
out:
	wiring_ctd_node_close(&c);
	return r;
}

int wiring_ctd_nri_unfallback(const struct wiring_opts *o,
			      struct wiring_plan *plan, struct sh_error *err)
{
	struct ctd c = { .name = FALLBACK_DROPIN };
	_cleanup_free_ char *text = NULL;
	struct json_object *rt = NULL;
	struct sh_error ignored = { 0 };
	char spec[PATH_MAX], path[PATH_MAX];
	int r;

	/* the default handler's name is in the dump; without it, the
	 * drop-in names nothing more to remove */
	if (wiring_ctd_node_open(&c, o, &ignored) && !c.dropin[0]) {
		if (!c.main_dir[0])
			return error_set(err, ignored.code ?: -EINVAL, "%s",
					 ignored.msg);
		snprintf(path, sizeof(path), "%s/conf.d/" FALLBACK_DROPIN,
			 c.main_dir);
		wiring_ctd_node_set_dropin(&c, o->drop_in ?: path);
	}
	text = wiring_read(c.dropin, &r);
	if (text && strncmp(text, SH_WIRING_MARK, strlen(SH_WIRING_MARK))) {
		wiring_ctd_node_close(&c);
		return error_set(
			err, -EPERM,
			"%s was not written by runtime configure: left alone",
			c.dropin);
	}
	r = wiring_plan_remove(plan, c.dropin, err) ?:
		    wiring_ctd_import_undo(&c, SH_WIRING_CTD_DROPIN, plan, err);
	if (!r && !wiring_ctd_default(&c, &rt, &ignored)) {
		wiring_ctd_node_spec_path(&c, c.default_name, spec,
					  sizeof(spec));
		r = wiring_plan_remove(plan, spec, err);
	}
	wiring_plan_prune(plan, c.spec_dir);
	wiring_ctd_node_close(&c);
	return r;
}
