/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a run takes from its environment, made once in main before any
 * command runs (crun's libcrun_context_t): the modules read it here and
 * never the environment itself. A field left NULL (or false) is not
 * set, and the module's default applies, as for an empty variable.
 */
#ifndef SH_CONTEXT_H
#define SH_CONTEXT_H

#include <stdbool.h>

struct sh_context {
	const char *config; /* OCI_SOCKOPT_HOOK_CONFIG: the operator config
			     * when no --config names one (config.h) */
	const char *state_dir; /* OCI_SOCKOPT_HOOK_STATE_DIR (state.h) */
	const char *pin_dir; /* OCI_SOCKOPT_HOOK_PIN_DIR (pin.h) */
	const char *keys_cgroup; /* OCI_SOCKOPT_HOOK_KEYS_CGROUP (keys.h) */
	const char *modules_dir; /* OCI_SOCKOPT_HOOK_MODULES_DIR (families.h) */
	const char *path; /* PATH: where the runtimes' tools are looked for */
	const char *tmpdir; /* TMPDIR, unless the run is set-user-ID */
	bool timing; /* OCI_SOCKOPT_HOOK_TIMING=1: the steps' times on
		      * stderr (timing.h) */
};

/* Replaces the run's context with a copy of ctx (the strings are not
 * copied: they must outlive the run, as the environment's do). */
void context_set(const struct sh_context *ctx);
/* The run's context; all unset until context_set(). */
const struct sh_context *context_get(void);
/* s, or NULL when s is NULL or "" (an empty variable is not set). */
const char *context_value(const char *s);

#endif /* SH_CONTEXT_H */
