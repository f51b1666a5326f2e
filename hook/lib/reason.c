// SPDX-License-Identifier: GPL-2.0-only
/* The reason tokens' table (see reason.h). */
#include <stddef.h>

#include "lib/reason.h"

static const struct reason_info reasons[SH_REASONS] = {
#define SH_REASON_ROW(name, token, event, status, meaning) \
	[SH_REASON_##name] = { token, event, status, meaning },
	SH_REASON_TABLE(SH_REASON_ROW)
#undef SH_REASON_ROW
};

const struct reason_info *reason_get(enum sh_reason reason)
{
	if (reason <= SH_REASON_NONE || reason >= SH_REASONS)
		return NULL;
	return &reasons[reason];
}

const char *reason_token(enum sh_reason reason)
{
	const struct reason_info *r = reason_get(reason);

	return r ? r->token : NULL;
}
