/* SPDX-License-Identifier: GPL-2.0-only */
/* --add-import: containerd's main config made to import our drop-in's
 * directory, as one edit that `runtime unconfigure` undoes. */
#ifndef SH_WIRING_CTD_IMPORT_H
#define SH_WIRING_CTD_IMPORT_H

#include <stdbool.h>

#include "lib/error.h"

struct ctd;
struct wiring_opts;
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

/* text with our imports line for glob, into *out: in place of its one
 * `imports = []` line (has_key; -EINVAL when there is none or more), else
 * after its leading comments and blank lines. Removing the two lines
 * gives text back. */
int wiring_ctd_import_edit(const char *text, const char *glob, bool has_key,
			   char **out);

#endif /* SH_WIRING_CTD_IMPORT_H */
