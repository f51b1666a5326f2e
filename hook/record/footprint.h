/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Record mode's footprint: a container's socket footprint (what its
 * programs noted in their footprint tables), kept past its cgroup by pins
 * and read from them, or read back from recordings; the allow-list policy
 * it proposes under the policy it ran under, in the operator config's own
 * schema; and the footprint as JSON and text, in `record`'s output and in
 * each recording's provenance, from which `record merge` reads it back.
 */
#ifndef SH_FOOTPRINT_H
#define SH_FOOTPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "config/config.h"
#include "lib/error.h"
#include "lib/kind.h"
#include "policy/policy.h"
#include "prog/load.h"
#include "sockopt_hook.h"
#include "state/state.h"

/* One container's tables hold SH_PROG_KINDS * SH_FP_MAX entries; a merge
 * of recordings (`record merge`) up to this many distinct ones. */
#define SH_FOOTPRINT_MAX (8 * SH_PROG_KINDS * SH_FP_MAX)

struct footprint_entry {
	struct sh_fp_key key;
	struct sh_fp_value v;
};

struct footprint {
	size_t nr;
	struct footprint_entry e[SH_FOOTPRINT_MAX];
	uint64_t overflow[SH_PROG_KINDS]; /* calls the full table dropped */
	bool kind_read[SH_PROG_KINDS];
};

/* Adds an entry, merged with one of the same key (counts added, the
 * value range widened), its range first in the option's type
 * (footprint_policy_typed()): -E2BIG when full. */
int footprint_policy_add(struct footprint *fp, const struct footprint_entry *e);
void footprint_policy_merge_value(struct sh_fp_value *into,
				  const struct sh_fp_value *v);
/*
 * A setsockopt entry's range as the kernel keeps the value, in the
 * option's type (enum sh_domain): one noted as given (SH_FP_RAW, by an
 * older hook's programs or in its recording files) becomes the smallest
 * range of the option's type that holds every value the given range
 * holds; every range ends within the type, min <= max, as SH_FP_KEPT.
 */
void footprint_policy_typed(struct footprint_entry *e);
/* Sorted by (kind, level/family, option/type, protocol). */
void footprint_policy_sort(struct footprint *fp);
/*
 * { "policies": { name: { allow-list policy } } }, the footprint under
 * the running policy (its JSON as the config had it, NULL for none).
 * NULL, with err, when the running policy does not parse.
 */
struct json_object *footprint_policy_propose(const struct footprint *fp,
					     struct json_object *running,
					     const char *name,
					     struct sh_error *err);

/* Where the tables are pinned, beside the pin directory (pin.h), so that
 * poststop, gc and the reaper can read them after the runtime has removed
 * the cgroup: /sys/fs/bpf/oci-sockopt-hook-footprint by default. */
#define SH_FOOTPRINT_PIN_SUFFIX "-footprint"

/* Copies the record name and record.dir into the container's record. */
void footprint_fill(struct sh_attachment *att, const struct sh_effective *eff,
		    const struct sh_config *cfg);
/* Pins the freshly loaded tables under the container's record. */
int footprint_pin(const struct sh_loaded *l, const struct sh_attachment *att,
		  struct sh_error *err);
/* Removes them (nothing when there are none). */
void footprint_unpin(const struct sh_attachment *att);
/* The 16 hex digits that name a recording's pins: its id and init start
 * time, so that a reused id is another recording. */
void footprint_recording_id(const struct sh_attachment *att, char buf[17]);
/* Reads the pinned tables, sorted by (kind, level/family, option...). */
int footprint_read(const struct sh_attachment *att, struct footprint *fp,
		   struct sh_error *err);

/* [{"call": "setsockopt", "level": ..., "count": ...}] */
struct json_object *footprint_json_entries(const struct footprint *fp);
/* {"<kind>": <calls dropped>} for the kinds read. */
struct json_object *footprint_json_overflow(const struct footprint *fp);
/*
 * A provenance's "footprint", "overflow" and "values": "kept" (its value
 * ranges in each option's type, as the kernel keeps the value; a file
 * without it is an older hook's, whose ranges are the ints as given).
 */
void footprint_json_add(struct json_object *prov, const struct footprint *fp);
/* Adds what a provenance holds to fp (footprint_policy_add). */
int footprint_json_read(struct json_object *prov, struct footprint *fp,
			struct sh_error *err);
/* "setsockopt SOL_SOCKET SO_RCVBUF count 2 values 4096..65536" */
#define SH_FOOTPRINT_TEXT_MAX 160
void footprint_json_entry_text(const struct footprint_entry *e, char *buf,
			       size_t len);

#endif /* SH_FOOTPRINT_H */
