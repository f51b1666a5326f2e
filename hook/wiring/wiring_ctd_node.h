/* SPDX-License-Identifier: GPL-2.0-only */
/* A node's containerd: version, main config, drop-in path, config dump. */
#ifndef SH_WIRING_CTD_NODE_H
#define SH_WIRING_CTD_NODE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/error.h"

#define SH_WIRING_CTD_CONFIG "/etc/containerd/config.toml"
/* Ours, in the directory an import glob names; late in a sorted glob, as
 * containerd 1.x needs (the last file to hold the CRI section wins). */
#define SH_WIRING_CTD_DROPIN "99-oci-sockopt-hook.toml"
/* The NRI fallback's, beside it (wiring_ctd_nri.c). */
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
			 struct json_object **out, struct sh_error *err);
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

#endif /* SH_WIRING_CTD_NODE_H */
