/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The generic programs, shared by the BPF programs and the hook
 * (hook/prog/generic.c): one program per attach type and mode, loaded and
 * pinned once by `preload`, whatever the policies. A container whose
 * policy has no specialised copy yet gets them, so that no prestart ever
 * verifies a program; `apply` later swaps in the specialised copies.
 *
 * A generic program learns the container's policy from its attachment's
 * cgroup storage (one value per cgroup and attach type, allocated by the
 * kernel at attach, zeroed): the hook writes the state right after it
 * attaches. Until then SH_GEN_READY is clear and every call is refused
 * (fail closed). The storage is the attachment's, not the socket's
 * cgroup's: a socket in a cgroup nested in the container runs the
 * container's attachment with its storage, as a specialised copy would.
 *
 * The sockopt rules of a container are a map of their own (the same shape
 * as a specialised copy's rules map), filled, frozen and then put in the
 * program's gen_rules hash of maps under `rules`, the container's cgroup
 * id, before the state names it. A call holds the inner map it looked up
 * for as long as it runs, so replacing or removing an entry never shows a
 * call half a policy; an entry that is missing refuses the call.
 */
#ifndef SH_GENERIC_MAP_H
#define SH_GENERIC_MAP_H

#include <linux/types.h>

#include "sockopt_hook.h"
#include "audit_mode_map.h"

/* The state has been written: the program may apply it. */
#define SH_GEN_READY 1u
/* Containers whose rules one generic sockopt program holds at once. */
#define SH_GEN_RULES_MAX 16384

/* sock_create: the whole policy; the would-have counters only in audit
 * mode (the hook sizes the value without them otherwise). */
struct sh_gen_sock_state {
	__u32 flags;
	__u32 nr_deny;
	struct sh_sock_rule deny[SH_MAX_SOCKET_RULES];
	__u32 set_mark;
	__u32 mark;
	__u32 set_priority;
	__u32 priority;
	struct sh_would_have wh;
};

/* setsockopt and getsockopt: the key of the rules map, and the
 * allow-list flag (setsockopt). */
struct sh_gen_opt_state {
	__u32 flags;
	__u32 default_deny;
	__u64 rules;
	struct sh_would_have wh;
};

#endif /* SH_GENERIC_MAP_H */
