/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_STRICTJSON_H
#define SH_STRICTJSON_H

#include <stddef.h>
#include <json-c/json.h>

#include "lib/error.h"

/*
 * Parses text as strict JSON (as a schema validator reads it), all of it,
 * and refuses a NUL byte, raw or escaped: json-c would hand out "a\u0000/.."
 * as "a". what names the input in the error.
 */
int strictjson_parse(const char *what, const char *text, size_t len,
		     struct json_object **ret, struct sh_error *err);

#endif /* SH_STRICTJSON_H */
