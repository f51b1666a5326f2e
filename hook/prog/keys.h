/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's static keys, kept on (keep_keys in the operator config).
 *
 * The first attachment of a cgroup attach type anywhere on the host turns
 * that type's static key (cgroup_bpf_enabled_key) on, and the last
 * release turns it off: text patching on every CPU, paid by the prestart
 * and the poststop that happen to be first and last (`make bench`: "cold"
 * and the quiet-host `runc run` rows). `preload` with keep_keys attaches,
 * for each attach type the config's policies use, one program that
 * returns 1 to a cgroup of its own that no process is ever in: the
 * program never runs, the key stays on, and containers find it on.
 * Sockets of other cgroups then pay the key's check (bench 6).
 */
#ifndef SH_KEYS_H
#define SH_KEYS_H

#include <limits.h>
#include <stdbool.h>

#include "lib/error.h"
#include "lib/kind.h"

/* Below the cgroup2 mount. Never a name the hook gives a container's
 * cgroup ("oci-sockopt-hook-<id>"). */
#define SH_KEYS_CGROUP "oci-sockopt-hook.keys"
/* The programs' name: "sh_" as all of ours. */
#define SH_KEYS_PROG_NAME "sh_keys"

struct keys_state {
	char cgroup[PATH_MAX]; /* its path; "" when there is none */
	bool kept[SH_PROG_KINDS]; /* a program of ours of that kind on it */
	bool populated; /* a process is in it: not what we made it for */
};

/* SH_KEYS_CGROUP, or OCI_SOCKOPT_HOOK_KEYS_CGROUP (tests, the bench). */
const char *keys_cgroup(void);
/*
 * Keeps exactly the keys of want[] on: makes the cgroup, attaches what is
 * missing, detaches ours that no policy needs, and removes the cgroup
 * when none is wanted. *ret says what is kept now.
 */
int keys_keep(const bool want[SH_PROG_KINDS], struct keys_state *ret,
	      struct sh_error *err);
/* What is kept now; an empty cgroup path when there is no cgroup. */
int keys_query(struct keys_state *ret, struct sh_error *err);
/* "sock_create, setsockopt" into buf: the kinds kept, "none" if none. */
void keys_text(const struct keys_state *st, char *buf, size_t len);

#endif /* SH_KEYS_H */
