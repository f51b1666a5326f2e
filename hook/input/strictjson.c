// SPDX-License-Identifier: GPL-2.0-only
/* Strict JSON for every input the hook parses: state, bundle, config. */
#include <errno.h>
#include <string.h>

#include "input/strictjson.h"

/* An odd run of backslashes before 'u0000' is an escaped NUL. */
static int check_no_nul(const char *what, const char *text, size_t len,
			struct sh_error *err)
{
	size_t slashes = 0;

	for (size_t i = 0; i < len; i++) {
		if (!text[i])
			return error_set(err, -EINVAL,
					 "%.128s contains a NUL byte", what);
		if (text[i] == 'u' && slashes % 2 && len - i > 4 &&
		    !memcmp(text + i + 1, "0000", 4))
			return error_set(
				err, -EINVAL,
				"%.128s contains a NUL character (\\u0000) in a string",
				what);
		slashes = text[i] == '\\' ? slashes + 1 : 0;
	}
	return 0;
}

static int parse_error(const char *what, struct json_tokener *tok,
		       struct json_object *obj, struct sh_error *err)
{
	enum json_tokener_error jerr = json_tokener_get_error(tok);

	if (jerr == json_tokener_success)
		jerr = obj ? json_tokener_error_parse_unexpected :
			     json_tokener_continue;
	return error_set(err, -EINVAL, "invalid JSON in %s at byte %zu: %s",
			 what, json_tokener_get_parse_end(tok),
			 jerr == json_tokener_continue ?
				 "unexpected end of input" :
				 json_tokener_error_desc(jerr));
}

int strictjson_parse(const char *what, const char *text, size_t len,
		     struct json_object **ret, struct sh_error *err)
{
	struct json_tokener *tok;
	struct json_object *obj;
	int r = check_no_nul(what, text, len, err);

	if (r)
		return r;
	tok = json_tokener_new_ex(64);
	if (!tok)
		return error_set(err, -ENOMEM, "out of memory parsing %s",
				 what);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, text, (int)len);
	if (!obj || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < len) {
		r = parse_error(what, tok, obj, err);
		json_object_put(obj);
	} else {
		*ret = obj;
	}
	json_tokener_free(tok);
	return r;
}
