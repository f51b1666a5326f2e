/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_STAGE_H
#define SH_STAGE_H

#include "config.h"
#include "oci.h"
#include "state.h"

int stage_attach(const struct sh_config *cfg, struct oci_state *st);
int stage_poststop(const struct oci_state *st);
/*
 * Undo one record: detach, remove a cgroup we made, drop the record; all
 * through one open of the recorded cgroup, checked against its id.
 * -EBUSY, and nothing done, while the cgroup holds processes and the
 * recorded init is alive.
 */
int stage_release(const struct sh_record *rec);
/* The same, but -EBUSY while the cgroup holds any process (the reaper);
 * 1 when the cgroup was already gone (released by someone else). */
int stage_release_empty(const struct sh_record *rec);
/* Removes what containers that are gone left behind; returns the count,
 * or a negative errno (logged) when the state directory is unsafe. */
int stage_gc(void);

#endif /* SH_STAGE_H */
