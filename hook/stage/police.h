/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Policing one container whose effective policy is known: load and verify
 * the programs, find or make the cgroup of its init, attach, record. Any
 * error undoes everything, and err holds the one line to report.
 */
#ifndef SH_POLICE_H
#define SH_POLICE_H

#include <stdbool.h>

#include "config/config.h"
#include "input/oci.h"
#include "lib/error.h"
#include "policy/policy.h"
#include "state/stats.h"

/* What a prestart that succeeded did, for the node's stats. */
struct prestart_outcome {
	enum stats_outcome outcome; /* ATTACHED, UNPOLICED or FALLBACK */
	enum sh_reason reason; /* why FALLBACK, else SH_REASON_NONE */
	struct sh_cause cause; /* for FALLBACK: what asked for it */
	/* -EAGAIN: the config file changed since cfg was read from it, and
	 * nothing was done: read it again and run again. */
	bool config_changed;
	/* Set by the caller: use cfg even so (the last try). */
	bool config_last_try;
};

/*
 * Loads, finds the cgroup of st->pid, attaches, records under st->id: all
 * or nothing; nothing to do for an empty policy or a container already
 * attached. With reap, a reaper releases the record when the cgroup
 * empties even when the runtime made it (a pod sandbox no poststop will
 * come for: sandbox.c). done->config_last_try is the caller's (kept).
 */
int police_container(const struct sh_config *cfg, const struct oci_state *st,
		     const struct sh_effective *eff, bool reap,
		     struct prestart_outcome *done, struct sh_error *err);

#endif /* SH_POLICE_H */
