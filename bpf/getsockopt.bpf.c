// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup/getsockopt: runs after the kernel handler, so it can hide
 * (deny) or replace (force) what the kernel returned.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sockopt_hook.h"
#include "counters.bpf.h"
#include "optval.bpf.h"

#define SOL_TCP 6
#define TCP_ZEROCOPY_RECEIVE 35

static __always_inline int force_value(struct bpf_sockopt *ctx,
				       const struct sh_opt_rule *rule)
{
	int written;

	if (rule->action == SH_ACTION_FORCE_INT)
		written = write_int(ctx, forced_int(rule));
	else
		written = write_bytes(ctx, rule);
	if (written) {
		set_retval(ctx, 0);
		count_event(SH_CNT_GET_FORCED);
	}
	return 1;
}

SEC("cgroup/getsockopt")
int sh_getsockopt(struct bpf_sockopt *ctx)
{
	const struct sh_opt_rule *rule;

	/* The zerocopy fast path must stay fast: no lookup, no copy. */
	if (ctx->level == SOL_TCP && ctx->optname == TCP_ZEROCOPY_RECEIVE)
		return 1;
	rule = find_rule(ctx);
	if (rule && rule->action == SH_ACTION_DENY) {
		count_event(SH_CNT_GET_DENIED);
		return 0;
	}
	if (ctx->optlen > SH_PAGE_SIZE) {
		set_optlen(ctx, 0);
		return 1;
	}
	if (rule && (rule->action == SH_ACTION_FORCE_INT ||
		     rule->action == SH_ACTION_FORCE_BYTES))
		return force_value(ctx, rule);
	return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
