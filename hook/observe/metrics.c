// SPDX-License-Identifier: GPL-2.0-only
/*
 * The metrics (metrics.h): families in a fixed order, each written once
 * with all its series, so none is ever duplicated. Every per-container
 * series carries container_id: the container id, or for a second
 * container of the same id under another runtime root its attachment's key
 * (the id, '@' and its cgroup id), so that no two series are one.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cg.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "observe/counters.h"
#include "observe/metrics.h"
#include "state/state.h"
#include "state/stats.h"

/* What a scrape shows of one live attachment. */
struct metrics_container {
	struct sh_attachment att; /* its names, policy, bypass and mode */
	struct sh_counters counters;
	struct audit_mode_counts *wh; /* audit mode's counters, or NULL */
};

struct metrics_ctx {
	struct metrics_container *c;
	int nr, cap;
	unsigned errors;
};

/* Which program counts each counter, and what it did. */
static const struct {
	const char *program, *action;
} metrics_counter_labels[SH_CNT_MAX] = {
	[SH_CNT_SOCK_CREATED] = { "sock_create", "allowed" },
	[SH_CNT_SOCK_BYPASSED] = { "sock_create", "bypassed" },
	[SH_CNT_SOCK_DENIED] = { "sock_create", "denied" },
	[SH_CNT_SET_DENIED] = { "setsockopt", "denied" },
	[SH_CNT_SET_CLAMPED] = { "setsockopt", "clamped" },
	[SH_CNT_SET_FORCED] = { "setsockopt", "forced" },
	[SH_CNT_GET_DENIED] = { "getsockopt", "denied" },
	[SH_CNT_GET_FORCED] = { "getsockopt", "forced" },
};

/* Audit mode: what the policy would have done. */
static int metrics_would_have(const struct sh_attachment *att,
			      struct metrics_container *c)
{
	int r;

	c->wh = malloc(sizeof(*c->wh));
	if (!c->wh)
		return -ENOMEM;
	r = counters_audit_read(&att->progs, att->cg.id, c->wh);
	if (r) {
		free(c->wh);
		c->wh = NULL;
	}
	return r;
}

static int metrics_collect(const struct sh_attachment *att, void *data)
{
	struct metrics_ctx *ctx = data;
	_cleanup_close_ int cg = cg_open_attached(&att->cg);
	struct metrics_container *c;
	int r;

	/* A stale attachment: its container is gone, gc will drop it. */
	if (cg < 0)
		return 0;
	if (ctx->nr == ctx->cap) {
		int cap = ctx->cap ? ctx->cap * 2 : 16;
		void *more = realloc(ctx->c, cap * sizeof(*ctx->c));

		if (!more)
			return -ENOMEM;
		ctx->c = more;
		ctx->cap = cap;
	}
	c = &ctx->c[ctx->nr++];
	memset(c, 0, sizeof(*c));
	c->att = *att;
	r = counters_read(&att->progs, att->cg.id, &c->counters);
	if (!r && att->audit)
		r = metrics_would_have(att, c);
	if (r) {
		log_warn("metrics: cannot read the counters of %s: %s",
			 LOG_Q(att->id), strerror(-r));
		ctx->errors++;
	}
	return 0;
}

/* The labels that name a container, first in each of its samples. */
#define CONTAINER_LABELS(att)                                                 \
	{ "container_id", (att)->key[0] ? (att)->key : (att)->id },           \
		{ "namespace", (att)->k8s_namespace }, { "pod", (att)->pod }, \
		{ "container", (att)->container },                            \
	{                                                                     \
		"policy", (att)->policy                                       \
	}

static void metrics_runs(struct prom *p, const struct sh_node_stats *s)
{
	metrics_prom_family(
		p, METRICS_PREFIX "runs_total", "counter",
		"Hook runs on this node by stage, outcome and reason.");
	for (int i = 0; i < s->nr_rows; i++) {
		const struct stats_row *row = &s->row[i];
		struct prom_label l[] = {
			{ "stage", stats_stage_names[row->stage] },
			{ "outcome", stats_outcome_names[row->outcome] },
			{ "reason", row->reason },
		};

		metrics_prom_sample(p, "", l, ARRAY_SIZE(l), row->count);
	}
}

static void metrics_duration(struct prom *p, const struct sh_node_stats *s)
{
	metrics_prom_family(p, METRICS_PREFIX "run_duration_seconds",
			    "histogram", "Time a hook run took, by stage.");
	for (int st = 0; st < STATS_STAGES; st++) {
		struct prom_label l[] = { { "stage", stats_stage_names[st] } };

		metrics_prom_histogram(p, l, ARRAY_SIZE(l),
				       stats_latency_bounds,
				       s->latency[st].bucket,
				       STATS_LATENCY_BUCKETS,
				       s->latency[st].sum_seconds);
	}
}

static void metrics_info(struct prom *p, const struct metrics_ctx *ctx)
{
	metrics_prom_family(
		p, METRICS_PREFIX "container_info", "gauge",
		"A container the hook polices, with its names and policy.");
	for (int i = 0; i < ctx->nr; i++) {
		const struct metrics_container *c = &ctx->c[i];
		struct prom_label l[] = {
			CONTAINER_LABELS(&c->att),
			{ "bypass", c->att.bypass ? "true" : "false" },
			{ "mode", c->att.audit ? "audit" : "enforce" },
		};

		metrics_prom_sample(p, "", l, ARRAY_SIZE(l), 1);
	}
}

static void metrics_calls(struct prom *p, const struct metrics_ctx *ctx)
{
	metrics_prom_family(
		p, METRICS_PREFIX "socket_calls_total", "counter",
		"Socket calls the container's programs saw, by program and action.");
	for (int i = 0; i < ctx->nr; i++) {
		const struct metrics_container *c = &ctx->c[i];

		for (int k = 0; k < SH_CNT_MAX; k++) {
			struct prom_label l[] = {
				CONTAINER_LABELS(&c->att),
				{ "program",
				  metrics_counter_labels[k].program },
				{ "action", metrics_counter_labels[k].action },
			};

			metrics_prom_sample(p, "", l, ARRAY_SIZE(l),
					    c->counters.v[k]);
		}
	}
}

static void metrics_would_have_one(struct prom *p,
				   const struct metrics_container *c)
{
	char level[32], option[96];

	for (int i = 0; c->wh && i < c->wh->nr; i++) {
		const struct audit_mode_entry *e = &c->wh->e[i];
		struct prom_label l[] = {
			CONTAINER_LABELS(&c->att),
			{ "program", kind_get(e->kind)->name },
			{ "action", e->action },
			{ "level", level },
			{ "option", option },
		};

		counters_audit_level(e, level, sizeof(level));
		counters_audit_option(e, option, sizeof(option));
		metrics_prom_sample(p, "", l, ARRAY_SIZE(l), e->n);
	}
}

static void metrics_would_have_all(struct prom *p,
				   const struct metrics_ctx *ctx)
{
	metrics_prom_family(
		p, METRICS_PREFIX "would_have_total", "counter",
		"Audit mode: what the policy would have done (deny, clamp, force) and did not, by program, level and option.");
	for (int i = 0; i < ctx->nr; i++)
		metrics_would_have_one(p, &ctx->c[i]);
}

static void metrics_gauge(struct prom *p, const char *name, const char *help,
			  const struct prom_label *l, int nr, uint64_t value)
{
	metrics_prom_family(p, name, "gauge", help);
	metrics_prom_sample(p, "", l, nr, value);
}

static void metrics_families(struct prom *p, const char *version,
			     const struct sh_node_stats *s,
			     const struct metrics_ctx *ctx)
{
	struct prom_label v[] = { { "version", version } };

	metrics_gauge(p, METRICS_PREFIX "build_info",
		      "The hook's version; always 1.", v, ARRAY_SIZE(v), 1);
	metrics_runs(p, s);
	metrics_duration(p, s);
	metrics_gauge(
		p, METRICS_PREFIX "containers_attached",
		"Containers whose cgroup has the hook's programs attached.",
		NULL, 0, ctx->nr);
	metrics_info(p, ctx);
	metrics_calls(p, ctx);
	metrics_would_have_all(p, ctx);
	metrics_gauge(
		p, METRICS_PREFIX "collect_errors",
		"What this collection could not read (stats file, counters); 0 when complete.",
		NULL, 0, ctx->errors);
}

int metrics_write(FILE *out, const char *version, struct sh_error *err)
{
	_cleanup_free_ struct sh_node_stats *s = calloc(1, sizeof(*s));
	struct metrics_ctx ctx = { 0 };
	struct sh_error stats_err = { 0 };
	struct prom p;
	int r = state_dir_check(err);

	if (r)
		return r;
	if (!s)
		return error_set(err, -ENOMEM, "metrics: %s", strerror(ENOMEM));
	/* Folding the log here keeps it short; a failure only means the
	 * reading below folds more of it. */
	if (stats_log_compact(&stats_err)) {
		log_msg(LOG_NOTICE, "metrics: %s", stats_err.msg);
		stats_err = (struct sh_error){ 0 };
	}
	if (stats_log_read(s, &stats_err)) {
		log_warn("metrics: %s", stats_err.msg);
		ctx.errors++;
	}
	r = state_foreach(metrics_collect, &ctx);
	if (r) {
		error_errno(err, r, "cannot list %s", state_dir());
		goto free_ctx;
	}
	metrics_prom_init(&p, out);
	metrics_families(&p, version, s, &ctx);
	r = metrics_prom_finish(&p);
	if (r)
		error_errno(err, r, "metrics: cannot write");
free_ctx:
	for (int i = 0; i < ctx.nr; i++)
		free(ctx.c[i].wh);
	free(ctx.c);
	return r;
}

static bool metrics_prom_name(const char *path)
{
	size_t len = strlen(path);

	return len > 5 && !strcmp(path + len - 5, ".prom");
}

/*
 * Readable by node_exporter's user whatever the umask; O_EXCL, so a temp
 * name someone else made in a shared directory (a link to elsewhere) is
 * removed, never written through.
 */
static int metrics_open_temp(int dir, const char *tmp)
{
	int fd = openat(dir, tmp,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0644);

	if (fd < 0 && errno == EEXIST && unlinkat(dir, tmp, 0) == 0)
		fd = openat(dir, tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC,
			    0644);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int metrics_replace(int dir, const char *name, const char *text,
			   size_t len)
{
	char tmp[NAME_MAX + 1];
	_cleanup_close_ int fd = -1;

	/* '.' first and no ".prom" last: the collector reads neither. */
	if (snprintf(tmp, sizeof(tmp), ".%.200s.%d.tmp", name, getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = metrics_open_temp(dir, tmp);
	if (fd < 0)
		return fd;
	return fileio_commit_temp(dir, tmp, name,
				  fileio_write_all(fd, text, len));
}

int metrics_write_file(const char *path, const char *version,
		       struct sh_error *err)
{
	_cleanup_free_ char *text = NULL, *dir_copy = strdup(path),
			    *base_copy = strdup(path);
	_cleanup_close_ int dir = -1;
	_cleanup_fclose_ FILE *f = NULL;
	size_t len = 0;
	int r;

	if (!metrics_prom_name(path))
		return error_set(
			err, -EINVAL,
			"metrics: --output %.128s does not end in .prom: node_exporter's textfile collector would ignore it",
			path);
	if (!dir_copy || !base_copy || !(f = open_memstream(&text, &len)))
		return error_set(err, -ENOMEM, "metrics: %s", strerror(ENOMEM));
	r = metrics_write(f, version, err);
	if (r)
		return r;
	if (fclose(TAKE_PTR(f)) == EOF)
		return error_errno(err, -errno, "metrics: cannot write");
	dir = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return error_errno(err, -errno, "metrics: cannot open %.128s",
				   dir_copy);
	r = metrics_replace(dir, basename(base_copy), text, len);
	if (r)
		return error_errno(err, r, "metrics: cannot write %.128s",
				   path);
	return 0;
}

/* The Prometheus text format (prom.h), on a stdio stream. */

void metrics_prom_init(struct prom *p, FILE *out)
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

void metrics_prom_family(struct prom *p, const char *name, const char *type,
			 const char *help)
{
	p->family = name;
	prom_check(p, fprintf(p->out, "# HELP %s %s\n# TYPE %s %s\n", name,
			      help, name, type));
}

const char *metrics_prom_escape(char out[PROM_ESCAPED_MAX], const char *value)
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
				   metrics_prom_escape(buf, labels[i].value)));
		sep = ",";
	}
	if (le)
		prom_check(p, fprintf(p->out, "%sle=\"%s\"", sep, le));
	prom_check(p, fputc('}', p->out) == EOF ? -1 : 0);
}

void metrics_prom_sample(struct prom *p, const char *suffix,
			 const struct prom_label *labels, int nr,
			 uint64_t value)
{
	prom_check(p, fprintf(p->out, "%s%s", p->family, suffix));
	prom_labels(p, labels, nr, NULL);
	prom_check(p, fprintf(p->out, " %llu\n", (unsigned long long)value));
}

void metrics_prom_histogram(struct prom *p, const struct prom_label *labels,
			    int nr, const double *bounds,
			    const uint64_t *bucket, int nr_buckets, double sum)
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

int metrics_prom_finish(struct prom *p)
{
	if (fflush(p->out) == EOF)
		prom_check(p, -1);
	return p->error;
}
