/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Undoing what prestart did: poststop for one container, gc for all that
 * are gone, and the reaper (teardown.c) for a cgroup the hook made. Each
 * says what it did or could not do as warnings: it never fails a runtime.
 */
#ifndef SH_TEARDOWN_H
#define SH_TEARDOWN_H

#include "input/oci.h"
#include "lib/error.h"
#include "state/state.h"

/*
 * Undo one attachment: detach, remove a cgroup we made, drop the attachment; all
 * through one open of the recorded cgroup, checked against its id.
 * -EBUSY, and nothing done, while the cgroup holds processes and the
 * recorded init is alive.
 */
int teardown_release(const struct sh_attachment *att);
/* The same, but -EBUSY while the cgroup holds any process (the reaper);
 * 1 when the cgroup was already gone (released by someone else). */
int teardown_release_empty(const struct sh_attachment *att);
/* The stamp in the state directory of poststop's last gc, and how often
 * poststop runs gc at most: poststop costs O(1), not O(containers). */
#define TEARDOWN_GC_STAMP "last-gc"
#define TEARDOWN_GC_INTERVAL 60 /* seconds */

/* Releases the container's attachment, then runs gc if the last one is older
 * than TEARDOWN_GC_INTERVAL; what it cannot do is a warning, but an unsafe
 * state directory is an error (err). */
int teardown_poststop(const struct oci_state *st, struct sh_error *err);
/* Removes what containers that are gone left behind; returns the count,
 * or a negative errno (err) when the state directory is unsafe. */
int teardown_gc(struct sh_error *err);

/*
 * For a cgroup the hook made itself: a detached process that releases it
 * (programs, cgroup, attachment) as soon as the cgroup empties, so nothing
 * stays behind even when poststop never runs.
 */
int teardown_reaper_spawn(const struct sh_attachment *att,
			  struct sh_error *err);

#endif /* SH_TEARDOWN_H */
