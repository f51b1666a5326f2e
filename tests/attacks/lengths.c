// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every length, for every option the hook's table knows
 * (hook/config/names.c):
 * the setsockopt program must enforce a clamp or a forced value whatever
 * optlen the caller passes, 1, 2, 3, 4, 8, a page + 1 or 8192 bytes, and a
 * forced getsockopt value must come back in every buffer size exactly as a
 * real value would.
 *
 *   lengths calibrate        in an unpoliced container: for each option,
 *                            a value lo and a larger hi the kernel keeps
 *                            apart, and what getsockopt returns for a real
 *                            socket set to lo; prints the plan
 *   lengths clamp PLAN       policy: each option clamped to max lo. A
 *                            socket set to lo, then hi at each length,
 *                            must still hold lo.
 *   lengths force PLAN       policy: each option forced to lo. hi at any
 *                            length must leave lo.
 *   lengths getforce PLAN    policy: getsockopt of each option forced to
 *                            lo's read-back. Every buffer size must get
 *                            the bytes and optlen of a real one.
 *
 * SOL_IP options run on AF_INET6 sockets too (the IPv4 handler takes them
 * there). The suite builds the policies from the plan
 * (tests/integration/75-lengths.sh).
 */
#include <limits.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>

#include "attack.h"
#include "config/names.h"

#define MAX_LEN 8192
#define NR_LENS 7
#define NR_CAPS 8

static int lens[NR_LENS] = { 1, 2, 3, 4, 8, 0, MAX_LEN }; /* [5]: page+1 */
static int caps[NR_CAPS] = { 0, 1, 2, 3, 4, 8, 16, 0 }; /* [7]: page+1 */

static const long long candidates[] = {
	0,    1,    2,	  3,	4,     5,     7,      8,       10,  16,
	32,   60,   64,	  100,	127,   128,   200,    252,     255, 256,
	1000, 1280, 1500, 4096, 65535, 65536, 100000, 1000000,
};

struct target {
	const struct sh_option_name *opt;
	int family, type;
};

static int open_for(const struct target *t)
{
	return socket(t->family, t->type | SOCK_CLOEXEC, 0);
}

/* The kernel's value: a u64 for the pacing rate, else an int. The *FORCE
 * options have no getter: their buffer reads back through SO_*BUF. */
static long long readback(int fd, const struct sh_option_name *o)
{
	uint64_t wide = 0;
	int v = 0, optname = o->optname;
	socklen_t len = o->domain == SH_DOM_PACING ? 8 : 4;

	if (o->level == SOL_SOCKET && optname == SO_SNDBUFFORCE)
		optname = SO_SNDBUF;
	else if (o->level == SOL_SOCKET && optname == SO_RCVBUFFORCE)
		optname = SO_RCVBUF;
	if (getsockopt(fd, o->level, optname,
		       o->domain == SH_DOM_PACING ? (void *)&wide : (void *)&v,
		       &len) < 0)
		return LLONG_MIN;
	return o->domain == SH_DOM_PACING ? (long long)wide : v;
}

/* Sets v with a 4-byte int on a fresh socket; its read-back, or LLONG_MIN. */
static long long set_fresh(const struct target *t, long long v)
{
	int fd = open_for(t), iv = (int)v;
	long long r = LLONG_MIN;

	if (fd >= 0 && !setsockopt(fd, t->opt->level, t->opt->optname, &iv, 4))
		r = readback(fd, t->opt);
	close(fd);
	return r;
}

/* hi at length len, as a workload would pass it: the value first, then
 * 0xff bytes a longer read would pick up; a single byte below 4 for IPv4. */
static void attack_buffer(unsigned char *buf, int len, long long hi,
			  long long hib, int level)
{
	int v = (int)hi;

	memset(buf, 0xff, MAX_LEN);
	if (len < 4 && level == IPPROTO_IP)
		buf[0] = (unsigned char)hib;
	else
		memcpy(buf, &v, len < 4 ? len : 4);
}

static int set_len(int fd, const struct target *t, const void *buf, int len)
{
	return setsockopt(fd, t->opt->level, t->opt->optname, buf,
			  (socklen_t)len) < 0 ?
		       errno :
		       0;
}

struct values {
	long long lo, hi, hib, rlo, init;
};

static bool calibrate_int(const struct target *t, struct values *v)
{
	int fd = open_for(t);

	v->init = fd >= 0 ? readback(fd, t->opt) : LLONG_MIN;
	close(fd);
	v->lo = v->hi = v->hib = v->rlo = LLONG_MIN;
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]);
	     i++) {
		long long c = candidates[i], r = set_fresh(t, c);

		if (r == LLONG_MIN || (t->opt->domain == SH_DOM_BOOL && c > 1))
			continue;
		if (v->lo == LLONG_MIN) {
			v->lo = c;
			v->rlo = r;
		} else if (r != v->rlo) {
			v->hi = c;
			if (c <= 255)
				v->hib = c;
		}
	}
	return v->hi != LLONG_MIN && v->init != LLONG_MIN;
}

static void print_get_refs(const struct target *t, const void *val, int len)
{
	unsigned char buf[MAX_LEN];
	int fd = open_for(t);

	if (fd < 0 || set_len(fd, t, val, len))
		return;
	for (int c = 0; c < NR_CAPS; c++) {
		socklen_t got = (socklen_t)caps[c];
		int rc = getsockopt(fd, t->opt->level, t->opt->optname, buf,
				    &got) < 0 ?
				 errno :
				 0;

		printf("G %d %d %d %d %d %d %d ", t->family, t->type,
		       t->opt->level, t->opt->optname, caps[c], rc,
		       rc ? 0 : (int)got);
		for (int i = 0; !rc && i < (int)got && i < 16; i++)
			printf("%02x", buf[i]);
		printf("-\n");
	}
	close(fd);
}

static void calibrate_target(const struct target *t)
{
	struct values v;
	long long mn, mx;

	if (t->opt->kind == OPT_STRING) {
		if (t->opt->level != IPPROTO_TCP || t->opt->optname != 13)
			return; /* TCP_ULP needs a module, SO_BINDTODEVICE a netdev name */
		printf("S %d %d %d %d %s reno cubic\n", t->family, t->type,
		       t->opt->level, t->opt->optname, t->opt->name);
		print_get_refs(t, "reno", 4);
		return;
	}
	if (!calibrate_int(t, &v)) {
		printf("# %s on %d/%d: no two values the kernel keeps apart here\n",
		       t->opt->name, t->family, t->type);
		return;
	}
	printf("I %d %d %d %d %s %lld %lld %lld %lld %lld\n", t->family,
	       t->type, t->opt->level, t->opt->optname, t->opt->name, v.lo,
	       v.hi, v.hib == LLONG_MIN ? v.lo : v.hib, v.rlo, v.init);
	names_option_domain_range(t->opt->domain, &mn, &mx);
	if (v.rlo >= mn && v.rlo <= mx)
		print_get_refs(t, &(int){ (int)v.lo }, 4);
}

static int calibrate(void)
{
	for (size_t i = 0; i < names_option_count(); i++) {
		const struct sh_option_name *o = names_option_at(i);
		struct target t = { o, AF_INET, SOCK_STREAM };

		if ((o->kind != OPT_INT && o->kind != OPT_STRING) ||
		    o->read_only)
			continue;
		if (o->level == IPPROTO_IP || o->level == IPPROTO_UDP)
			t.type = SOCK_DGRAM;
		if (o->level == IPPROTO_IPV6)
			t = (struct target){ o, AF_INET6, SOCK_DGRAM };
		calibrate_target(&t);
		if (o->level == IPPROTO_IP)
			calibrate_target(
				&(struct target){ o, AF_INET6, SOCK_DGRAM });
	}
	return 0;
}

struct plan_line {
	char kind; /* 'I' int, 'S' string, 'G' getsockopt reference */
	struct target t;
	char name[40], slo[16], shi[16], hex[40];
	long long lo, hi, hib, rlo, init;
	int cap, rc, optlen;
};

static bool parse_line(const char *line, struct plan_line *p)
{
	int level, optname;

	memset(p, 0, sizeof(*p));
	p->kind = line[0];
	if (p->kind == 'I' &&
	    sscanf(line, "I %d %d %d %d %39s %lld %lld %lld %lld %lld",
		   &p->t.family, &p->t.type, &level, &optname, p->name, &p->lo,
		   &p->hi, &p->hib, &p->rlo, &p->init) == 10)
		goto found;
	if (p->kind == 'S' &&
	    sscanf(line, "S %d %d %d %d %39s %15s %15s", &p->t.family,
		   &p->t.type, &level, &optname, p->name, p->slo, p->shi) == 7)
		goto found;
	if (p->kind == 'G' && sscanf(line, "G %d %d %d %d %d %d %d %39s",
				     &p->t.family, &p->t.type, &level, &optname,
				     &p->cap, &p->rc, &p->optlen, p->hex) == 8)
		goto found;
	return false;
found:
	p->t.opt = names_option_by_value(level, optname);
	return p->t.opt != NULL;
}

static const char *fam(const struct target *t)
{
	return t->family == AF_INET ? "AF_INET" : "AF_INET6";
}

/* Clamp: a socket holding lo must still hold lo after hi at any length. */
static void clamp_line(const struct plan_line *p, unsigned char *buf)
{
	char bad[512] = "";
	size_t used = 0;

	for (int i = 0; i < NR_LENS; i++) {
		int fd = open_for(&p->t), lo = (int)p->lo, rc;
		long long got;

		setsockopt(fd, p->t.opt->level, p->t.opt->optname, &lo, 4);
		attack_buffer(buf, lens[i], p->hi, p->hib, p->t.opt->level);
		rc = set_len(fd, &p->t, buf, lens[i]);
		got = readback(fd, p->t.opt);
		if (got != p->rlo && used < sizeof(bad) - 64)
			used += snprintf(
				bad + used, sizeof(bad) - used,
				" [%d bytes: rc %s, kernel holds %lld]",
				lens[i], rc ? errname(rc) : "ok", got);
		close(fd);
	}
	tap_ok(!used,
	       "clamp %s (%s) to max %lld: %d at every length leaves %lld%s",
	       p->name, fam(&p->t), p->lo, (int)p->hi, p->rlo, bad);
}

/* Force: hi at any length must leave lo, and the call succeeds. */
static void force_line(const struct plan_line *p, unsigned char *buf)
{
	char bad[512] = "", got_s[16];
	size_t used = 0;

	for (int i = 0; i < NR_LENS; i++) {
		int fd = open_for(&p->t), rc;
		long long got = 0;
		socklen_t sl = sizeof(got_s);
		bool held;

		if (p->kind == 'S') {
			memset(buf, 0, MAX_LEN);
			strcpy((char *)buf, p->shi);
		} else {
			attack_buffer(buf, lens[i], p->hi, p->hib,
				      p->t.opt->level);
		}
		rc = set_len(fd, &p->t, buf, lens[i]);
		memset(got_s, 0, sizeof(got_s));
		if (p->kind == 'S')
			held = !getsockopt(fd, p->t.opt->level,
					   p->t.opt->optname, got_s, &sl) &&
			       !strcmp(got_s, p->slo);
		else
			held = (got = readback(fd, p->t.opt)) == p->rlo;
		if ((!held || rc) && used < sizeof(bad) - 64)
			used += snprintf(
				bad + used, sizeof(bad) - used,
				" [%d bytes: rc %s, kernel holds %lld%s]",
				lens[i], rc ? errname(rc) : "ok", got, got_s);
		close(fd);
	}
	tap_ok(!used,
	       "force %s (%s) to %s: any value at every length leaves it%s",
	       p->name, fam(&p->t), p->kind == 'S' ? p->slo : "lo", bad);
}

/* getsockopt into cap bytes must give the reference's rc, optlen, bytes. */
static void getforce_line(const struct plan_line *p, unsigned char *buf)
{
	int fd = open_for(&p->t), rc;
	socklen_t len = (socklen_t)p->cap;
	char hex[40] = "";
	bool untouched = true;

	memset(buf, 0xee, MAX_LEN);
	rc = getsockopt(fd, p->t.opt->level, p->t.opt->optname, buf, &len) < 0 ?
		     errno :
		     0;
	for (int i = 0; !rc && i < (int)len && i < 16; i++)
		sprintf(hex + 2 * i, "%02x", buf[i]);
	strcat(hex, "-");
	for (int i = rc ? 0 : (int)len; i < p->cap && i < 64; i++)
		untouched &= buf[i] == 0xee;
	tap_ok(rc == p->rc && (rc || ((int)len == p->optlen &&
				      !strcmp(hex, p->hex) && untouched)),
	       "getsockopt %s (%s) into %d bytes reads as a real one: rc %s optlen %d bytes %s (real: rc %s optlen %d bytes %s)",
	       p->t.opt->name, fam(&p->t), p->cap, rc ? errname(rc) : "ok",
	       (int)len, hex, p->rc ? errname(p->rc) : "ok", p->optlen, p->hex);
	close(fd);
}

static int run_plan(const char *mode, const char *path)
{
	FILE *f = fopen(path, "re");
	unsigned char *buf = malloc(MAX_LEN);
	char line[256];
	struct plan_line p;

	if (!f || !buf) {
		tap_ok(false, "read the plan %s", path);
		return tap_done();
	}
	while (fgets(line, sizeof(line), f)) {
		if (!parse_line(line, &p))
			continue;
		if (!strcmp(mode, "clamp") && p.kind == 'I')
			clamp_line(&p, buf);
		else if (!strcmp(mode, "force") && p.kind != 'G')
			force_line(&p, buf);
		else if (!strcmp(mode, "getforce") && p.kind == 'G')
			getforce_line(&p, buf);
	}
	fclose(f);
	free(buf);
	return tap_done();
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);

	lens[5] = (int)page + 1;
	caps[NR_CAPS - 1] = (int)page + 1;
	if (argc == 2 && !strcmp(argv[1], "calibrate"))
		return calibrate();
	if (argc == 3)
		return run_plan(argv[1], argv[2]);
	fprintf(stderr,
		"usage: lengths calibrate | {clamp|force|getforce} PLAN\n");
	return 2;
}
