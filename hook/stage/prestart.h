/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * prestart (or createRuntime): resolve the policy, load and verify the
 * programs, find or make the cgroup, attach, record. Any error undoes
 * everything, and err holds the one line to report.
 */
#ifndef SH_PRESTART_H
#define SH_PRESTART_H

#include "config/config.h"
#include "input/container.h"
#include "input/oci.h"
#include "lib/error.h"
#include "stage/police.h"

/* Loads st's bundle and reads the container into c (which the caller's
 * audit lines use, also when prestart fails). */
int prestart_run(const struct sh_config *cfg, struct oci_state *st,
		 struct sh_container *c, struct prestart_outcome *done,
		 struct sh_error *err);
/* The rest of prestart, for a container already read into c (c->st its
 * state, with what a bundle would add): effective policy, require and
 * sysctl checks, the pod's sandbox, then the container. */
int prestart_police(const struct sh_config *cfg, const struct sh_container *c,
		    struct prestart_outcome *done, struct sh_error *err);

#endif /* SH_PRESTART_H */
