/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `apply`: every running container the hook polices gets what the operator
 * config gives it now, without a restart. Its effective policy is resolved
 * again from what it asked for at start (policy_reresolve()); when that
 * differs from what its cgroup has, or it still runs a generic program,
 * the specialised copies (pinned by preload, shared, or loaded here) take
 * the old programs' place atomically (apply.h) and its attachment is
 * rewritten, all or nothing. A container whose annotations prestart would
 * refuse now gets the node's defaults instead (policy_defaults()), never
 * its old programs, and the change says why; one the config no longer
 * gives a policy keeps its programs and is reported.
 */
#ifndef SH_APPLY_H
#define SH_APPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "lib/error.h"
#include "policy/policy.h"
#include "prog/load.h"
#include "state/state.h"

enum apply_outcome {
	APPLY_UNCHANGED, /* its cgroup has what the config gives it */
	APPLY_UPDATED, /* its programs were replaced (dry run: would be) */
	APPLY_LEFT, /* no policy for it, or refused: its programs stay */
	APPLY_FAILED, /* could not be updated: its programs stay */
	APPLY_GONE, /* its container is gone: gc releases it */
};

#define APPLY_CHANGE_MAX 512

/* One container, as apply saw it. */
struct apply_entry {
	const struct sh_attachment *att; /* as it was */
	enum apply_outcome outcome;
	uint64_t from, to; /* its policy hash before, and the config's (0:
			    * none, or unknown) */
	char change[APPLY_CHANGE_MAX]; /* what changes, for people */
	const char *reason; /* LEFT and FAILED: a stable token */
	char why[SH_ERROR_MSG_MAX]; /* LEFT and FAILED: one line */
};

struct apply_totals {
	int updated, unchanged, left, failed, gone;
};

typedef void (*apply_report_fn)(const struct apply_entry *e, void *data);

/*
 * Reads the config at path (after making sure no prestart that read an
 * older one is still attaching: state.h) and applies it to every
 * attachment; fn hears of each container. 0, or a negative errno (err) when
 * the config or the state directory cannot be had.
 */
int apply_run(const char *path, bool dry_run, apply_report_fn fn, void *data,
	      struct apply_totals *t, struct sh_error *err);

/* "unchanged", "updated", ...: stable tokens. */
const char *apply_outcome_name(enum apply_outcome o);

/* The policy hash of what a container runs: its programs' hashes, by
 * kind (a generic program stands for the copy it stands in for). */
uint64_t apply_progs_hash(const struct sh_progs *progs);
/* Whether one of them is a generic program (generic.h). */
bool apply_runs_generic(const struct sh_progs *progs);

/* What cfg gives a running container now. */
struct apply_target {
	struct sh_effective eff;
	bool bypass; /* its sock_create copy is the bypass variant */
	uint64_t hash[SH_PROG_KINDS]; /* 0: no program of that kind */
	uint64_t total; /* as apply_progs_hash() combines them */
	/* Its annotations are refused now: the node's defaults, and why. */
	bool defaults;
	char refused[SH_ERROR_MSG_MAX];
};

/*
 * bypass_ok: whether this kernel takes the bypass variant. Where prestart
 * would refuse the container's annotations now, the target is the node's
 * defaults (t->defaults, t->refused says why). The error is a refusal of
 * the defaults themselves (bypass-prot-mem on a kernel without it, with
 * on_unsupported 'fail'), or, with -ENODATA, that the config gives it no
 * policy any more.
 */
int apply_target_of(const struct sh_config *cfg,
		    const struct sh_attachment *att, bool bypass_ok,
		    struct apply_target *t, struct sh_error *err);

/* A running container's policy hash against the config's, for status. */
struct apply_check {
	uint64_t hash; /* what its programs run */
	uint64_t config_hash; /* what the config gives it now; 0: none, or
			       * refused (reason and why) */
	bool generic; /* one of its programs is a generic one */
	const char *reason;
	char why[SH_ERROR_MSG_MAX];
};

void apply_check(const struct sh_config *cfg, const struct sh_attachment *att,
		 bool bypass_ok, struct apply_check *ret);
/* It runs exactly what the config gives it, from its own copies. */
bool apply_check_current(const struct apply_check *c);

/*
 * Replacing what a running container's cgroup enforces (`apply`). Each
 * attach type both the old and the new programs have is swapped in one
 * BPF_PROG_ATTACH with BPF_F_REPLACE: the kernel puts the new program in
 * the old one's place in the cgroup's list and publishes the cgroup's new
 * effective program arrays (and its descendants') with one pointer store
 * each, so every call runs the old program or the new one, never none,
 * and once a call has seen the new one no later call sees the old one. A
 * type only the new programs have is attached first, one only the old had
 * is detached last. All or nothing: a failure puts back what was done.
 */

/*
 * Moves the cgroup cg_fd from the programs in old to those l has
 * (load_policy(), LOAD_SPECIALISED); out is what is attached now. A
 * generic program's rules for the cgroup stay while the cgroup does (gc).
 */
int apply_replace_commit(int cg_fd, const struct sh_progs *old,
			 const struct sh_loaded *l, struct sh_progs *ret,
			 struct sh_error *err);
/* Puts old back in the place of now (after a later step failed). */
int apply_replace_undo(int cg_fd, const struct sh_progs *old,
		       const struct sh_progs *now, struct sh_error *err);

#endif /* SH_APPLY_H */
