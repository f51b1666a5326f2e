/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `metrics`: what the hook did on this node (stats.h) and what the
 * programs of each policed container saw (counters.h), in Prometheus'
 * text format, for node_exporter's textfile collector.
 */
#ifndef SH_METRICS_H
#define SH_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "lib/error.h"

#define METRICS_PREFIX "oci_sockopt_hook_"

/* Writes every family to out; an attachment or counter that cannot be read
 * is skipped with a warning and counted in ..._collect_errors. */
int metrics_write(FILE *out, const char *version, struct sh_error *err);
/* The same into path (which must end in ".prom"), atomically: a temp
 * file beside it ('.'-prefixed, which the collector ignores), then
 * rename. */
int metrics_write_file(const char *path, const char *version,
		       struct sh_error *err);

/*
 * A tiny writer of Prometheus' text exposition format (version 0.0.4):
 * HELP and TYPE once per family, then its samples, families one after
 * the other; label values escaped (\\, \", \n) and bounded, since they
 * come from annotations a workload chose.
 */

/* Bytes of a label value kept; longer ones end in "...". */
#define PROM_LABEL_VALUE_MAX 128
/* Escaped: each byte may take two, plus the "..." and the NUL. */
#define PROM_ESCAPED_MAX (PROM_LABEL_VALUE_MAX * 2 + 4)

struct prom_label {
	const char *name; /* [a-z_]+, ours */
	const char *value; /* anything: escaped */
};

struct prom {
	FILE *out;
	const char *family; /* the family being written */
	int error; /* the first write error, a negative errno */
};

void metrics_prom_init(struct prom *p, FILE *out);
/* Starts a family: type is "counter", "gauge" or "histogram". */
void metrics_prom_family(struct prom *p, const char *name, const char *type,
			 const char *help);
/* One sample of the current family (suffix "" or "_total"...). */
void metrics_prom_sample(struct prom *p, const char *suffix,
			 const struct prom_label *labels, int nr,
			 uint64_t value);
/*
 * A histogram's samples: _bucket{le} (cumulative), _sum and _count.
 * bucket[] is not cumulative; bounds[nr_buckets - 1] is +Inf.
 */
void metrics_prom_histogram(struct prom *p, const struct prom_label *labels,
			    int nr, const double *bounds,
			    const uint64_t *bucket, int nr_buckets, double sum);
/* value as a label value: escaped and bounded; printable ASCII is
 * kept, every other byte (control, non-ASCII) becomes '?', so the text
 * is always valid UTF-8. */
const char *metrics_prom_escape(char out[PROM_ESCAPED_MAX], const char *value);
/* 0, or the first write error. */
int metrics_prom_finish(struct prom *p);

#endif /* SH_METRICS_H */
