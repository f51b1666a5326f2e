// SPDX-License-Identifier: GPL-2.0-only
/*
 * linux.sysctl against the setsockopt rules (sysctl.h). Each table
 * sysctl sets, for the network namespace, what a socket holds for one
 * option until it calls setsockopt, read in the kernel's sources:
 *  - tcp_rmem/tcp_wmem "min default max": tcp_init_sock() starts a TCP
 *    socket's sk_rcvbuf/sk_sndbuf at the default; autotuning grows one
 *    that never set SO_RCVBUF/SO_SNDBUF up to max; min is what memory
 *    pressure leaves it. SO_RCVBUF keeps twice what it is given, so the
 *    sysctl's bytes are compared with twice the rule's values.
 *  - rmem_default/wmem_default: the same for every other socket
 *    (sock_init_data()), per network namespace since 6.x.
 *  - tcp_keepalive_time/_intvl/_probes: TCP_KEEPIDLE/INTVL/CNT of a
 *    socket that sets only SO_KEEPALIVE (keepalive_time_when() and so on).
 *  - tcp_fin_timeout: TCP_LINGER2 (tp->linger2 0 means the sysctl).
 *  - tcp_syn_retries: TCP_SYNCNT; tcp_notsent_lowat: TCP_NOTSENT_LOWAT.
 *  - ip_default_ttl: IP_TTL while uc_ttl is -1; conf.<if>.hop_limit:
 *    IPV6_UNICAST_HOPS (-1: the route's, else the device's).
 *  - tcp_congestion_control: TCP_CONGESTION (tcp_assign_congestion_control()).
 * A new network namespace copies tcp_rmem, tcp_wmem and the congestion
 * control from the initial one (tcp_sk_init()); the others start at the
 * kernel's constants. ping_group_range and ip_unprivileged_port_start set
 * no socket option (a ping socket still meets cgroup/sock_create).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "policy/sysctl.h"

#ifndef TCP_CONGESTION
#define TCP_CONGESTION 13
#endif

enum sysctl_form {
	SF_INT, /* one int */
	SF_UINT, /* one unsigned int (proc_douintvec) */
	SF_TRIPLE, /* "min default max" */
	SF_NAME, /* a congestion control's name */
};

struct sysctl_map {
	const char *key; /* components joined by '.'; "*" is any one */
	int level, optname;
	const char *option;
	enum sysctl_form form;
	int scale; /* what the kernel keeps per unit of the option */
	/* What a new network namespace starts with, when not the node's
	 * own value (-1: it copies the node's). */
	long long fresh;
	const char *what;
};

#define NO_FRESH (-1)

static const struct sysctl_map table[] = {
	{ "net.ipv4.tcp_rmem", SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF", SF_TRIPLE, 2,
	  NO_FRESH, "the receive buffer of TCP sockets, in bytes" },
	{ "net.ipv4.tcp_wmem", SOL_SOCKET, SO_SNDBUF, "SO_SNDBUF", SF_TRIPLE, 2,
	  NO_FRESH, "the send buffer of TCP sockets, in bytes" },
	{ "net.core.rmem_default", SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF", SF_INT,
	  2, NO_FRESH, "the receive buffer of other sockets, in bytes" },
	{ "net.core.wmem_default", SOL_SOCKET, SO_SNDBUF, "SO_SNDBUF", SF_INT,
	  2, NO_FRESH, "the send buffer of other sockets, in bytes" },
	{ "net.ipv4.tcp_keepalive_time", IPPROTO_TCP, 4, "TCP_KEEPIDLE", SF_INT,
	  1, 7200, "the keepalive idle time, in seconds" },
	{ "net.ipv4.tcp_keepalive_intvl", IPPROTO_TCP, 5, "TCP_KEEPINTVL",
	  SF_INT, 1, 75, "the keepalive interval, in seconds" },
	{ "net.ipv4.tcp_keepalive_probes", IPPROTO_TCP, 6, "TCP_KEEPCNT",
	  SF_INT, 1, 9, "the keepalive probe count" },
	{ "net.ipv4.tcp_syn_retries", IPPROTO_TCP, 7, "TCP_SYNCNT", SF_INT, 1,
	  6, "the SYN retries" },
	{ "net.ipv4.tcp_fin_timeout", IPPROTO_TCP, 8, "TCP_LINGER2", SF_INT, 1,
	  60, "the FIN-WAIT-2 time, in seconds" },
	{ "net.ipv4.tcp_notsent_lowat", IPPROTO_TCP, 25, "TCP_NOTSENT_LOWAT",
	  SF_UINT, 1, UINT_MAX, "the unsent-data low mark, in bytes" },
	{ "net.ipv4.ip_default_ttl", IPPROTO_IP, 2, "IP_TTL", SF_INT, 1, 64,
	  "the TTL of IPv4 packets" },
	{ "net.ipv6.conf.*.hop_limit", IPPROTO_IPV6, 16, "IPV6_UNICAST_HOPS",
	  SF_INT, 1, 64, "the hop limit of IPv6 packets" },
	{ "net.ipv4.tcp_congestion_control", IPPROTO_TCP, TCP_CONGESTION,
	  "TCP_CONGESTION", SF_NAME, 1, NO_FRESH,
	  "the congestion control of TCP sockets" },
};

/* The kernel's TCP_CA_NAME_MAX: proc_dostring keeps one byte less. */
#define CA_NAME_MAX 16

bool sysctl_normalize(const char *key, char *out, size_t len)
{
	size_t n = 0;

	for (const char *p = key; *p;) {
		size_t c = strcspn(p, "./");

		if (c) {
			if (n + (n > 0) + c >= len)
				return false;
			if (n)
				out[n++] = '.';
			memcpy(out + n, p, c);
			n += c;
		}
		p += c;
		if (*p)
			p++;
	}
	if (!len)
		return false;
	out[n] = '\0';
	return true;
}

static bool key_matches(const char *pattern, const char *key)
{
	while (*pattern && *key) {
		if (*pattern == '*') {
			key += strcspn(key, ".");
			pattern++;
			continue;
		}
		if (*pattern++ != *key++)
			return false;
	}
	return !*pattern && !*key;
}

static const struct sysctl_map *lookup(const char *norm)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (key_matches(table[i].key, norm))
			return &table[i];
	return NULL;
}

static const char *skip_space(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

int sysctl_parse_ints(const char *text, long long *vals, int max)
{
	const char *p = skip_space(text);
	int n = 0;

	while (*p) {
		unsigned long long u;
		bool neg = *p == '-';
		char *end;

		if (neg)
			p++;
		/* strtoull takes a sign and spaces of its own; the kernel
		 * takes neither after the '-'. */
		if (!isdigit((unsigned char)*p) || n == max)
			return -EINVAL;
		errno = 0;
		u = strtoull(p, &end, 0);
		if (errno || u > (unsigned long long)UINT_MAX + 1 ||
		    (*end && !isspace((unsigned char)*end)))
			return -EINVAL;
		vals[n++] = neg ? -(long long)u : (long long)u;
		p = skip_space(end);
	}
	return n;
}

static bool in_form(enum sysctl_form form, long long v)
{
	if (form == SF_UINT)
		return v >= 0 && v <= UINT_MAX;
	return v >= INT_MIN && v <= INT_MAX;
}

int sysctl_node_ints(const char *key, long long *vals, int max)
{
	_cleanup_free_ char *text = NULL;
	char path[sizeof("/proc/sys/") + SH_SYSCTL_KEY_MAX];
	size_t len;
	int r;

	snprintf(path, sizeof(path), "/proc/sys/%s", key);
	for (char *p = path + sizeof("/proc/sys/") - 1; *p; p++)
		if (*p == '.')
			*p = '/';
	r = fileio_read_at(AT_FDCWD, path, 1, 4096, &text, &len);
	if (r)
		return r;
	return sysctl_parse_ints(text, vals, max);
}

/* The node's value for the norm key (a pattern's "*" as given). */
static int node_name(const char *norm, char *out, size_t len)
{
	_cleanup_free_ char *text = NULL;
	char path[sizeof("/proc/sys/") + SH_SYSCTL_KEY_MAX];
	size_t n;
	int r;

	snprintf(path, sizeof(path), "/proc/sys/%s", norm);
	for (char *p = path + sizeof("/proc/sys/") - 1; *p; p++)
		if (*p == '.')
			*p = '/';
	r = fileio_read_at(AT_FDCWD, path, 1, 4096, &text, &n);
	if (r)
		return r;
	snprintf(out, len, "%.*s", (int)strcspn(text, "\n"), text);
	return 0;
}

/* The rule that governs the option, as the programs apply it: its own,
 * or, in allow-list mode, a deny. NULL when none holds it. */
static const struct sh_opt_rule *rule_of(const struct sh_policy *p, int level,
					 int optname)
{
	static const struct sh_opt_rule deny = { .action = SH_ACTION_DENY };

	for (size_t i = 0; i < p->nr_set; i++) {
		const struct sh_rule_entry *e = &p->set_rules[i];

		if (e->key.level != level || e->key.optname != optname)
			continue;
		return e->rule.action == SH_ACTION_ALLOW ? NULL : &e->rule;
	}
	return p->default_deny ? &deny : NULL;
}

/* What the check of one sysctl knows. */
struct one {
	const struct sh_policy *policy;
	const struct sysctl_map *m;
	const struct sh_opt_rule *rule;
	const char *key, *value; /* as the bundle wrote them */
	char norm[SH_SYSCTL_KEY_MAX];
	const char *src; /* "linux.sysctl", or the namespace it was read in */
};

static void rule_text(const struct one *o, char *buf, size_t len)
{
	const struct sh_opt_rule *r = o->rule;
	__s64 v;

	switch (r->action) {
	case SH_ACTION_CLAMP:
		snprintf(buf, len, "clamp %lld..%lld", (long long)r->min,
			 (long long)r->max);
		break;
	case SH_ACTION_FORCE_INT:
		memcpy(&v, r->value, sizeof(v));
		snprintf(buf, len, "force %lld", (long long)v);
		break;
	case SH_ACTION_FORCE_BYTES:
		snprintf(buf, len, "force '%.*s'", (int)r->value_len,
			 (const char *)r->value);
		break;
	default:
		snprintf(buf, len, "deny");
	}
}

static int refuse(const struct one *o, const char *field, long long v,
		  const char *node, struct sh_error *err)
{
	char rule[64], scaled[64] = "";
	char cause[SH_CAUSE_MAX];

	rule_text(o, rule, sizeof(rule));
	if (o->m->scale != 1 && o->rule->action != SH_ACTION_DENY)
		snprintf(scaled, sizeof(scaled),
			 ", which the kernel keeps as %d times the value",
			 o->m->scale);
	snprintf(cause, sizeof(cause), "policy %s", o->policy->name);
	error_reason(err, SH_REASON_SYSCTL_EXCEEDS_POLICY);
	error_cause(err, NULL, cause);
	if (v == LLONG_MIN)
		return error_set(
			err, -EPERM,
			"%s %s=%s sets the default of %s (%s), which policy %s governs (%s on %s): a socket that never calls setsockopt would get a congestion control the rule does not allow; the node's is %s; refusing",
			o->src, LOG_Q(o->key), LOG_Q(o->value), o->m->option,
			o->m->what, o->policy->name, rule, o->m->option, node);
	return error_set(
		err, -EPERM,
		"%s %s=%s sets %s%s (%s) to %lld, beyond what policy %s lets a setsockopt of %s reach (%s%s) and the node's %s: a socket that never calls setsockopt would get it; refusing",
		o->src, LOG_Q(o->key), LOG_Q(o->value), field, o->m->what,
		o->m->option, v, o->policy->name, o->m->option, rule, scaled,
		node);
}

/* The values a setsockopt can leave, in the kernel's terms: [lo, hi],
 * and whether it is a range (a clamp) or a single value. */
static void rule_range(const struct one *o, long long *lo, long long *hi,
		       bool *range)
{
	const struct sh_opt_rule *r = o->rule;
	__s64 v;

	*range = r->action == SH_ACTION_CLAMP;
	if (r->action == SH_ACTION_CLAMP) {
		*lo = r->min * o->m->scale;
		*hi = r->max * o->m->scale;
	} else if (r->action == SH_ACTION_FORCE_INT) {
		memcpy(&v, r->value, sizeof(v));
		*lo = *hi = v * o->m->scale;
	} else {
		/* deny: nothing a setsockopt leaves */
		*lo = LLONG_MAX;
		*hi = LLONG_MIN;
	}
}

/*
 * One value v of the sysctl: refused when beyond the rule and beyond what
 * a new network namespace has without the sysctl. upper_only: a ceiling
 * or a floor of the kernel's own (tcp_rmem's min and max), where only a
 * raise counts.
 */
static int check_value(const struct one *o, const char *field, long long v,
		       const long long *node, bool upper_only,
		       struct sh_error *err)
{
	long long lo, hi, fresh = o->m->fresh;
	char node_text[64];
	bool range;

	rule_range(o, &lo, &hi, &range);
	if (node)
		snprintf(node_text, sizeof(node_text), "%lld%s", *node,
			 fresh != NO_FRESH ? " (a new namespace's" : "");
	else
		snprintf(node_text, sizeof(node_text), "(unreadable)%s",
			 fresh != NO_FRESH ? " (a new namespace's" : "");
	if (fresh != NO_FRESH)
		snprintf(node_text + strlen(node_text),
			 sizeof(node_text) - strlen(node_text), " %lld)",
			 fresh);
	if ((node && v == *node) || (fresh != NO_FRESH && v == fresh))
		return 0;
	if (upper_only) {
		long long ceiling = hi;

		if (node && *node > ceiling)
			ceiling = *node;
		if (fresh != NO_FRESH && fresh > ceiling)
			ceiling = fresh;
		if (v <= ceiling)
			return 0;
	} else if (range && v >= lo && v <= hi) {
		return 0;
	} else if (!range && v == lo) {
		return 0;
	}
	return refuse(o, field, v, node_text, err);
}

static int invalid(const struct one *o, const char *what, struct sh_error *err)
{
	char rule[64], cause[SH_CAUSE_MAX];

	rule_text(o, rule, sizeof(rule));
	snprintf(cause, sizeof(cause), "policy %s", o->policy->name);
	error_reason(err, SH_REASON_STATE_INVALID);
	error_cause(err, NULL, cause);
	return error_set(
		err, -EINVAL,
		"%s %s=%s: %s; policy %s has a rule on %s (%s), whose default it sets, so the hook must read it as the kernel would: refusing",
		o->src, LOG_Q(o->key), LOG_Q(o->value), what, o->policy->name,
		o->m->option, rule);
}

static int check_name(const struct one *o, struct sh_error *err)
{
	char name[CA_NAME_MAX], node[CA_NAME_MAX + 16];
	const struct sh_opt_rule *r = o->rule;
	size_t n = strcspn(o->value, "\n");

	if (n >= CA_NAME_MAX)
		n = CA_NAME_MAX - 1;
	memcpy(name, o->value, n);
	name[n] = '\0';
	if (node_name(o->norm, node, sizeof(node)))
		snprintf(node, sizeof(node), "(unreadable)");
	if (!strcmp(name, node))
		return 0;
	if (r->action == SH_ACTION_FORCE_BYTES && r->value_len == n &&
	    !memcmp(r->value, name, n))
		return 0;
	return refuse(o, "", LLONG_MIN, node, err);
}

static int check_ints(const struct one *o, struct sh_error *err)
{
	static const char *const fields[] = { "the min of ", "the default of ",
					      "the autotuning max of " };
	int max = o->m->form == SF_TRIPLE ? 3 : 1;
	long long vals[3], node[3];
	int n = sysctl_parse_ints(o->value, vals, max);
	int nn = sysctl_node_ints(o->norm, node, max);
	int r;

	if (n < 0)
		return invalid(
			o,
			max == 3 ?
				"not one to three integers (min default max) as the kernel reads them" :
				"not an integer as the kernel reads it",
			err);
	for (int i = 0; i < n; i++) {
		if (!in_form(o->m->form, vals[i]))
			return invalid(o, "a number out of the kernel's range",
				       err);
		r = check_value(o, max == 3 ? fields[i] : "", vals[i],
				nn > i ? &node[i] : NULL, max == 3 && i != 1,
				err);
		if (r)
			return r;
	}
	return 0;
}

static int check_text(const struct one *o, struct sh_error *err)
{
	if (strlen(o->value) > SH_SYSCTL_VALUE_MAX)
		return invalid(o, "the value is longer than 256 bytes", err);
	if (o->m->form == SF_NAME)
		return check_name(o, err);
	return check_ints(o, err);
}

static int check_one(struct one *o, struct json_object *val,
		     struct sh_error *err)
{
	if (!json_object_is_type(val, json_type_string)) {
		o->value = "";
		return invalid(o, "the value is not a string", err);
	}
	o->value = json_object_get_string(val);
	/* The kernel reads past a NUL where C stops (or refuses it). */
	if (strlen(o->value) != (size_t)json_object_get_string_len(val))
		return invalid(o, "the value holds a NUL byte", err);
	return check_text(o, err);
}

static bool has_rules(const struct sh_policy *p)
{
	return p && !p->audit && (p->nr_set || p->default_deny);
}

int sysctl_check(const struct sh_policy *policy, const struct oci_state *st,
		 struct sh_error *err)
{
	struct json_object *linux_obj, *sysctl;
	struct one o = { .policy = policy, .src = "linux.sysctl" };

	if (!has_rules(policy) || !st->config_root ||
	    !json_object_object_get_ex(st->config_root, "linux", &linux_obj) ||
	    !json_object_object_get_ex(linux_obj, "sysctl", &sysctl) ||
	    json_object_is_type(sysctl, json_type_null))
		return 0;
	if (!json_object_is_type(sysctl, json_type_object)) {
		error_reason(err, SH_REASON_STATE_INVALID);
		return error_set(
			err, -EINVAL,
			"linux.sysctl in the bundle's config.json is not an object; policy %s has setsockopt rules, whose defaults sysctls set: refusing",
			policy->name);
	}
	json_object_object_foreach(sysctl, key, val) {
		int r;

		o.key = key;
		if (!sysctl_normalize(key, o.norm, sizeof(o.norm)))
			continue;
		o.m = lookup(o.norm);
		if (!o.m)
			continue;
		o.rule = rule_of(policy, o.m->level, o.m->optname);
		if (!o.rule)
			continue;
		r = check_one(&o, val, err);
		if (r)
			return r;
	}
	return 0;
}

/*
 * A network namespace someone else made: the bundle names it by a path
 * (a pod sandbox's, /proc/<pid>/ns/net under containerd, a pinned file
 * under CRI-O), and its sysctls were applied when it was made.
 */
static bool joins_netns(const struct oci_state *st)
{
	struct json_object *linux_obj, *nss;

	if (!st->config_root ||
	    !json_object_object_get_ex(st->config_root, "linux", &linux_obj) ||
	    !json_object_object_get_ex(linux_obj, "namespaces", &nss) ||
	    !json_object_is_type(nss, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(nss); i++) {
		struct json_object *ns = json_object_array_get_idx(nss, i), *v;

		if (json_object_object_get_ex(ns, "type", &v) &&
		    json_object_is_type(v, json_type_string) &&
		    !strcmp(json_object_get_string(v), "network"))
			return json_object_object_get_ex(ns, "path", &v) &&
			       json_object_is_type(v, json_type_string) &&
			       json_object_get_string_len(v) > 0;
	}
	return false;
}

#define LIVE_MAX (ARRAY_SIZE(table) + 1)

struct live_key {
	const struct sysctl_map *m;
	char key[SH_SYSCTL_KEY_MAX];
};

/* One value, as the reading thread found it. */
struct live_rec {
	unsigned int idx;
	char value[SH_SYSCTL_VALUE_MAX + 1];
};

/* The table sysctls whose options the policy governs; for the hop limit,
 * the "all" and "default" devices. */
static size_t live_keys(const struct sh_policy *p, struct live_key *keys)
{
	static const char *const hop[] = { "net.ipv6.conf.all.hop_limit",
					   "net.ipv6.conf.default.hop_limit" };
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		const struct sysctl_map *m = &table[i];

		if (!rule_of(p, m->level, m->optname))
			continue;
		for (size_t k = 0; k < (strchr(m->key, '*') ? 2u : 1u); k++) {
			keys[n].m = m;
			snprintf(keys[n].key, sizeof(keys[n].key), "%s",
				 strchr(m->key, '*') ? hop[k] : m->key);
			n++;
		}
	}
	return n;
}

/*
 * A network namespace's sysctls are those of the namespace of the task
 * that opens /proc/sys/net/...: the reading is done by a thread of its
 * own, which joins the namespace (setns() of a network namespace changes
 * the calling thread alone) and ends there, so the hook never runs in
 * the pod's namespace and pays a thread's start, not a fork's.
 */
struct live_job {
	int nsfd;
	const struct live_key *keys;
	size_t n;
	struct live_rec *recs;
	size_t nr;
	int err; /* 0, or the errno of setns() */
};

/* Whether key's value is read into rec->value. */
static bool live_read_one(const struct live_key *key, struct live_rec *rec)
{
	char path[sizeof("/proc/sys/") + SH_SYSCTL_KEY_MAX];
	_cleanup_close_ int fd = -1;
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/sys/%s", key->key);
	for (char *p = path + sizeof("/proc/sys/") - 1; *p; p++)
		if (*p == '.')
			*p = '/';
	/* A key this kernel lacks is no value: nothing to compare. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, rec->value, SH_SYSCTL_VALUE_MAX);
	if (len < 0)
		return false;
	/* The kernel ends what it prints with a newline. */
	if (len > 0 && rec->value[len - 1] == '\n')
		len--;
	rec->value[len] = '\0';
	return true;
}

static void *live_thread(void *data)
{
	struct live_job *job = data;

	if (setns(job->nsfd, CLONE_NEWNET) < 0) {
		job->err = errno;
		return NULL;
	}
	for (size_t i = 0; i < job->n; i++) {
		struct live_rec *rec = &job->recs[job->nr];

		if (!live_read_one(&job->keys[i], rec))
			continue;
		rec->idx = (unsigned int)i;
		job->nr++;
	}
	return NULL;
}

/* The n values of keys as the namespace nsfd holds them, into recs. */
static int live_read(int nsfd, const struct live_key *keys, size_t n,
		     struct live_rec *recs, size_t *nr, struct sh_error *err)
{
	struct live_job job = {
		.nsfd = nsfd, .keys = keys, .n = n, .recs = recs
	};
	pthread_t t;
	int r;

	*nr = 0;
	r = pthread_create(&t, NULL, live_thread, &job);
	if (r)
		return error_errno(err, -r, "cannot start a thread");
	r = pthread_join(t, NULL);
	if (r)
		return error_errno(err, -r, "cannot join a thread");
	if (job.err)
		return error_errno(
			err, -job.err,
			"cannot read the sysctls of the network namespace the container joins");
	*nr = job.nr;
	return 0;
}

static bool same_ns(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int sysctl_check_netns(const struct sh_policy *policy,
		       const struct oci_state *st, struct sh_error *err)
{
	struct live_key keys[LIVE_MAX];
	struct live_rec recs[LIVE_MAX];
	struct one o = {
		.policy = policy,
		.src = "in the network namespace the container joins, sysctl",
	};
	_cleanup_close_ int nsfd = -1, self = -1;
	char path[64];
	size_t n, nr;
	int r;

	if (!has_rules(policy) || st->pid <= 0 || !joins_netns(st))
		return 0;
	n = live_keys(policy, keys);
	if (!n)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)st->pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	/* An init already gone is prestart_police_container()'s to report. */
	if (nsfd < 0 || self < 0)
		return errno == ENOENT || errno == ESRCH ?
			       0 :
			       error_errno(err, -errno, "cannot open %s", path);
	/* The node's own namespace: its values are the operator's. */
	if (same_ns(nsfd, self))
		return 0;
	r = live_read(nsfd, keys, n, recs, &nr, err);
	if (r)
		return r;
	for (size_t i = 0; i < nr; i++) {
		const struct live_key *k = &keys[recs[i].idx];

		o.m = k->m;
		o.rule = rule_of(policy, k->m->level, k->m->optname);
		o.key = k->key;
		o.value = recs[i].value;
		snprintf(o.norm, sizeof(o.norm), "%s", k->key);
		r = check_text(&o, err);
		if (r)
			return r;
	}
	return 0;
}
