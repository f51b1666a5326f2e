/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Loading ahead of time: every program the operator config's policies can
 * need, pinned in the pin directory (pin.h), so that prestart never
 * verifies; pins no policy needs any more are removed. Containers that
 * run keep their programs: an attachment holds its program, not the pin.
 */
#ifndef SH_PRELOAD_H
#define SH_PRELOAD_H

#include <stdbool.h>

#include "config/config.h"
#include "lib/error.h"
#include "prog/keys.h"

struct preload_result {
	int policies; /* (policy, bypass) variants with programs */
	int programs; /* distinct programs they need */
	int pinned; /* of them, pinned now */
	int kept; /* of them, pinned before */
	int unpinned; /* pins removed: no variant needs them */
	bool bypass_skipped; /* the kernel lacks SK_BPF_BYPASS_PROT_MEM */
	/* The generic programs (generic.h), whatever the config: */
	int generic; /* pinned, now or before */
	int generic_pinned; /* of them, pinned now */
	int generic_unpinned; /* generic pins removed (--unpin, a rebuild) */
	struct keys_state keys; /* the static keys kept on now (keys.h) */
	/* Why they could not be kept as keep_keys says: a warning, never a
	 * failed preload (they only save time). "" when they are. */
	char keys_error[SH_ERROR_MSG_MAX];
};

/* All or nothing: on error, the pins made by this run are removed and the
 * old ones kept. */
int preload_run(const struct sh_config *cfg, struct preload_result *res,
		struct sh_error *err);
/* Removes every pin, the pin directory and the keys cgroup (uninstall). */
int preload_unpin_all(struct preload_result *res, struct sh_error *err);

#endif /* SH_PRELOAD_H */
