// SPDX-License-Identifier: GPL-2.0-only
/* The Prometheus text format (prom.h), on a stdio stream. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "observe/prom.h"

void prom_init(struct prom *p, FILE *out)
{
	p->out = out;
	p->family = NULL;
	p->error = 0;
}

static void prom_check(struct prom *p, int n)
{
	if (n < 0 && !p->error)
		p->error = -(errno ? errno : EIO);
}

void prom_family(struct prom *p, const char *name, const char *type,
		 const char *help)
{
	p->family = name;
	prom_check(p, fprintf(p->out, "# HELP %s %s\n# TYPE %s %s\n", name,
			      help, name, type));
}

const char *prom_escape(char out[PROM_ESCAPED_MAX], const char *value)
{
	size_t used = 0, i;

	for (i = 0; value[i] && i < PROM_LABEL_VALUE_MAX; i++) {
		unsigned char c = (unsigned char)value[i];

		if (c == '\\' || c == '"') {
			out[used++] = '\\';
			out[used++] = (char)c;
		} else if (c == '\n') {
			out[used++] = '\\';
			out[used++] = 'n';
		} else {
			out[used++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
		}
	}
	if (value[i]) {
		memcpy(out + used, "...", 3);
		used += 3;
	}
	out[used] = '\0';
	return out;
}

static void prom_labels(struct prom *p, const struct prom_label *labels, int nr,
			const char *le)
{
	char buf[PROM_ESCAPED_MAX];
	const char *sep = "";

	if (nr == 0 && !le)
		return;
	prom_check(p, fputc('{', p->out) == EOF ? -1 : 0);
	for (int i = 0; i < nr; i++) {
		prom_check(p,
			   fprintf(p->out, "%s%s=\"%s\"", sep, labels[i].name,
				   prom_escape(buf, labels[i].value)));
		sep = ",";
	}
	if (le)
		prom_check(p, fprintf(p->out, "%sle=\"%s\"", sep, le));
	prom_check(p, fputc('}', p->out) == EOF ? -1 : 0);
}

void prom_sample(struct prom *p, const char *suffix,
		 const struct prom_label *labels, int nr, uint64_t value)
{
	prom_check(p, fprintf(p->out, "%s%s", p->family, suffix));
	prom_labels(p, labels, nr, NULL);
	prom_check(p, fprintf(p->out, " %llu\n", (unsigned long long)value));
}

void prom_histogram(struct prom *p, const struct prom_label *labels, int nr,
		    const double *bounds, const uint64_t *bucket,
		    int nr_buckets, double sum)
{
	uint64_t total = 0;
	char le[32];

	for (int b = 0; b < nr_buckets; b++) {
		total += bucket[b];
		if (isinf(bounds[b]))
			snprintf(le, sizeof(le), "+Inf");
		else
			snprintf(le, sizeof(le), "%g", bounds[b]);
		prom_check(p, fprintf(p->out, "%s_bucket", p->family));
		prom_labels(p, labels, nr, le);
		prom_check(p, fprintf(p->out, " %llu\n",
				      (unsigned long long)total));
	}
	prom_check(p, fprintf(p->out, "%s_sum", p->family));
	prom_labels(p, labels, nr, NULL);
	prom_check(p, fprintf(p->out, " %.9g\n", sum));
	prom_check(p, fprintf(p->out, "%s_count", p->family));
	prom_labels(p, labels, nr, NULL);
	prom_check(p, fprintf(p->out, " %llu\n", (unsigned long long)total));
}

int prom_finish(struct prom *p)
{
	if (fflush(p->out) == EOF)
		prom_check(p, -1);
	return p->error;
}
