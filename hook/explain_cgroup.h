/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_EXPLAIN_CGROUP_H
#define SH_EXPLAIN_CGROUP_H

#include <json-c/json.h>

#include "config.h"
#include "oci.h"

/*
 * Adds "cgroup" to desc: where prestart would attach (from the state's
 * pid, or both cases from the bundle alone) and whether processes started
 * with exec would be policed. Non-zero, after one line, when prestart
 * would refuse the container for its cgroup.
 */
int explain_cgroup(const struct sh_config *cfg, const struct oci_state *st,
		   struct json_object *desc);

#endif /* SH_EXPLAIN_CGROUP_H */
