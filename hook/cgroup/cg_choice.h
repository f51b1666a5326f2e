/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_CG_CHOICE_H
#define SH_CG_CHOICE_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroup/cg.h"
#include "config/config.h"
#include "input/oci.h"

enum cg_choice {
	CG_USE_OWN, /* the runtime gave the container a cgroup of its own */
	CG_MAKE_OWN, /* the hook makes <cgroup>/oci-sockopt-hook-<id> */
};

/*
 * What prestart does for a container whose init is in cgroup rel, which is
 * dedicated to it or not: a cg_choice, or -EPERM (with why) when it is
 * refused: on_shared_cgroup, or a writable way into the cgroup2 tree the
 * container could use to leave the policed cgroup (a cgroup namespace of
 * its own contains a cgroup2 mount made for it, and a bind of the host's
 * tree only while the hierarchy has nsdelegate).
 */
int cg_choice_decide(const struct sh_config *cfg, const struct oci_state *st,
		     const char *cg2_mount, const char *rel, bool dedicated,
		     struct sh_error *err);
struct mountinfo;
/* The same, with mountinfo from mi (fixed text in tests). */
int cg_choice_decide_in(const struct sh_config *cfg, const struct oci_state *st,
			const char *cg2_mount, struct mountinfo *mi,
			const char *rel, bool dedicated, struct sh_error *err);
/*
 * The cgroup prestart attaches to, opened once (the fd), made by the hook
 * if need be (t->created), or -errno.
 */
int cg_choice_take(const struct sh_config *cfg, const struct oci_state *st,
		   const struct cg_root *root, struct cg_target *t,
		   struct sh_error *err);

#endif /* SH_CG_CHOICE_H */
