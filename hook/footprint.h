/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Record mode: a container's socket footprint (what its programs noted in
 * their footprint tables), kept past its cgroup by pins, its JSON form,
 * and the policy it proposes in the operator config's own schema.
 */
#ifndef SH_FOOTPRINT_H
#define SH_FOOTPRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "config.h"
#include "load.h"
#include "policy.h"
#include "record.h"

/* Where the tables are pinned, beside the pin directory (pin.h), so that
 * poststop, gc and the reaper can read them after the runtime has removed
 * the cgroup: /sys/fs/bpf/oci-sockopt-hook-footprint by default. */
#define SH_FOOTPRINT_PIN_SUFFIX "-footprint"
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
/* Adds an entry, merged with one of the same key (counts added, the
 * value range widened): -E2BIG when full. */
int footprint_add(struct footprint *fp, const struct footprint_entry *e);
void footprint_merge_value(struct sh_fp_value *into,
			   const struct sh_fp_value *v);
void footprint_sort(struct footprint *fp);

/* footprint_json.c: [{"call": "setsockopt", "level": ..., "count": ...}]
 * and {"<kind>": <calls dropped>} for the kinds read; and back. */
struct json_object *footprint_json_entries(const struct footprint *fp);
struct json_object *footprint_json_overflow(const struct footprint *fp);
/* Adds what the JSON holds to fp (footprint_add). */
int footprint_json_read(struct json_object *entries,
			struct json_object *overflow, struct footprint *fp,
			struct sh_error *err);
/* "setsockopt SOL_SOCKET SO_RCVBUF count 2 values 4096..65536" */
#define SH_FOOTPRINT_TEXT_MAX 160
void footprint_json_entry_text(const struct footprint_entry *e, char *buf,
			       size_t len);

/*
 * footprint_policy.c: { "policies": { name: { allow-list policy } } }, the
 * footprint under the running policy (its JSON as the config had it, NULL
 * for none). NULL, with err, when the running policy does not parse.
 */
struct json_object *footprint_policy_propose(const struct footprint *fp,
					     struct json_object *running,
					     const char *name,
					     struct sh_error *err);

#endif /* SH_FOOTPRINT_H */
