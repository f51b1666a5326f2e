// SPDX-License-Identifier: GPL-2.0-only
/*
 * --add-import (wiring_ctd_import.h). Debian's containerd config.toml,
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
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "lib/cleanup.h"
#include "lib/context.h"
#include "lib/fileio.h"
#include "wiring/toml/toml.h"
#include "wiring/wiring.h"
#include "wiring/wiring_ctd_import.h"
#include "wiring/wiring_ctd_node.h"

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
			   char **out)
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
	if (asprintf(out, "%.*s%s" IMPORT_NOTE "imports = [\"%s\"]\n%s",
		     (int)(at - text), text,
		     at > text && at[-1] != '\n' ? "\n" : "", glob, end) < 0) {
		*out = NULL;
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
