/* SPDX-License-Identifier: GPL-2.0-only */
/* Kubernetes label keys and values, checked as the API server checks them. */
#ifndef SH_LABELKEY_H
#define SH_LABELKEY_H

#include <stdbool.h>

/* [prefix/]name: prefix a DNS subdomain of at most 253 bytes, name 1 to 63
 * of [A-Za-z0-9._-], starting and ending with a letter or digit. */
bool labelkey_valid(const char *key);
/* Empty, or what a key's name part may be. */
bool labelkey_value_valid(const char *value);

#endif /* SH_LABELKEY_H */
