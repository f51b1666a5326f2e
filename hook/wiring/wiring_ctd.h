/* SPDX-License-Identifier: GPL-2.0-only */
/* containerd's wiring: what a node's containerd is made of, --add-import,
 * the handlers' drop-in, `runtime configure` and `unconfigure`, and the
 * NRI settings and fallback. */
#ifndef SH_WIRING_CTD_H
#define SH_WIRING_CTD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/error.h"

/* A node's containerd: version, main config, drop-in path, config dump. */
#define SH_WIRING_CTD_CONFIG "/etc/containerd/config.toml"
/* Ours, in the directory an import glob names; late in a sorted glob, as
 * containerd 1.x needs (the last file to hold the CRI section wins). */
#define SH_WIRING_CTD_DROPIN "99-oci-sockopt-hook.toml"
/* The NRI fallback's, beside it. */
#define SH_WIRING_CTD_FALLBACK_DROPIN "99-oci-sockopt-hook-nri.toml"
/* The base specs, beside the main config. */
#define SH_WIRING_CTD_SPEC_DIR "oci-sockopt-hook"

struct json_object;
struct wiring_opts;

struct ctd {
	const struct wiring_opts *o;
	const char *
		name; /* the drop-in's file name, or NULL: SH_WIRING_CTD_DROPIN */
	int major; /* containerd's: 1 or 2 */
	char version[32]; /* as containerd --version says it */
	int main_version; /* the main config's version: 2 or 3 */
	char main_path[PATH_MAX];
	char main_dir[PATH_MAX];
	char spec_dir[PATH_MAX];
	char dropin[PATH_MAX];
	char dropin_dir[PATH_MAX];
	const char *dropin_name; /* in dropin */
	char default_name[128]; /* the default runtime handler */
	struct json_object *main; /* the main config */
	char *main_text; /* its text */
	mode_t main_mode;
	struct json_object *before; /* the config dump without our drop-in */
	/* --add-import: the main config with our imports line (main_new),
	 * which every dump reads (dump_path, in a directory of our own) */
	bool add_import;
	/* find_dropin(): no import covers the drop-in, --add-import given */
	bool needs_import;
	char *main_new;
	char dump_dir[PATH_MAX];
	char dump_path[PATH_MAX];
};

/* Where a dump keeps the CRI runtime settings: 1.x, 2.x. */
extern const char *const wiring_ctd_node_cri_v2[];
extern const char *const wiring_ctd_node_cri_v3[];

/* containerd's version and the main config's path only (for what needs
 * no drop-in: its effective config, which a missing main config leaves at
 * containerd's defaults). */
int wiring_ctd_node_probe(struct ctd *c, const struct wiring_opts *o,
			  struct sh_error *err);
/* containerd's version, its main config, the drop-in's path. */
int wiring_ctd_node_open(struct ctd *c, const struct wiring_opts *o,
			 struct sh_error *err);
void wiring_ctd_node_close(struct ctd *c);
/* `containerd config dump` with the drop-in left out (text NULL) or as text. */
int wiring_ctd_node_dump(const struct ctd *c, const char *text,
			 struct json_object **ret, struct sh_error *err);
/* The runtimes table of a dump. */
struct json_object *wiring_ctd_node_runtimes(struct json_object *dump,
					     int major);
void wiring_ctd_node_spec_path(const struct ctd *c, const char *handler,
			       char *buf, size_t len);
/* The drop-in's path (absolute) into c->dropin, _dir and _name. */
int wiring_ctd_node_set_dropin(struct ctd *c, const char *path);

/* The first key path where a and b differ, into path; false if none. */
bool wiring_ctd_node_differ(struct json_object *a, struct json_object *b,
			    char *path, size_t len);

/* --add-import: containerd's main config made to import our drop-in's
 * directory, as one edit that `runtime unconfigure` undoes. */
struct ctd;
struct wiring_plan;

/* The copy of the main config as it was before the edit: beside the base
 * specs, so that unconfigure finds it and the spec directory's pruning
 * takes it with them. */
#define SH_WIRING_CTD_IMPORT_COPY "main-config-before-import.toml"

/* The copy and the edited main config into plan, after the drop-in. */
int wiring_ctd_import_plan(const struct ctd *c, struct wiring_plan *plan,
			   struct sh_error *err);
/* unconfigure: the main config back as the copy has it, when it is still
 * as configure left it and no other drop-in of ours (other, a file name
 * in the drop-in's directory) needs the import; else a note. */
int wiring_ctd_import_undo(struct ctd *c, const char *other,
			   struct wiring_plan *plan, struct sh_error *err);
/* wiring_ctd_node_open(), then, for a main config that imports no
 * directory and --add-import: the edited text into c->main_new, checked
 * (it parses, and containerd's `config dump` of it without our drop-in
 * is the node's config as it is), and every later dump of c reads it
 * (c->dump_path). c->dropin is set. */
int wiring_ctd_import_open(struct ctd *c, const struct wiring_opts *o,
			   struct sh_error *err);

/* text with our imports line for glob, into *ret: in place of its one
 * `imports = []` line (has_key; -EINVAL when there is none or more), else
 * after its leading comments and blank lines. Removing the two lines
 * gives text back. */
int wiring_ctd_import_edit(const char *text, const char *glob, bool has_key,
			   char **ret);

/* containerd's drop-in: its document, checked against containerd itself. */
/* The drop-in's document: the handlers made from rt, the default
 * handler's section of c->before (see wiring_ctd.c for its shape). */
int wiring_ctd_dropin_build(const struct ctd *c, struct json_object *rt,
			    struct json_object **doc, struct sh_error *err);
/* Its text, checked with `containerd config dump` (our handlers and
 * nothing else change), into plan. */
int wiring_ctd_dropin_plan(const struct ctd *c, struct json_object *doc,
			   struct wiring_plan *plan, struct sh_error *err);

/* `containerd config dump` with text as c's drop-in, into *after (the
 * drop-in's directory made for the view; a dry run where it is missing:
 * a note, *after NULL). */
int wiring_ctd_dropin_try(const struct ctd *c, const char *text,
			  struct wiring_plan *plan, struct json_object **after,
			  struct sh_error *err);

/* containerd's wiring: `runtime configure` and `unconfigure`. */
struct wiring_hook;

/* The base specs and the drop-in, into plan; the files of ours out. */
int wiring_ctd_configure(const struct wiring_opts *o,
			 const struct wiring_hook *hook,
			 struct wiring_plan *plan, struct sh_error *err);
int wiring_ctd_unconfigure(const struct wiring_opts *o,
			   struct wiring_plan *plan, struct sh_error *err);

/* The default handler's section in the dump without our drop-in (the
 * dump kept in c->before, the name in c->default_name). */
int wiring_ctd_default(struct ctd *c, struct json_object **rt,
		       struct sh_error *err);
/* The spec containerd gives the default handler's containers: its own
 * base_runtime_spec file, or `ctr oci spec` (generated). */
int wiring_ctd_spec_source(struct ctd *c, struct json_object *rt, char **text,
			   bool *generated, struct sh_error *err);

/* containerd's NRI settings and the NRI fallback. */
struct wiring_nri;

/* n from a `containerd config dump`; a runtime whose NRI cannot serve the
 * plugin is refused, in one line saying what to change in main_path. */
int wiring_ctd_nri_settings(struct json_object *dump, const char *version,
			    const char *main_path, struct wiring_nri *n,
			    struct sh_error *err);
/* The same from the node's containerd. */
int wiring_ctd_nri_read(const struct wiring_opts *o, struct wiring_nri *n,
			struct sh_error *err);
/* The default handler's base spec with the hook, and its drop-in. */
int wiring_ctd_nri_fallback(const struct wiring_opts *o,
			    const struct wiring_hook *hook,
			    struct wiring_plan *plan, struct sh_error *err);
int wiring_ctd_nri_unfallback(const struct wiring_opts *o,
			      struct wiring_plan *plan, struct sh_error *err);

#endif /* SH_WIRING_CTD_H */
