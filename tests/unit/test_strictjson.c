// SPDX-License-Identifier: GPL-2.0-only
/*
 * strictjson.c: every input the hook parses is strict JSON: one value, no
 * trailing bytes, no NUL byte or \u0000 (which would cut a C string short
 * and let two readers see two texts), and an error that says where.
 *
 * Modules: `strictjson.c`
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "helpers.h"
#include "input/strictjson.h"
#include "tap.h"

static int parse(const char *text, size_t len, struct json_object **obj,
		 const char **said)
{
	struct sh_error err = { 0 };
	int r;

	*obj = NULL;
	capture_start();
	r = reported(strictjson_parse("the input", text, len, obj, &err), &err);
	*said = capture_end();
	return r;
}

static void accepts(const char *text, const char *what)
{
	struct json_object *obj;
	const char *said;

	ok(parse(text, strlen(text), &obj, &said) == 0 && obj, "accepts %s",
	   what);
	json_object_put(obj);
}

static void refuses(const char *text, size_t len, const char *want,
		    const char *what)
{
	struct json_object *obj;
	const char *said;
	int r = parse(text, len, &obj, &said);

	ok(r == -EINVAL && !obj && count_lines(said) == 1 && strstr(said, want),
	   "refuses %s: '%s'", what, want);
	if (r != -EINVAL || !strstr(said, want))
		tap_diag("  got %d: %s", r, said);
}

/* A refusal that json-c does not make yet: a TAP TODO. */
static void todo_refuses(const char *text, const char *what)
{
	struct json_object *obj;
	const char *said;
	int r = parse(text, strlen(text), &obj, &said);

	tap_todo(r == -EINVAL, "json-c 0.16 strict mode accepts it",
		 "refuses %s", what);
	json_object_put(obj);
}

int main(void)
{
	struct json_object *obj, *v;
	const char *said;
	const char *nul = "{\"a\":\"x\0y\"}";
	const char *esc = "{\"a\":\"x\\u0000y\"}";
	const char *esc2 = "{\"a\":\"x\\\\u0000y\"}";

	accepts("{\"a\": [1, 2.5, true, null, \"s\"]}", "an object");
	accepts("  {}\n", "surrounding white space");
	accepts("\"\\u00e9\"", "a plain string with an escape");

	refuses("{} {}", 5, "invalid JSON in the input at byte", "two values");
	refuses("{}x", 3, "at byte 2", "trailing bytes, where they start");
	refuses("{\"a\":", 5, "unexpected end of input", "a cut object");
	refuses("", 0, "unexpected end of input", "nothing");
	refuses("{\"a\": 1,}", 9, "invalid JSON", "a trailing comma");
	refuses("[1, 2", 5, "unexpected end of input", "an open array");
	refuses(nul, 12, "contains a NUL byte", "a NUL byte in a string");
	refuses(esc, strlen(esc), "a NUL character (\\u0000)",
		"an escaped NUL");

	/* json-c 0.16's JSON_TOKENER_STRICT still takes these (its
	 * json_tokener.c): a text another parser (Go's, python's) refuses,
	 * the hook reads. Known, marked TODO until strictjson.c checks. */
	todo_refuses("{'a': 1}", "a single-quoted key");
	todo_refuses("[1.]", "a number ending in '.'");
	todo_refuses("[NaN]", "NaN");

	ok(parse(esc2, strlen(esc2), &obj, &said) == 0 &&
		   json_object_object_get_ex(obj, "a", &v) &&
		   !strcmp(json_object_get_string(v), "x\\u0000y"),
	   "an escaped backslash before u0000 is text, not a NUL");
	json_object_put(obj);
	return tap_done();
}
