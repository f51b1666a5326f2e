/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Record mode, the policy's side: a container's socket footprint (what its
 * programs noted in their footprint tables, read by footprint.c) and the
 * allow-list policy it proposes, in the operator config's own schema.
 */
#ifndef SH_FOOTPRINT_POLICY_H
#define SH_FOOTPRINT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "kind.h"
#include "sockopt_hook.h"

struct footprint_entry {
	struct sh_fp_key key;
	struct sh_fp_value v;
};

struct footprint {
	size_t nr;
	struct footprint_entry e[SH_PROG_KINDS * SH_FP_MAX];
	uint64_t overflow[SH_PROG_KINDS]; /* calls the full table dropped */
	bool kind_read[SH_PROG_KINDS];
};

/* { "policies": { NAME: { allow-list policy } } } */
struct json_object *footprint_policy_json(const struct footprint *fp,
					  const char *name);
struct json_object *footprint_policy_entries_json(const struct footprint *fp);
/* "setsockopt SOL_SOCKET SO_RCVBUF count 2 values 4096..65536" */
#define SH_FOOTPRINT_TEXT_MAX 128
void footprint_policy_entry_text(const struct footprint_entry *e, char *buf,
				 size_t len);

#endif /* SH_FOOTPRINT_POLICY_H */
