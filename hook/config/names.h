/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_NAMES_H
#define SH_NAMES_H

#include <stdbool.h>

int names_level(const char *name, int *level);
const char *names_level_name(int level);
int names_family(const char *name, int *value);
int names_type(const char *name, int *value);
int names_protocol(const char *name, int *value);
const char *names_family_name(int value);
const char *names_type_name(int value);
const char *names_protocol_name(int value);
/* Nearest known option or level name, for "did you mean" hints. */
const char *names_suggest(const char *name);
const char *names_closest(const char *name, const char *const *cands);
/* A record name (record mode): [A-Za-z0-9._-], 1 to 64, no leading dot. */
bool names_record_ok(const char *name);

#endif /* SH_NAMES_H */
