/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_VERSION_H
#define SH_VERSION_H

#include <stdbool.h>

/* The hook's version; a release build may set it with -DSH_VERSION. */
#ifndef SH_VERSION
#define SH_VERSION "0.1.0"
#endif

/* `--version [--json]`: the hook's version, then each library it links. */
int version_print(const char *hook_version, bool json);

#endif /* SH_VERSION_H */
