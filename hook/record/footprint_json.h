/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A footprint as JSON and text: in `record`'s output and in each
 * recording's provenance, from which `record merge` reads it back.
 */
#ifndef SH_FOOTPRINT_JSON_H
#define SH_FOOTPRINT_JSON_H

#include <stddef.h>
#include <json-c/json.h>

#include "lib/error.h"
#include "record/footprint_policy.h"

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

#endif /* SH_FOOTPRINT_JSON_H */
