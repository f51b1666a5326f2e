/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Record mode: a container's socket footprint (what its programs noted in
 * their footprint tables), kept past its cgroup by pins, and the policy it
 * proposes in the operator config's own schema.
 */
#ifndef SH_FOOTPRINT_H
#define SH_FOOTPRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "config.h"
#include "footprint_policy.h"
#include "load.h"
#include "policy.h"
#include "state_record.h"

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
/* Reads the pinned tables, sorted by (kind, level/family, option...). */
int footprint_read(const struct sh_record *rec, struct footprint *fp,
		   struct sh_error *err);
/* The file name the proposed policy gets: "<record>-<container|id>.json". */
void footprint_file_name(const struct sh_record *rec, char *buf, size_t len);
/*
 * For a container that is gone: writes its proposed policy into its
 * record dir (atomically) and removes the pins. Does nothing for a
 * container that was not recorded; failures are logged.
 */
void footprint_save(const struct sh_record *rec);

#endif /* SH_FOOTPRINT_H */
