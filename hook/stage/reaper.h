/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_REAPER_H
#define SH_REAPER_H

#include "lib/error.h"
#include "state/state.h"

/*
 * For a cgroup the hook made itself: a detached process that releases it
 * (programs, cgroup, record) as soon as the cgroup empties, so nothing
 * stays behind even when poststop never runs.
 */
int reaper_spawn(const struct sh_record *rec, struct sh_error *err);

#endif /* SH_REAPER_H */
