// SPDX-License-Identifier: GPL-2.0-only
/*
 * A TOML 1.0 reader (toml.h) for runtime config files. Each table header
 * and key is checked as the spec says: a key set twice, a table defined
 * twice, or a value where a table should be is an error with its line, as
 * the runtimes' own decoders (go-toml, BurntSushi/toml) treat them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "lib/cleanup.h"
#include "wiring/toml/toml.h"
#include "wiring/toml/toml_scalar.h"

#define TOML_MAX_KEYS 32 /* parts of one dotted key or header */
#define TOML_MAX_DEPTH 32 /* nested arrays and inline tables */

struct parser {
	struct toml_cursor c;
	int depth;
	struct json_object *root;
	struct json_object *cur; /* the table the last header opened */
	/* Tables a header or a dotted key defined, by address: a header may
	 * not define them again. */
	struct json_object *defined;
};

struct key {
	char *part[TOML_MAX_KEYS];
	int n;
};

static void key_free(struct key *k)
{
	for (int i = 0; i < k->n; i++)
		free(k->part[i]);
	k->n = 0;
}

#define fail(ps, ...) toml_scalar_fail(&(ps)->c, __VA_ARGS__)
#define peek(ps, ahead) toml_scalar_peek(&(ps)->c, (ahead))
#define newline(ps) toml_scalar_newline(&(ps)->c)
#define skip_blank(ps) toml_scalar_skip_blank(&(ps)->c)

static bool at_end(const struct parser *ps)
{
	return ps->c.p >= ps->c.end;
}

static int skip_comment(struct parser *ps)
{
	if (peek(ps, 0) != '#')
		return 0;
	for (; !at_end(ps) && *ps->c.p != '\n'; ps->c.p++)
		if (((unsigned char)*ps->c.p < 0x20 && *ps->c.p != '\t' &&
		     !(*ps->c.p == '\r' && peek(ps, 1) == '\n')) ||
		    *ps->c.p == 0x7f)
			return fail(ps, "control character in a comment");
	return 0;
}

/* Blanks, comments and newlines, as inside an array. */
static int skip_space(struct parser *ps)
{
	for (;;) {
		skip_blank(ps);
		if (skip_comment(ps))
			return -EINVAL;
		if (!newline(ps))
			return 0;
	}
}

/* After a key/value pair or a header: nothing but a comment on the line. */
static int end_of_line(struct parser *ps)
{
	skip_blank(ps);
	if (skip_comment(ps))
		return -EINVAL;
	if (at_end(ps) || newline(ps))
		return 0;
	return fail(ps, "unexpected '%c' after the value", *ps->c.p);
}

static int key_part(struct parser *ps, char **out)
{
	const char *start = ps->c.p;

	if (peek(ps, 0) == '"' || peek(ps, 0) == '\'') {
		if (peek(ps, 1) == peek(ps, 0) && peek(ps, 2) == peek(ps, 0))
			return fail(ps, "a key cannot be a multi-line string");
		return toml_scalar_string(&ps->c, out);
	}
	while (!at_end(ps) && toml_scalar_bare_char(*ps->c.p))
		ps->c.p++;
	if (ps->c.p == start)
		return fail(ps, "a key is missing");
	*out = strndup(start, ps->c.p - start);
	return *out ? 0 : -ENOMEM;
}

/* a.b."c d".'e': the parts, blanks around the dots allowed. */
static int parse_key(struct parser *ps, struct key *k)
{
	int r;

	k->n = 0;
	for (;;) {
		skip_blank(ps);
		if (k->n == TOML_MAX_KEYS)
			return fail(ps, "a key of more than %d parts",
				    TOML_MAX_KEYS);
		r = key_part(ps, &k->part[k->n]);
		if (r)
			return r;
		k->n++;
		skip_blank(ps);
		if (peek(ps, 0) != '.')
			return 0;
		ps->c.p++;
	}
}

static bool is_table(struct json_object *v)
{
	return json_object_is_type(v, json_type_object);
}

static bool is_array_of_tables(struct json_object *v)
{
	size_t n;

	if (!json_object_is_type(v, json_type_array))
		return false;
	n = json_object_array_length(v);
	return n && is_table(json_object_array_get_idx(v, n - 1));
}

static int mark_defined(struct parser *ps, struct json_object *t)
{
	char addr[2 * sizeof(void *) + 3];
	struct json_object *seen;

	snprintf(addr, sizeof(addr), "%p", (void *)t);
	if (json_object_object_get_ex(ps->defined, addr, &seen))
		return 1;
	return json_object_object_add(ps->defined, addr, NULL) ? -ENOMEM : 0;
}

/* The table under parent's key, made if missing; the last table of an
 * array of tables. */
static int sub_table(struct parser *ps, struct json_object *parent,
		     const char *key, struct json_object **out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(parent, key, &v)) {
		v = json_object_new_object();
		if (!v || json_object_object_add(parent, key, v))
			return -ENOMEM;
	} else if (is_array_of_tables(v)) {
		v = json_object_array_get_idx(v,
					      json_object_array_length(v) - 1);
	} else if (!is_table(v)) {
		return fail(ps, "'%s' is a value, not a table", key);
	}
	*out = v;
	return 0;
}

static int walk(struct parser *ps, struct json_object *from,
		const struct key *k, int upto, struct json_object **out)
{
	int r = 0;

	*out = from;
	for (int i = 0; i < upto && !r; i++)
		r = sub_table(ps, *out, k->part[i], out);
	return r;
}

static int parse_value(struct parser *ps, struct json_object **out);

/* "= value" after key k, into table t. */
static int parse_pair_value(struct parser *ps, struct json_object *t,
			    const struct key *k)
{
	struct json_object *parent, *v = NULL;
	int r;

	if (peek(ps, 0) != '=')
		return fail(ps, "expected '=' after the key");
	ps->c.p++;
	skip_blank(ps);
	r = walk(ps, t, k, k->n - 1, &parent);
	if (r)
		return r;
	for (int i = 0; i < k->n - 1; i++) {
		struct json_object *mid;

		r = walk(ps, t, k, i + 1, &mid);
		if (r)
			return r;
		if (is_table(mid) && mark_defined(ps, mid) < 0)
			return -ENOMEM;
	}
	if (json_object_object_get_ex(parent, k->part[k->n - 1], NULL))
		return fail(ps, "key '%s' is set twice", k->part[k->n - 1]);
	r = parse_value(ps, &v);
	if (r)
		return r;
	if (json_object_object_add(parent, k->part[k->n - 1], v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/* key = value into table t; dotted keys make (and define) tables. */
static int parse_pair(struct parser *ps, struct json_object *t)
{
	_cleanup_(key_free) struct key k = { .n = 0 };
	int r = parse_key(ps, &k);

	if (r)
		return r;
	return parse_pair_value(ps, t, &k);
}

static int parse_array(struct parser *ps, struct json_object **out)
{
	_cleanup_json_ struct json_object *a = json_object_new_array();
	struct json_object *v;
	int r;

	if (!a)
		return -ENOMEM;
	ps->c.p++;
	for (;;) {
		if ((r = skip_space(ps)))
			return r;
		if (peek(ps, 0) == ']')
			break;
		if ((r = parse_value(ps, &v)))
			return r;
		if (json_object_array_add(a, v)) {
			json_object_put(v);
			return -ENOMEM;
		}
		if ((r = skip_space(ps)))
			return r;
		if (peek(ps, 0) == ']')
			break;
		if (peek(ps, 0) != ',')
			return fail(ps, "expected ',' or ']' in an array");
		ps->c.p++;
	}
	ps->c.p++;
	*out = TAKE_PTR(a);
	return 0;
}

static int parse_inline_table(struct parser *ps, struct json_object **out)
{
	_cleanup_json_ struct json_object *t = json_object_new_object();
	int r;

	if (!t)
		return -ENOMEM;
	ps->c.p++;
	skip_blank(ps);
	if (peek(ps, 0) == '}') {
		ps->c.p++;
		*out = TAKE_PTR(t);
		return 0;
	}
	for (;;) {
		if ((r = parse_pair(ps, t)))
			return r;
		skip_blank(ps);
		if (peek(ps, 0) == '}')
			break;
		if (peek(ps, 0) != ',')
			return fail(ps,
				    "expected ',' or '}' in an inline table");
		ps->c.p++;
	}
	ps->c.p++;
	*out = TAKE_PTR(t);
	return 0;
}

/* Consumes w if it is the whole bare word at the cursor. */
static bool word(struct parser *ps, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(ps->c.end - ps->c.p) < n || strncmp(ps->c.p, w, n) ||
	    toml_scalar_bare_char(peek(ps, n)))
		return false;
	ps->c.p += n;
	return true;
}

static int parse_value(struct parser *ps, struct json_object **out)
{
	char c = peek(ps, 0);
	char *s = NULL;
	int r;

	if (++ps->depth > TOML_MAX_DEPTH)
		return fail(ps, "values nested deeper than %d", TOML_MAX_DEPTH);
	if (c == '"' || c == '\'') {
		r = toml_scalar_string(&ps->c, &s);
		*out = r ? NULL : json_object_new_string(s);
		r = r ?: *out ? 0 : -ENOMEM;
		free(s);
	} else if (c == '[') {
		r = parse_array(ps, out);
	} else if (c == '{') {
		r = parse_inline_table(ps, out);
	} else if (word(ps, "true") || word(ps, "false")) {
		*out = json_object_new_boolean(ps->c.p[-1] == 'e' &&
					       ps->c.p[-2] == 'u');
		r = *out ? 0 : -ENOMEM;
	} else {
		r = toml_scalar_number(&ps->c, out);
	}
	ps->depth--;
	return r;
}

/* The table header key k names, after its closing bracket(s): made when
 * new, a new element of an array of tables. */
static int header_table(struct parser *ps, const struct key *k, bool array,
			struct json_object **out)
{
	struct json_object *parent, *t, *v;
	const char *last;
	int r;

	if (peek(ps, 0) != ']' || (array && peek(ps, 1) != ']'))
		return fail(ps, "expected '%s' after the table name",
			    array ? "]]" : "]");
	ps->c.p += array ? 2 : 1;
	r = walk(ps, ps->root, k, k->n - 1, &parent);
	if (r)
		return r;
	last = k->part[k->n - 1];
	if (!json_object_object_get_ex(parent, last, &v)) {
		v = array ? json_object_new_array() : json_object_new_object();
		if (!v || json_object_object_add(parent, last, v))
			return -ENOMEM;
	}
	if (!array) {
		if (!is_table(v))
			return fail(ps, "'%s' is not a table", last);
		r = mark_defined(ps, v);
		if (r > 0)
			return fail(ps, "table '%s' is defined twice", last);
		if (r)
			return r;
		*out = v;
		return 0;
	}
	if (!(json_object_is_type(v, json_type_array) &&
	      (!json_object_array_length(v) || is_array_of_tables(v))))
		return fail(ps, "'%s' is not an array of tables", last);
	t = json_object_new_object();
	if (!t || json_object_array_add(v, t))
		return -ENOMEM;
	*out = t;
	return 0;
}

/* [a.b] or [[a.b]]: the table that the following pairs go into. */
static int parse_header(struct parser *ps)
{
	bool array = peek(ps, 1) == '[';
	_cleanup_(key_free) struct key k = { .n = 0 };
	struct json_object *t = NULL;
	int r;

	ps->c.p += array ? 2 : 1;
	r = parse_key(ps, &k);
	if (r)
		return r;
	r = header_table(ps, &k, array, &t);
	if (r)
		return r;
	ps->cur = t;
	return end_of_line(ps);
}

static int parse_document(struct parser *ps)
{
	int r;

	for (;;) {
		if ((r = skip_space(ps)))
			return r;
		if (at_end(ps))
			return 0;
		if (*ps->c.p == '[')
			r = parse_header(ps);
		else
			r = parse_pair(ps, ps->cur) ?: end_of_line(ps);
		if (r)
			return r;
	}
}

int toml_parse(const char *text, size_t len, struct json_object **out,
	       char err[SH_TOML_ERR_MAX])
{
	struct parser ps = { .c = { text, text + len, 1, err } };
	int r;

	err[0] = '\0';
	if (memchr(text, '\0', len))
		return fail(&ps, "a NUL byte in the file");
	ps.root = json_object_new_object();
	ps.defined = json_object_new_object();
	ps.cur = ps.root;
	r = ps.root && ps.defined ? parse_document(&ps) : -ENOMEM;
	json_object_put(ps.defined);
	if (r) {
		json_object_put(ps.root);
		if (r == -ENOMEM)
			snprintf(err, SH_TOML_ERR_MAX, "out of memory");
		return r;
	}
	*out = ps.root;
	return 0;
}

struct json_object *toml_get(struct json_object *table, const char *const *keys)
{
	struct json_object *v = table;

	for (; *keys && v; keys++)
		if (!is_table(v) || !json_object_object_get_ex(v, *keys, &v))
			return NULL;
	return v;
}

bool toml_flag(struct json_object *table, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(table, key, &v);
	return json_object_get_boolean(v);
}

void toml_text(struct json_object *table, const char *key, const char *def,
	       char *buf, size_t len)
{
	struct json_object *v = NULL;
	const char *s;

	json_object_object_get_ex(table, key, &v);
	s = json_object_get_string(v);
	snprintf(buf, len, "%s", s && *s ? s : def);
}
