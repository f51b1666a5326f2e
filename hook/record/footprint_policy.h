/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Record mode, the policy's side: a container's socket footprint (what its
 * programs noted in their footprint tables, read by footprint.c, or read
 * back from recordings by footprint_json.c) and the allow-list policy it
 * proposes under the policy it ran under, in the operator config's own
 * schema.
 */
#ifndef SH_FOOTPRINT_POLICY_H
#define SH_FOOTPRINT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "lib/error.h"
#include "lib/kind.h"
#include "sockopt_hook.h"

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

#endif /* SH_FOOTPRINT_POLICY_H */
