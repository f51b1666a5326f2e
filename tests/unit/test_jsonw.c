// SPDX-License-Identifier: GPL-2.0-only
/* The one JSON writer (jsonw.c): every member type, null for a missing
 * string, names or numbers, the members left out or null when empty.
 *
 * Modules: `jsonw.c`
 */
#include <string.h>

#include "lib/jsonw.h"
#include "tap.h"

static const char *json(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

static void test_jsonw(void)
{
	struct json_object *o = json_object_new_object();

	jsonw_str(o, "s", "v");
	jsonw_str(o, "null", NULL);
	jsonw_str_set(o, "empty", "");
	jsonw_str_set(o, "unset", NULL);
	jsonw_str_set(o, "set", "x");
	jsonw_str_or_null(o, "or_null", "");
	jsonw_str_or_null(o, "or_null_set", "y");
	jsonw_int(o, "i", -5);
	jsonw_uint(o, "u", UINT64_MAX);
	jsonw_bool(o, "b", true);
	jsonw_named(o, "n", "SOL_SOCKET", 1);
	jsonw_named(o, "m", NULL, 42);
	is_str(json(o),
	       "{\"s\":\"v\",\"null\":null,\"set\":\"x\",\"or_null\":null,\"or_null_set\":\"y\",\"i\":-5,\"u\":18446744073709551615,\"b\":true,\"n\":\"SOL_SOCKET\",\"m\":42}",
	       "every member type: %s", json(o));
	json_object_put(o);
}

int main(void)
{
	test_jsonw();
	return tap_done();
}
