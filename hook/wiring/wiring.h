/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `runtime configure` and `runtime unconfigure`: the files that wire the
 * hook into a container runtime (wiring_containerd.c, wiring_crio.c,
 * wiring_hooksd.c, wiring_cdi.c), planned in full before anything is
 * written, printed as a diff for --dry-run, then written all or nothing.
 * Only files of our own are ever written or removed: a drop-in, base
 * runtime specs, a hooks.d file, the CDI spec; a runtime's main config only with --add-import
 * (wiring_ctd.c), which keeps a copy and puts it back.
 */
#ifndef SH_WIRING_H
#define SH_WIRING_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/error.h"

#define SH_WIRING_MAX_FILES 8
#define SH_WIRING_MAX_ENV 8
#define SH_WIRING_MAX_NOTES 8
#define SH_WIRING_NOTE_MAX 512
#define SH_WIRING_MAX_PRUNE 2
/* The RuntimeClass handlers that run the hook (examples/kubernetes/
 * runtimeclass.yaml): the base spec or default_annotations name each one
 * in SH_WIRING_HANDLER_KEY, which require_annotations reads. */
#define SH_WIRING_HANDLERS                  \
	{                                   \
		"sockopt", "sockopt-bypass" \
	}
#define SH_WIRING_NR_HANDLERS 2
#define SH_WIRING_HANDLER_KEY "node.sockopt-hook.io/runtime-handler"
/* The first line of every TOML file we write: unconfigure removes only
 * a file that starts with it. */
#define SH_WIRING_MARK "# Written by `oci-sockopt-hook runtime configure`"

struct json_object;
/* A drop-in's text: SH_WIRING_MARK, the comment fmt makes (its lines
 * start with "# "), then doc as TOML; NULL when out of memory. */
char *wiring_toml_text(struct json_object *doc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct wiring_opts {
	const char *runtime; /* containerd, crio, podman */
	bool dry_run;
	bool restart; /* restart the runtime's unit when a file changed */
	bool keep_net_raw; /* leave CAP_NET_RAW in the base spec */
	const char *hook; /* the binary the runtime runs (absolute) */
	const char *config; /* the operator config the hook is told */
	const char *env[SH_WIRING_MAX_ENV]; /* more KEY=VALUE for the hook */
	int nr_env;
	const char *containerd_config; /* containerd's main config */
	const char *drop_in; /* the drop-in's path, if not derived */
	const char *hooks_dir; /* where the hooks.d file goes */
	const char *crio_dir; /* CRI-O's crio.conf.d */
	const char *unit; /* the systemd unit --restart restarts */
	const char *nri; /* --nri: service, plugin or pod; NULL: handlers */
	bool add_import; /* containerd: add the imports line it lacks */
	bool cdi; /* --cdi: the CDI spec (wiring_cdi.c) */
	const char *docker_config; /* daemon.json, if not /etc/docker's */
	bool docker_default; /* --default-runtime: Docker's default */
	const char *cdi_dir; /* where it goes, if not /etc/cdi */
};

/* One file the plan writes (text) or removes (text NULL). */
struct wiring_file {
	char *path;
	char *text; /* the new content, or NULL to remove */
	char *old; /* the content now, or NULL when there is none */
	mode_t mode;
	bool link; /* a symbolic link: text and old are its target */
	bool unit; /* a systemd unit: systemd reads it, not the runtime */
	bool copy; /* a backup: its diff is not shown */
};

struct wiring_plan {
	struct wiring_file files[SH_WIRING_MAX_FILES];
	int nr_files;
	char notes[SH_WIRING_MAX_NOTES][SH_WIRING_NOTE_MAX]; /* said after */
	int nr_notes;
	/* directories of ours, removed once empty */
	char prune[SH_WIRING_MAX_PRUNE][PATH_MAX];
	bool pruned[SH_WIRING_MAX_PRUNE];
	int actions; /* things done beside the files (systemctl) */
};

/* Adds path with its new text (taken over, even on error), reading what
 * it holds now. remove: text is NULL and the file goes. */
int wiring_plan_write(struct wiring_plan *plan, const char *path, char *text,
		      mode_t mode, struct sh_error *err);
int wiring_plan_remove(struct wiring_plan *plan, const char *path,
		       struct sh_error *err);
/* The same for a file that is_ours recognises, or that is already gone;
 * another's is refused: "PATH NOT_OURS: left alone". */
int wiring_plan_remove_ours(struct wiring_plan *plan, const char *path,
			    bool (*is_ours)(const char *text),
			    const char *not_ours, struct sh_error *err);
/* The same for a symbolic link to target (NULL: remove it). A file there
 * that is no link is refused. */
int wiring_plan_link(struct wiring_plan *plan, const char *path,
		     const char *target, struct sh_error *err);
/* The file the plan has for path, or NULL. */
struct wiring_file *wiring_plan_find(struct wiring_plan *plan,
				     const char *path);
/* Whether f changes. */
bool wiring_file_changes(const struct wiring_file *f);
/* dir goes after the plan is written, if it is empty then. */
void wiring_plan_prune(struct wiring_plan *plan, const char *dir);
void wiring_plan_note(struct wiring_plan *plan, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* How many files the plan changes (an unchanged file does not count),
 * and the actions it took (a unit enabled, started, stopped). */
int wiring_plan_changes(const struct wiring_plan *plan);
/* How many of those files the runtime reads (not systemd units). */
int wiring_plan_runtime_changes(const struct wiring_plan *plan);
/* What the plan would do, as a line diff per changed file. */
void wiring_plan_print(const struct wiring_plan *plan, FILE *out, bool dry_run);
/* Writes every file (each through a temp file and a rename) or none: a
 * failure puts back what was there. */
int wiring_plan_apply(struct wiring_plan *plan, struct sh_error *err);
void wiring_plan_free(struct wiring_plan *plan);

/* The binary a runtime will run: *hook (--hook-path), else this one
 * (its real path, into buf of PATH_MAX). It runs as root for every
 * container, so it must be root's alone: else one line in err. */
int wiring_hook_binary(const char **hook, char *buf, struct sh_error *err);

/* The file's text, or NULL (errno-style code in *r: -ENOENT when absent). */
char *wiring_read(const char *path, int *r);

/* A unified line diff, for `runtime configure --dry-run`: "--- path" /
 * "+++ path" and the changed lines with 3 lines of context ("@@" hunks);
 * old or new_text NULL: the file is made or removed. */
int wiring_diff_print(FILE *out, const char *old, const char *new_text,
		      const char *path);

/* Running a runtime's own tools and reading what they print. */

/* dir as the command sees it: name left out (text NULL) or holding text,
 * every other entry as it is. dir must exist. */
struct wiring_view {
	const char *dir;
	const char *name;
	const char *text;
};

/*
 * Runs argv (PATH searched), optionally in a view, and gives its stdout
 * (NUL-terminated, malloc'd) in *ret when it exits 0 within 60 s. Else
 * one line in err with the last line the command wrote on stderr.
 */
int wiring_exec_run(char *const argv[], const struct wiring_view *view,
		    char **ret, struct sh_error *err);

/* The same for a command that prints TOML: the document in *out. */
struct json_object;
int wiring_exec_toml(char *const argv[], const struct wiring_view *view,
		     struct json_object **ret, struct sh_error *err);

#endif /* SH_WIRING_H */
