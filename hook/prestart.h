/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * prestart (or createRuntime): resolve the policy, load and verify the
 * programs, find or make the cgroup, attach, record. Any error undoes
 * everything, and err holds the one line to report.
 */
#ifndef SH_PRESTART_H
#define SH_PRESTART_H

#include "config.h"
#include "error.h"
#include "oci.h"
#include "stats.h"

/* What a prestart that succeeded did, for the node's stats. */
struct prestart_outcome {
	enum stats_outcome outcome; /* ATTACHED, UNPOLICED or FALLBACK */
	const char *reason; /* why FALLBACK, else NULL */
	struct sh_cause cause; /* for FALLBACK: what asked for it */
	/* -EAGAIN: the config file changed since cfg was read from it, and
	 * nothing was done: read it again and run again. */
	bool config_changed;
	/* Set by the caller: use cfg even so (the last try). */
	bool config_last_try;
};

int prestart_run(const struct sh_config *cfg, struct oci_state *st,
		 struct prestart_outcome *done, struct sh_error *err);

#endif /* SH_PRESTART_H */
