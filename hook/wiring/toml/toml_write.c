// SPDX-License-Identifier: GPL-2.0-only
/*
 * The TOML writer (toml_write.h): what `runtime configure` writes into the
 * runtimes' drop-ins. Keys are bare where TOML allows, else basic strings;
 * strings escape every control byte, so a value can never end a line or a
 * header early.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "wiring/toml/toml_scalar.h"
#include "wiring/toml/toml_write.h"

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

static bool is_table(struct json_object *v)
{
	return json_object_is_type(v, json_type_object);
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
		write_header(out, p, false);
		r = write_table(out, v, p);
	} else {
		for (size_t i = 0; !r && i < json_object_array_length(v); i++) {
			write_header(out, p, true);
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
