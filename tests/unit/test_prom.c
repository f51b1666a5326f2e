// SPDX-License-Identifier: GPL-2.0-only
/*
 * metrics.c's writer: the Prometheus text format, label values escaped and bounded.
 *
 * Modules: `metrics.c`
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "observe/metrics.h"
#include "tap.h"

/* What the writer put out, as one string. */
struct capture {
	char *text;
	size_t len;
	FILE *f;
	struct prom p;
};

static void capture_start(struct capture *c)
{
	c->f = open_memstream(&c->text, &c->len);
	metrics_prom_init(&c->p, c->f);
}

static void capture_end(struct capture *c)
{
	ok(metrics_prom_finish(&c->p) == 0, "the writer reports no error");
	fclose(c->f);
}

static void test_escape(void)
{
	char buf[PROM_ESCAPED_MAX], long_value[PROM_LABEL_VALUE_MAX * 3];

	ok(!strcmp(metrics_prom_escape(buf, "plain-name_1.x"),
		   "plain-name_1.x"),
	   "a plain value is kept");
	ok(!strcmp(metrics_prom_escape(buf, "a\"b"), "a\\\"b"),
	   "a quote: \\\"");
	ok(!strcmp(metrics_prom_escape(buf, "a\\b"), "a\\\\b"),
	   "a backslash: \\\\");
	ok(!strcmp(metrics_prom_escape(buf, "a\nb"), "a\\nb"),
	   "a newline: \\n");
	ok(!strcmp(metrics_prom_escape(buf, "a\rb\tc\x01"), "a?b?c?"),
	   "other control bytes: ?");
	ok(!strcmp(metrics_prom_escape(buf, "caf\xc3\xa9\xff"), "caf???"),
	   "non-ASCII bytes: ? (always valid UTF-8)");
	ok(!strcmp(metrics_prom_escape(buf, ""), ""), "an empty value");
	memset(long_value, '"', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = '\0';
	metrics_prom_escape(buf, long_value);
	ok(strlen(buf) == PROM_LABEL_VALUE_MAX * 2 + 3 &&
		   !strcmp(buf + PROM_LABEL_VALUE_MAX * 2, "..."),
	   "a long value of quotes is cut at %d bytes, then '...' (%zu)",
	   PROM_LABEL_VALUE_MAX, strlen(buf));
}

static void test_family(void)
{
	struct prom_label l[] = { { "pod", "we\"ird\\\npod" },
				  { "empty", "" } };
	struct capture c;

	capture_start(&c);
	metrics_prom_family(&c.p, "x_total", "counter", "Things.");
	metrics_prom_sample(&c.p, "", l, 2, 18446744073709551615ULL);
	metrics_prom_sample(&c.p, "", NULL, 0, 0);
	capture_end(&c);
	ok(!strcmp(c.text, "# HELP x_total Things.\n"
			   "# TYPE x_total counter\n"
			   "x_total{pod=\"we\\\"ird\\\\\\npod\",empty=\"\"} "
			   "18446744073709551615\n"
			   "x_total 0\n"),
	   "HELP and TYPE once, escaped labels, no braces without labels, full uint64");
	if (tap_failed)
		tap_diag("%s", c.text);
	free(c.text);
}

static void test_histogram(void)
{
	static const double bounds[] = { 0.5, 1, INFINITY };
	static const uint64_t bucket[] = { 2, 0, 3 };
	struct prom_label l[] = { { "stage", "prestart" } };
	struct capture c;

	capture_start(&c);
	metrics_prom_family(&c.p, "d_seconds", "histogram", "Time.");
	metrics_prom_histogram(&c.p, l, 1, bounds, bucket, 3, 7.25);
	capture_end(&c);
	ok(!strcmp(c.text,
		   "# HELP d_seconds Time.\n"
		   "# TYPE d_seconds histogram\n"
		   "d_seconds_bucket{stage=\"prestart\",le=\"0.5\"} 2\n"
		   "d_seconds_bucket{stage=\"prestart\",le=\"1\"} 2\n"
		   "d_seconds_bucket{stage=\"prestart\",le=\"+Inf\"} 5\n"
		   "d_seconds_sum{stage=\"prestart\"} 7.25\n"
		   "d_seconds_count{stage=\"prestart\"} 5\n"),
	   "a histogram: cumulative buckets, +Inf last, _sum and _count");
	if (tap_failed)
		tap_diag("%s", c.text);
	free(c.text);
}

static void test_write_error(void)
{
	FILE *full = fopen("/dev/full", "we");
	struct prom p;

	if (!full) {
		ok(true, "# SKIP no /dev/full");
		return;
	}
	setvbuf(full, NULL, _IONBF, 0);
	metrics_prom_init(&p, full);
	metrics_prom_family(&p, "x", "gauge", "X.");
	ok(metrics_prom_finish(&p) == -ENOSPC,
	   "a write error is reported (ENOSPC)");
	fclose(full);
}

int main(void)
{
	test_escape();
	test_family();
	test_histogram();
	test_write_error();
	return tap_done();
}
