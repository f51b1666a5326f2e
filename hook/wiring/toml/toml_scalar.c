// SPDX-License-Identifier: GPL-2.0-only
/*
 * TOML scalars (toml_scalar.h): basic and literal strings, one-line and
 * multi-line, with every escape TOML 1.0 has; integers in the four bases
 * with '_' between digits; floats, inf and nan, which keep their text so
 * that a value written back reads the same.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "wiring/toml/toml_scalar.h"

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

static bool at_end(const struct toml_cursor *c)
{
	return c->p >= c->end;
}

char toml_scalar_peek(const struct toml_cursor *c, size_t ahead)
{
	return c->p + ahead < c->end ? c->p[ahead] : '\0';
}

void toml_scalar_skip_blank(struct toml_cursor *c)
{
	while (!at_end(c) && (*c->p == ' ' || *c->p == '\t'))
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
int toml_scalar_string(struct toml_cursor *c, char **out)
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
		if (at_end(c)) {
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
	*out = b.s;
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
		       struct json_object **out)
{
	const char *body = tok + (*tok == '+' || *tok == '-');
	char clean[TOML_MAX_TOKEN];
	size_t n = 0;
	char *end;
	double d;

	if (!strcmp(body, "inf") || !strcmp(body, "nan")) {
		d = *body == 'n' ? NAN : *tok == '-' ? -INFINITY : INFINITY;
		*out = json_object_new_double_s(d, tok);
		return *out ? 0 : -ENOMEM;
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
	*out = json_object_new_double_s(d, tok);
	return *out ? 0 : -ENOMEM;
}

/* Integers (decimal, 0x, 0o, 0b) and floats; dates are refused. */
int toml_scalar_number(struct toml_cursor *c, struct json_object **out)
{
	char tok[TOML_MAX_TOKEN];
	size_t n = 0;
	int64_t v;
	int r;

	while (!at_end(c) &&
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
			   false, &v);
	else if (strpbrk(tok, ".eE") || strstr(tok, "inf") ||
		 strstr(tok, "nan"))
		return float_value(c, tok, out);
	else if (leading_zero(tok))
		return toml_scalar_fail(c, "leading zero in '%s'", tok);
	else
		r = digits(c, tok, 10, true, &v);
	if (r)
		return r;
	*out = json_object_new_int64(v);
	return *out ? 0 : -ENOMEM;
}
