/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_STATE_JSON_H
#define SH_STATE_JSON_H

#include <json-c/json.h>

#include "state.h"

struct json_object *record_to_json(const struct sh_record *rec);
int record_from_json(struct json_object *obj, struct sh_record *rec);
enum bpf_attach_type attach_type_from_name(const char *name);
/*
 * NULL when a record read back may be acted on, else why not. It is
 * checked before anything it names feeds unlinkat, rmdir or a detach:
 * stem is its file name without ".json", mount the cgroup2 mount.
 */
const char *record_invalid(const struct sh_record *rec, const char *stem,
			   const char *mount);

#endif /* SH_STATE_JSON_H */
