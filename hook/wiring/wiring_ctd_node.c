// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a node's containerd is made of, found out once for `runtime
 * configure` and `features` (wiring_ctd_node.h): its version (containerd
 * --version), its main config and the imports that name our drop-in's
 * path, and its effective config as its own loader makes it
 * (`containerd config dump`), with or without our drop-in (a view of the
 * drop-in's directory, wiring_exec.c). How the imports are resolved is
 * containerd's resolveImports (cmd/containerd/server/config): an entry is
 * globbed only if it holds '*'; 1.x globs a relative pattern from its
 * working directory, 2.x from the main config's.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "lib/cleanup.h"
#include "wiring/toml/toml.h"
#include "wiring/wiring.h"
#include "wiring/wiring_ctd_node.h"
#include "wiring/wiring_exec.h"

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
			 struct json_object **out, struct sh_error *err)
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
		argv, access(c->dropin_dir, F_OK) ? NULL : &view, out, err);
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
