// SPDX-License-Identifier: GPL-2.0-only
/*
 * A TOML 1.0 reader (toml.h) for runtime config files. Each table header
 * and key is checked as the spec says: a key set twice, a table defined
 * twice, or a value where a table should be is an error with its line, as
 * the runtimes' own decoders (go-toml, BurntSushi/toml) treat them.
 */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "wiring/toml/toml.h"

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

static int key_part(struct parser *ps, char **ret)
{
	const char *start = ps->c.p;

	if (peek(ps, 0) == '"' || peek(ps, 0) == '\'') {
		if (peek(ps, 1) == peek(ps, 0) && peek(ps, 2) == peek(ps, 0))
			return fail(ps, "a key cannot be a multi-line string");
		return toml_scalar_string(&ps->c, ret);
	}
	while (!at_end(ps) && toml_scalar_bare_char(*ps->c.p))
		ps->c.p++;
	if (ps->c.p == start)
		return fail(ps, "a key is missing");
	*ret = strndup(start, ps->c.p - start);
	return *ret ? 0 : -ENOMEM;
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
		     const char *key, struct json_object **ret)
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
	*ret = v;
	return 0;
}

static int walk(struct parser *ps, struct json_object *from,
		const struct key *k, int upto, struct json_object **ret)
{
	int r = 0;

	*ret = from;
	for (int i = 0; i < upto && !r; i++)
		r = sub_table(ps, *ret, k->part[i], ret);
	return r;
}

static int parse_value(struct parser *ps, struct json_object **ret);

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

static int parse_array(struct parser *ps, struct json_object **ret)
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
	*ret = TAKE_PTR(a);
	return 0;
}

static int parse_inline_table(struct parser *ps, struct json_object **ret)
{
	_cleanup_json_ struct json_object *t = json_object_new_object();
	int r;

	if (!t)
		return -ENOMEM;
	ps->c.p++;
	skip_blank(ps);
	if (peek(ps, 0) == '}') {
		ps->c.p++;
		*ret = TAKE_PTR(t);
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
	*ret = TAKE_PTR(t);
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

static int parse_value(struct parser *ps, struct json_object **ret)
{
	char c = peek(ps, 0);
	char *s = NULL;
	int r;

	if (++ps->depth > TOML_MAX_DEPTH)
		return fail(ps, "values nested deeper than %d", TOML_MAX_DEPTH);
	if (c == '"' || c == '\'') {
		r = toml_scalar_string(&ps->c, &s);
		*ret = r ? NULL : json_object_new_string(s);
		r = r ?: *ret ? 0 : -ENOMEM;
		free(s);
	} else if (c == '[') {
		r = parse_array(ps, ret);
	} else if (c == '{') {
		r = parse_inline_table(ps, ret);
	} else if (word(ps, "true") || word(ps, "false")) {
		*ret = json_object_new_boolean(ps->c.p[-1] == 'e' &&
					       ps->c.p[-2] == 'u');
		r = *ret ? 0 : -ENOMEM;
	} else {
		r = toml_scalar_number(&ps->c, ret);
	}
	ps->depth--;
	return r;
}

/* The table header key k names, after its closing bracket(s): made when
 * new, a new element of an array of tables. */
static int header_table(struct parser *ps, const struct key *k, bool array,
			struct json_object **ret)
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
		*ret = v;
		return 0;
	}
	if (!(json_object_is_type(v, json_type_array) &&
	      (!json_object_array_length(v) || is_array_of_tables(v))))
		return fail(ps, "'%s' is not an array of tables", last);
	t = json_object_new_object();
	if (!t || json_object_array_add(v, t))
		return -ENOMEM;
	*ret = t;
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

int toml_parse(const char *text, size_t len, struct json_object **ret,
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
	*ret = ps.root;
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

/*
 * TOML scalars (toml.h): basic and literal strings, one-line and
 * multi-line, with every escape TOML 1.0 has; integers in the four bases
 * with '_' between digits; floats, inf and nan, which keep their text so
 * that a value written back reads the same.
 */

#define TOML_MAX_TOKEN 128 /* a number */

int toml_scalar_fail(struct toml_cursor *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->err[0])
		return -EINVAL;
	n = snprintf(c->err, SH_TOML_ERR_MAX, "line %d: ", c->line);
	va_start(ap, fmt);
	vsnprintf(c->err + n, SH_TOML_ERR_MAX - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool cursor_at_end(const struct toml_cursor *c)
{
	return c->p >= c->end;
}

char toml_scalar_peek(const struct toml_cursor *c, size_t ahead)
{
	return c->p + ahead < c->end ? c->p[ahead] : '\0';
}

void toml_scalar_skip_blank(struct toml_cursor *c)
{
	while (!cursor_at_end(c) && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

bool toml_scalar_newline(struct toml_cursor *c)
{
	if (toml_scalar_peek(c, 0) == '\r' && toml_scalar_peek(c, 1) == '\n')
		c->p++;
	if (toml_scalar_peek(c, 0) != '\n')
		return false;
	c->p++;
	c->line++;
	return true;
}

bool toml_scalar_bare_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
}

/* A growing buffer, NUL-terminated. */
struct buf {
	char *s;
	size_t len, cap;
};

static int buf_add(struct buf *b, const char *s, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		size_t cap = (b->len + len + 1) * 2;
		char *bigger = realloc(b->s, cap);

		if (!bigger)
			return -ENOMEM;
		b->s = bigger;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, len);
	b->len += len;
	b->s[b->len] = '\0';
	return 0;
}

static int hex_digits(struct toml_cursor *c, int n, uint32_t *cp)
{
	*cp = 0;
	for (int i = 0; i < n; i++) {
		char x = toml_scalar_peek(c, i);
		int d = x >= '0' && x <= '9' ? x - '0' :
			x >= 'a' && x <= 'f' ? x - 'a' + 10 :
			x >= 'A' && x <= 'F' ? x - 'A' + 10 :
					       -1;

		if (d < 0)
			return toml_scalar_fail(c, "\\%c needs %d hex digits",
						n == 4 ? 'u' : 'U', n);
		*cp = *cp * 16 + d;
	}
	c->p += n;
	if (*cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return toml_scalar_fail(
			c, "escape of a code point that is no scalar value");
	return 0;
}

static int add_utf8(struct buf *b, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = 0xc0 | cp >> 6;
		u[1] = 0x80 | (cp & 0x3f);
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = 0xe0 | cp >> 12;
		u[1] = 0x80 | (cp >> 6 & 0x3f);
		u[2] = 0x80 | (cp & 0x3f);
		n = 3;
	} else {
		u[0] = 0xf0 | cp >> 18;
		u[1] = 0x80 | (cp >> 12 & 0x3f);
		u[2] = 0x80 | (cp >> 6 & 0x3f);
		u[3] = 0x80 | (cp & 0x3f);
		n = 4;
	}
	return buf_add(b, u, n);
}

/* A line-ending backslash: the newline and the blanks and newlines after
 * it are dropped. */
static int line_continuation(struct toml_cursor *c)
{
	toml_scalar_skip_blank(c);
	if (!toml_scalar_newline(c))
		return toml_scalar_fail(
			c, "only blanks may follow a line-ending backslash");
	for (;;) {
		toml_scalar_skip_blank(c);
		if (!toml_scalar_newline(c))
			return 0;
	}
}

/* After a backslash in a basic string. */
static int escape(struct toml_cursor *c, struct buf *b, bool multi)
{
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	const char *hit;
	uint32_t cp;
	char x = toml_scalar_peek(c, 0);

	if (multi && (x == ' ' || x == '\t' || x == '\n' || x == '\r'))
		return line_continuation(c);
	c->p++;
	if (x && (hit = strchr(from, x)))
		return buf_add(b, &to[hit - from], 1);
	if (x == 'u' || x == 'U')
		return hex_digits(c, x == 'u' ? 4 : 8, &cp) ?: add_utf8(b, cp);
	return toml_scalar_fail(c, "unknown escape \\%c", x ? x : '0');
}

/* One character of a string's content, not its closing quote. */
static int string_char(struct toml_cursor *c, struct buf *b, char q, bool multi)
{
	char x = *c->p;

	if (x == '\\' && q == '"') {
		c->p++;
		return escape(c, b, multi);
	}
	if (multi && (x == '\n' || x == '\r'))
		return toml_scalar_newline(c) ?
			       buf_add(b, "\n", 1) :
			       toml_scalar_fail(
				       c, "a bare carriage return in a string");
	if (((unsigned char)x < 0x20 && x != '\t') || x == 0x7f)
		return toml_scalar_fail(
			c, "control character 0x%02x in a string", x);
	return buf_add(b, c->p++, 1);
}

/* "...", '...', and their multi-line forms with three quotes (a newline
 * right after the opening quotes is dropped; up to two quotes may end the
 * content). */
int toml_scalar_string(struct toml_cursor *c, char **ret)
{
	char q = *c->p;
	bool multi = toml_scalar_peek(c, 1) == q && toml_scalar_peek(c, 2) == q;
	struct buf b = { 0 };
	int r = buf_add(&b, "", 0);
	size_t n;

	c->p += multi ? 3 : 1;
	if (multi)
		toml_scalar_newline(c);
	while (!r) {
		if (cursor_at_end(c)) {
			r = toml_scalar_fail(c, "a string is not closed");
			break;
		}
		if (*c->p != q) {
			r = string_char(c, &b, q, multi);
			continue;
		}
		for (n = 0; n < 5 && toml_scalar_peek(c, n) == q; n++)
			;
		if (!multi || n >= 3) {
			r = multi ? buf_add(&b, c->p, n - 3) : 0;
			c->p += multi ? n : 1;
			break;
		}
		r = buf_add(&b, c->p, n);
		c->p += n;
	}
	if (r) {
		free(b.s);
		return r;
	}
	*ret = b.s;
	return 0;
}

/* Digits of base, '_' only between two digits, into *v. */
static int digits(struct toml_cursor *c, const char *s, int base, bool sign_ok,
		  int64_t *v)
{
	char clean[TOML_MAX_TOKEN];
	size_t n = 0;
	char *end;

	for (const char *q = s; *q; q++) {
		if (*q == '_') {
			if (q == s || !isalnum((unsigned char)q[-1]) ||
			    !isalnum((unsigned char)q[1]))
				return toml_scalar_fail(
					c, "misplaced '_' in '%s'", s);
			continue;
		}
		clean[n++] = *q;
	}
	clean[n] = '\0';
	if (!n || (!sign_ok && (clean[0] == '+' || clean[0] == '-')))
		return toml_scalar_fail(c, "bad number '%s'", s);
	errno = 0;
	*v = strtoll(clean, &end, base);
	if (*end || end == clean || clean[0] == ' ')
		return toml_scalar_fail(c, "bad number '%s'", s);
	if (errno == ERANGE)
		return toml_scalar_fail(c, "'%s' does not fit in 64 bits", s);
	return 0;
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static bool leading_zero(const char *s)
{
	if (*s == '+' || *s == '-')
		s++;
	return s[0] == '0' && is_digit(s[1]);
}

/* 3.14, 1e6, -2E-3, inf, nan: a double that keeps its text. */
static int float_value(struct toml_cursor *c, const char *tok,
		       struct json_object **ret)
{
	const char *body = tok + (*tok == '+' || *tok == '-');
	char clean[TOML_MAX_TOKEN];
	size_t n = 0;
	char *end;
	double d;

	if (!strcmp(body, "inf") || !strcmp(body, "nan")) {
		d = *body == 'n' ? NAN : *tok == '-' ? -INFINITY : INFINITY;
		*ret = json_object_new_double_s(d, tok);
		return *ret ? 0 : -ENOMEM;
	}
	for (const char *q = tok; *q; q++) {
		if ((*q == '_' || *q == '.') &&
		    !(q > tok && is_digit(q[-1]) && is_digit(q[1])))
			return toml_scalar_fail(c, "bad float '%s'", tok);
		if (*q != '_')
			clean[n++] = *q;
	}
	clean[n] = '\0';
	d = strtod(clean, &end);
	if (leading_zero(tok) || *end || end == clean || !is_digit(*body) ||
	    strpbrk(clean, "xXpP"))
		return toml_scalar_fail(c, "bad float '%s'", tok);
	*ret = json_object_new_double_s(d, tok);
	return *ret ? 0 : -ENOMEM;
}

/* Integers (decimal, 0x, 0o, 0b) and floats; dates are refused. */
int toml_scalar_number(struct toml_cursor *c, struct json_object **ret)
{
	char tok[TOML_MAX_TOKEN];
	size_t n = 0;
	int64_t v;
	int r;

	while (!cursor_at_end(c) &&
	       (toml_scalar_bare_char(*c->p) || strchr("+.:", *c->p))) {
		if (n + 1 == sizeof(tok))
			return toml_scalar_fail(
				c, "a value of more than %d characters",
				TOML_MAX_TOKEN - 1);
		tok[n++] = *c->p++;
	}
	tok[n] = '\0';
	if (!n)
		return toml_scalar_fail(c, "a value is missing");
	if (strchr(tok, ':') || (n >= 5 && is_digit(tok[0]) && tok[4] == '-'))
		return toml_scalar_fail(
			c, "dates and times are not supported ('%s')", tok);
	if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'o' || tok[1] == 'b'))
		r = digits(c, tok + 2,
			   tok[1] == 'x' ? 16 :
			   tok[1] == 'o' ? 8 :
					   2,
			   /* sign_ok= */ false, &v);
	else if (strpbrk(tok, ".eE") || strstr(tok, "inf") ||
		 strstr(tok, "nan"))
		return float_value(c, tok, ret);
	else if (leading_zero(tok))
		return toml_scalar_fail(c, "leading zero in '%s'", tok);
	else
		r = digits(c, tok, 10, /* sign_ok= */ true, &v);
	if (r)
		return r;
	*ret = json_object_new_int64(v);
	return *ret ? 0 : -ENOMEM;
}

/*
 * The TOML writer (toml.h): what `runtime configure` writes into the
 * runtimes' drop-ins. Keys are bare where TOML allows, else basic strings;
 * strings escape every control byte, so a value can never end a line or a
 * header early.
 */

#define TOML_WRITE_MAX_DEPTH 64

static void write_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void write_key(FILE *out, const char *key)
{
	const char *k = key;

	while (*k && toml_scalar_bare_char(*k))
		k++;
	if (*key && !*k)
		fputs(key, out);
	else
		write_string(out, key);
}

/* A non-empty array whose elements are all tables: [[header]]s. */
static bool array_of_tables(struct json_object *v)
{
	size_t n;

	if (!json_object_is_type(v, json_type_array))
		return false;
	n = json_object_array_length(v);
	for (size_t i = 0; i < n; i++)
		if (!is_table(json_object_array_get_idx(v, i)))
			return false;
	return n > 0;
}

/* %.17g reads back as the same double; TOML wants a '.' or an 'e'. */
static void write_double_text(FILE *out, double d)
{
	char text[40];

	snprintf(text, sizeof(text), "%.17g", d);
	fputs(text, out);
	if (!strpbrk(text, ".e"))
		fputs(".0", out);
}

static int write_double(FILE *out, struct json_object *v)
{
	double d = json_object_get_double(v);
	const char *text = json_object_get_string(v);

	if (isnan(d))
		fputs("nan", out);
	else if (isinf(d))
		fputs(d < 0 ? "-inf" : "inf", out);
	else if (text && strpbrk(text, ".eE") && !strpbrk(text, "xXpP"))
		fputs(text, out); /* its own text, or json-c's (".0" kept) */
	else
		write_double_text(out, d);
	return 0;
}

static int write_value(FILE *out, struct json_object *v, int depth)
{
	size_t n;

	if (depth > TOML_WRITE_MAX_DEPTH)
		return -EINVAL;
	switch (json_object_get_type(v)) {
	case json_type_string:
		write_string(out, json_object_get_string(v));
		return 0;
	case json_type_int:
		fprintf(out, "%lld", (long long)json_object_get_int64(v));
		return 0;
	case json_type_double:
		return write_double(out, v);
	case json_type_boolean:
		fputs(json_object_get_boolean(v) ? "true" : "false", out);
		return 0;
	case json_type_array:
		fputc('[', out);
		n = json_object_array_length(v);
		for (size_t i = 0; i < n; i++) {
			if (i)
				fputs(", ", out);
			if (write_value(out, json_object_array_get_idx(v, i),
					depth + 1))
				return -EINVAL;
		}
		fputc(']', out);
		return 0;
	case json_type_object: {
		bool first = true;

		fputc('{', out);
		json_object_object_foreach(v, key, val) {
			fputs(first ? "" : ", ", out);
			first = false;
			write_key(out, key);
			fputs(" = ", out);
			if (write_value(out, val, depth + 1))
				return -EINVAL;
		}
		fputc('}', out);
		return 0;
	}
	default:
		return -EINVAL; /* null: TOML has none */
	}
}

/* The header path: keys as write_key writes them, joined by dots. */
struct path {
	const char *key[TOML_WRITE_MAX_DEPTH];
	int n;
};

static void write_header(FILE *out, const struct path *p, bool array)
{
	fputs(array ? "\n[[" : "\n[", out);
	for (int i = 0; i < p->n; i++) {
		if (i)
			fputc('.', out);
		write_key(out, p->key[i]);
	}
	fputs(array ? "]]\n" : "]\n", out);
}

static int write_table(FILE *out, struct json_object *t, struct path *p);

static int write_sub(FILE *out, const char *key, struct json_object *v,
		     struct path *p)
{
	int r = 0;

	if (p->n == TOML_WRITE_MAX_DEPTH)
		return -EINVAL;
	p->key[p->n++] = key;
	if (is_table(v)) {
		write_header(out, p, /* array= */ false);
		r = write_table(out, v, p);
	} else {
		for (size_t i = 0; !r && i < json_object_array_length(v); i++) {
			write_header(out, p, /* array= */ true);
			r = write_table(out, json_object_array_get_idx(v, i),
					p);
		}
	}
	p->n--;
	return r;
}

static int write_table(FILE *out, struct json_object *t, struct path *p)
{
	json_object_object_foreach(t, k1, v1) {
		if (is_table(v1) || array_of_tables(v1))
			continue;
		write_key(out, k1);
		fputs(" = ", out);
		if (write_value(out, v1, 0))
			return -EINVAL;
		fputc('\n', out);
	}
	json_object_object_foreach(t, k2, v2) {
		if ((is_table(v2) || array_of_tables(v2)) &&
		    write_sub(out, k2, v2, p))
			return -EINVAL;
	}
	return 0;
}

int toml_write_doc(FILE *out, struct json_object *table)
{
	struct path p = { .n = 0 };

	if (!is_table(table))
		return -EINVAL;
	return write_table(out, table, &p) ?: ferror(out) ? -EIO : 0;
}

char *toml_write_text(const char *header, struct json_object *table)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		return NULL;
	fputs(header, out);
	if (toml_write_doc(out, table)) {
		fclose(out);
		free(text);
		return NULL;
	}
	return fclose(out) ? NULL : text;
}
