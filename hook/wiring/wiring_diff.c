// SPDX-License-Identifier: GPL-2.0-only
/*
 * A unified line diff of a file's old and new text, for `runtime
 * configure --dry-run`: what an operator reviews before the runtime's
 * config changes. Files are small (a drop-in, a base spec): a longest
 * common subsequence table over lines is enough, capped in size.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "wiring/wiring_diff.h"

#define DIFF_MAX_LINES 2000 /* a table of 8 MB at most */
#define DIFF_CONTEXT 3

struct lines {
	const char **at;
	size_t *len;
	size_t n;
};

static int split(const char *text, struct lines *l)
{
	size_t cap = 0;

	l->n = 0;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (l->n == DIFF_MAX_LINES)
			return -EFBIG;
		if (l->n == cap) {
			const char **at;
			size_t *lens;

			cap = cap ? cap * 2 : 64;
			/* Each array kept in l until its bigger copy is had:
			 * the caller frees whichever it holds. */
			at = realloc(l->at, cap * sizeof(*l->at));
			if (!at)
				return -ENOMEM;
			l->at = at;
			lens = realloc(l->len, cap * sizeof(*l->len));
			if (!lens)
				return -ENOMEM;
			l->len = lens;
		}
		l->at[l->n] = p;
		l->len[l->n++] = len;
		p = nl ? nl + 1 : p + len;
	}
	return 0;
}

static bool same(const struct lines *a, size_t i, const struct lines *b,
		 size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->at[i], b->at[j], a->len[i]);
}

/* The edit script: ' ', '-', '+' per step, and the line each names. */
struct edit {
	char op;
	size_t line;
};

static int script(const struct lines *a, const struct lines *b,
		  struct edit *out, size_t *n)
{
	size_t w = b->n + 1;
	_cleanup_free_ uint16_t *lcs = calloc((a->n + 1) * w, sizeof(*lcs));
	size_t i = 0, j = 0;

	if (!lcs)
		return -ENOMEM;
	for (size_t x = a->n; x-- > 0;)
		for (size_t y = b->n; y-- > 0;)
			lcs[x * w + y] = same(a, x, b, y) ?
						 lcs[(x + 1) * w + y + 1] + 1 :
					 lcs[(x + 1) * w + y] >
							 lcs[x * w + y + 1] ?
						 lcs[(x + 1) * w + y] :
						 lcs[x * w + y + 1];
	*n = 0;
	while (i < a->n || j < b->n) {
		if (i < a->n && j < b->n && same(a, i, b, j)) {
			out[(*n)++] = (struct edit){ ' ', i++ };
			j++;
		} else if (j < b->n &&
			   (i == a->n ||
			    lcs[i * w + j + 1] > lcs[(i + 1) * w + j])) {
			out[(*n)++] = (struct edit){ '+', j++ };
		} else {
			out[(*n)++] = (struct edit){ '-', i++ };
		}
	}
	return 0;
}

static void print_line(FILE *out, char op, const struct lines *l, size_t i)
{
	fprintf(out, "%c%.*s\n", op, (int)l->len[i], l->at[i]);
}

/* Hunks: each change with DIFF_CONTEXT unchanged lines around it. */
static void print_hunks(FILE *out, const struct edit *e, size_t n,
			const struct lines *a, const struct lines *b)
{
	size_t k = 0;

	while (k < n) {
		size_t start, end, next;

		while (k < n && e[k].op == ' ')
			k++;
		if (k == n)
			return;
		start = k > DIFF_CONTEXT ? k - DIFF_CONTEXT : 0;
		for (end = k, next = k; next < n; next++) {
			if (e[next].op != ' ')
				end = next;
			else if (next - end > 2 * DIFF_CONTEXT)
				break;
		}
		end = end + DIFF_CONTEXT + 1 < n ? end + DIFF_CONTEXT + 1 : n;
		fputs("@@\n", out);
		for (size_t x = start; x < end; x++)
			print_line(out, e[x].op, e[x].op == '+' ? b : a,
				   e[x].line);
		k = end;
	}
}

int wiring_diff_print(FILE *out, const char *old, const char *new_text,
		      const char *path)
{
	struct lines a = { 0 }, b = { 0 };
	_cleanup_free_ struct edit *e = NULL;
	size_t n = 0;
	int r = split(old, &a) ?: split(new_text, &b);

	if (r)
		goto free_lines;
	e = calloc(a.n + b.n + 1, sizeof(*e));
	r = e ? script(&a, &b, e, &n) : -ENOMEM;
	if (r)
		goto free_lines;
	fprintf(out, "--- %s%s\n+++ %s%s\n", old ? "" : "/dev/null",
		old ? path : "", new_text ? "" : "/dev/null",
		new_text ? path : "");
	print_hunks(out, e, n, &a, &b);
free_lines:
	free(a.at);
	free(a.len);
	free(b.at);
	free(b.len);
	return r;
}
