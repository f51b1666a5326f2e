/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Record mode, the tables' side: a container's socket footprint (what its
 * programs noted in their footprint tables), kept past its cgroup by pins.
 */
#ifndef SH_FOOTPRINT_H
#define SH_FOOTPRINT_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "policy/policy.h"
#include "prog/load.h"
#include "record/footprint_policy.h"
#include "state/state_record.h"

/* Where the tables are pinned, beside the pin directory (pin.h), so that
 * poststop, gc and the reaper can read them after the runtime has removed
 * the cgroup: /sys/fs/bpf/oci-sockopt-hook-footprint by default. */
#define SH_FOOTPRINT_PIN_SUFFIX "-footprint"

/* Copies the record name and record.dir into the container's record. */
void footprint_fill(struct sh_record *rec, const struct sh_effective *eff,
		    const struct sh_config *cfg);
/* Pins the freshly loaded tables under the container's record. */
int footprint_pin(const struct sh_loaded *l, const struct sh_record *rec,
		  struct sh_error *err);
/* Removes them (nothing when there are none). */
void footprint_unpin(const struct sh_record *rec);
/* The 16 hex digits that name a recording's pins: its id and init start
 * time, so that a reused id is another recording. */
void footprint_recording_id(const struct sh_record *rec, char buf[17]);
/* Reads the pinned tables, sorted by (kind, level/family, option...). */
int footprint_read(const struct sh_record *rec, struct footprint *fp,
		   struct sh_error *err);

#endif /* SH_FOOTPRINT_H */
