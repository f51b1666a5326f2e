/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_DESCRIBE_H
#define SH_DESCRIBE_H

#include <json-c/json.h>

#include "policy/policy.h"

/* The effective policy, each part with where it came from. */
struct json_object *describe_effective(const struct sh_effective *eff);
void describe_print_text(struct json_object *desc);

#endif /* SH_DESCRIBE_H */
