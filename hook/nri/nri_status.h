/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The NRI plugin's one-copy lock and its status file, both in the state
 * directory: nri.lock (flock()ed by the running plugin, its pid inside)
 * and nri.status (JSON: registered or not, to which runtime, counters).
 */
#ifndef SH_NRI_STATUS_H
#define SH_NRI_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"
#include "nri/nri_plugin.h"

#define NRI_STATUS_LOCK "nri.lock"
#define NRI_STATUS_FILE "nri.status"

struct nri_status {
	int lock_fd;
	const char *mode; /* "socket" or "pre-registered" */
	const char *socket; /* the socket path, or NULL */
	long long since; /* when the current registration began */
};

/* Takes the lock: 0, or -EBUSY with err naming the copy that holds it. */
int nri_status_lock(struct nri_status *s, struct sh_error *err);
/* Removes the status file and drops the lock. */
void nri_status_unlock(struct nri_status *s);
/* Writes nri.status for session p (registered: Synchronize answered). */
int nri_status_write(struct nri_status *s, const struct nri_plugin *p,
		     bool registered);
/*
 * Whether a plugin is registered now: its lock is held and its status
 * says so. 1 (runtime set to "name version"), 0, or a negative errno
 * when the state directory cannot be trusted.
 */
int nri_status_registered(char *runtime, size_t len);

#endif /* SH_NRI_STATUS_H */
