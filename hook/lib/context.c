// SPDX-License-Identifier: GPL-2.0-only
/* The run's context (see context.h). */
#include <stddef.h>

#include "lib/context.h"

static struct sh_context context;

void context_set(const struct sh_context *ctx)
{
	context = *ctx;
}

const struct sh_context *context_get(void)
{
	return &context;
}

const char *context_value(const char *s)
{
	return s && *s ? s : NULL;
}
