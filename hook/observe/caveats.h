/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a container's policy does not hold against, for `status`: the
 * known gaps of the security model (docs/security.md) that apply to this
 * container, each with a stable id and a line of text.
 */
#ifndef SH_CAVEATS_H
#define SH_CAVEATS_H

#include <limits.h>
#include <stdbool.h>

#include "config/config.h"
#include "state/state.h"

enum caveats_id {
	CAVEATS_STALE_RECORD,
	CAVEATS_HOOK_MADE_CGROUP,
	CAVEATS_COMPAT_SYSCALLS,
	CAVEATS_PACKET_SOCKETS,
	CAVEATS_MPTCP_SUBFLOWS,
	CAVEATS_BYPASS_FELL_BACK,
	CAVEATS_OTHER_PROGRAMS,
	CAVEATS_SOCK_DIAG,
	CAVEATS_KERNEL_SOCKETS,
	CAVEATS_ROUTE_METRICS,
	CAVEATS_MAX,
};

#define SH_CAVEAT_TEXT_MAX (PATH_MAX + 512)

struct caveats_input {
	const struct sh_record *rec;
	bool live; /* the record's cgroup is still there */
	/* The policy from the operator config, or NULL when unknown (no
	 * named policy, or no readable config). */
	const struct sh_policy *policy;
	/* Programs of other tools that run for the cgroup ("setsockopt 17
	 * (name), ..."), or "" when there are none. */
	const char *other_programs;
	/* Families this kernel offers whose TCP/UDP goes through kernel
	 * sockets (families_text()), "" or NULL for none. */
	const char *families;
};

struct caveat {
	const char *id; /* stable: "hook_made_cgroup", ... */
	char text[SH_CAVEAT_TEXT_MAX];
};

struct caveats {
	int nr;
	struct caveat c[CAVEATS_MAX];
};

/* The stable id of a caveat. */
const char *caveats_name(enum caveats_id id);
void caveats_collect(const struct caveats_input *in, struct caveats *out);

#endif /* SH_CAVEATS_H */
