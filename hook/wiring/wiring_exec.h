/* SPDX-License-Identifier: GPL-2.0-only */
/* Running a runtime's own tools and reading what they print. */
#ifndef SH_WIRING_EXEC_H
#define SH_WIRING_EXEC_H

#include "lib/error.h"

/* dir as the command sees it: name left out (text NULL) or holding text,
 * every other entry as it is. dir must exist. */
struct wiring_view {
	const char *dir;
	const char *name;
	const char *text;
};

/*
 * Runs argv (PATH searched), optionally in a view, and gives its stdout
 * (NUL-terminated, malloc'd) in *out when it exits 0 within 60 s. Else
 * one line in err with the last line the command wrote on stderr.
 */
int wiring_exec_run(char *const argv[], const struct wiring_view *view,
		    char **out, struct sh_error *err);

/* The same for a command that prints TOML: the document in *out. */
struct json_object;
int wiring_exec_toml(char *const argv[], const struct wiring_view *view,
		     struct json_object **out, struct sh_error *err);

#endif /* SH_WIRING_EXEC_H */
