// SPDX-License-Identifier: GPL-2.0-only
/*
 * linux.sysctl against the setsockopt rules (hook/policy/sysctl.c): keys
 * as runc writes them, values as the kernel's proc_dointvec reads them,
 * and each against deny, clamp, force and allow-list rules: refused,
 * state_invalid, or passes.
 *
 * Modules: `sysctl.c`
 */
#include <errno.h>
#include <string.h>

#include "config/config.h"
#include "helpers.h"
#include "input/oci.h"
#include "policy/sysctl.h"
#include "tap.h"

#define POLICY                                                             \
	"{\"policies\":{\"p\":{\"setsockopt\":["                           \
	"{\"level\":\"SOL_SOCKET\",\"option\":\"SO_RCVBUF\",\"action\":"   \
	"\"clamp\",\"max\":65536},"                                        \
	"{\"level\":\"SOL_TCP\",\"option\":\"TCP_KEEPIDLE\",\"action\":"   \
	"\"clamp\",\"min\":60,\"max\":3600},"                              \
	"{\"level\":\"SOL_TCP\",\"option\":\"TCP_CONGESTION\",\"action\":" \
	"\"force\",\"value\":\"reno\"}]},"                                 \
	"\"locked\":{\"default\":\"deny\"},"                               \
	"\"audit\":{\"mode\":\"audit\",\"setsockopt\":[{\"level\":"        \
	"\"SOL_SOCKET\",\"option\":\"SO_RCVBUF\",\"action\":\"clamp\","    \
	"\"max\":65536}]},"                                                \
	"\"none\":{\"socket\":{\"mark\":1}}}}"

static struct sh_config cfg;

static const struct sh_policy *policy(const char *name)
{
	for (size_t i = 0; i < cfg.nr_policies; i++)
		if (!strcmp(cfg.policies[i].name, name))
			return &cfg.policies[i];
	return NULL;
}

/* sysctl_check of a bundle whose linux.sysctl is the JSON sysctl: its
 * return code, and its message and reason in why and reason. */
static int check(const char *pol, const char *sysctl, char *why, size_t len,
		 const char **reason)
{
	struct sh_error err = { 0 };
	struct oci_state st;
	char text[4096];
	int r;

	memset(&st, 0, sizeof(st));
	snprintf(text, sizeof(text),
		 "{\"ociVersion\":\"1.0.2\",\"linux\":{\"sysctl\":%s}}",
		 sysctl);
	why[0] = '\0';
	if (oci_parse_bundle_config("t", text, strlen(text), &st, &err))
		return -999;
	r = sysctl_check(policy(pol), &st, &err);
	snprintf(why, len, "%s", err.msg);
	*reason = error_reason_text(&err);
	oci_state_free(&st);
	return r;
}

static void refused(const char *pol, const char *sysctl, const char *reason,
		    const char *want)
{
	const char *got;
	char why[SH_ERROR_MSG_MAX];
	int r = check(pol, sysctl, why, sizeof(why), &got);

	if (r == -999)
		got = "(bundle refused)";

	ok(r < 0 && !strcmp(got, reason) && strstr(why, want) &&
		   !strchr(why, '\n'),
	   "%s %s: %s (%s: %s)", pol, sysctl, reason, got, why);
}

static void passes(const char *pol, const char *sysctl)
{
	const char *got;
	char why[SH_ERROR_MSG_MAX] = "";

	ok(check(pol, sysctl, why, sizeof(why), &got) == 0, "%s %s: passes%s%s",
	   pol, sysctl, why[0] ? ": " : "", why);
}

static void test_normalize(void)
{
	char out[SH_SYSCTL_KEY_MAX];

	ok(sysctl_normalize("net/ipv4//tcp_rmem", out, sizeof(out)) &&
		   !strcmp(out, "net.ipv4.tcp_rmem"),
	   "slashes and an empty component: %s", out);
	ok(sysctl_normalize("..net..ipv4./tcp_rmem.", out, sizeof(out)) &&
		   !strcmp(out, "net.ipv4.tcp_rmem"),
	   "dots at the ends, doubled: %s", out);
	ok(sysctl_normalize("", out, sizeof(out)) && !strcmp(out, ""), "empty");
	ok(!sysctl_normalize(
		   "net.ipv4.conf.an-interface-name-that-is-far-far-too-long.hop_limit",
		   out, sizeof(out)),
	   "longer than any key: no match");
}

static void ints(const char *text, int max, int want_n, long long a)
{
	long long v[3] = { 0 };
	int n = sysctl_parse_ints(text, v, max);

	ok(n == want_n && (n <= 0 || v[0] == a), "'%s': %d value(s) (%d, %lld)",
	   text, want_n, n, v[0]);
}

static void test_parse(void)
{
	long long v[3];

	ok(sysctl_parse_ints("4096 87380\t6291456\n", v, 3) == 3 &&
		   v[0] == 4096 && v[1] == 87380 && v[2] == 6291456,
	   "three values, any whitespace");
	ints(" \t0x10\n", 1, 1, 16);
	ints("010", 1, 1, 8);
	ints("-5", 1, 1, -5);
	ints("", 3, 0, 0);
	ints("+5", 1, -EINVAL, 0);
	ints("- 5", 1, -EINVAL, 0);
	ints("08", 1, -EINVAL, 0);
	ints("0x", 1, -EINVAL, 0);
	ints("4096 abc", 3, -EINVAL, 0);
	ints("1 2 3 4", 3, -EINVAL, 0);
	ints("99999999999999999999", 1, -EINVAL, 0);
	ints("5,6", 3, -EINVAL, 0);
}

static void test_check(void)
{
	refused("p", "{\"net.ipv4.tcp_rmem\":\"4096 1073741824 1073741824\"}",
		"sysctl_exceeds_policy",
		"sets the default of the receive buffer of TCP sockets, in bytes (SO_RCVBUF) to 1073741824");
	refused("p", "{\"net/ipv4/tcp_rmem\":\"4096 4096 2147483647\"}",
		"sysctl_exceeds_policy", "the autotuning max of");
	refused("p", "{\"net.core.rmem_default\":\"1073741824\"}",
		"sysctl_exceeds_policy", "other sockets");
	refused("p", "{\"net.ipv4.tcp_keepalive_time\":\"1\"}",
		"sysctl_exceeds_policy", "clamp 60..3600");
	refused("p", "{\"net.ipv4.tcp_congestion_control\":\"nosuchcc\"}",
		"sysctl_exceeds_policy", "force 'reno'");
	refused("locked", "{\"net.ipv4.tcp_keepalive_probes\":\"100\"}",
		"sysctl_exceeds_policy", "(deny)");
	refused("p", "{\"net.ipv4.tcp_keepalive_time\":\"ten\"}",
		"state_invalid", "not an integer as the kernel reads it");
	refused("p", "{\"net.ipv4.tcp_keepalive_time\":600}", "state_invalid",
		"not a string");
	refused("p", "{\"net.ipv4.tcp_keepalive_time\":\"4294967296\"}",
		"state_invalid", "out of the kernel's range");
	refused("p", "[\"net.ipv4.tcp_rmem\"]", "state_invalid",
		"is not an object");
	passes("p", "{\"net.ipv4.tcp_keepalive_time\":\"600\"}");
	passes("p", "{\"net.ipv4.tcp_keepalive_time\":\"7200\"}");
	passes("p", "{\"net.ipv4.tcp_rmem\":\"4096 65536 4096\"}");
	passes("p", "{\"net.ipv4.tcp_rmem\":\"4096\"}");
	passes("p", "{\"net.ipv4.tcp_congestion_control\":\"reno\\n\"}");
	passes("p", "{\"net.ipv4.ping_group_range\":\"0 2147483647\"}");
	/* keys the runtimes would not write to that file */
	passes("p", "{\"net.ipv4.tcp_rmem \":\"4096 1073741824 1073741824\"}");
	passes("p", "{\"net.ipv4.tcp_rmem.x\":\"huge\"}");
	/* no rule on the option, audit mode, no setsockopt rules */
	passes("p", "{\"net.ipv4.ip_default_ttl\":\"255\"}");
	passes("audit",
	       "{\"net.ipv4.tcp_rmem\":\"4096 1073741824 1073741824\"}");
	passes("none",
	       "{\"net.ipv4.tcp_rmem\":\"4096 1073741824 1073741824\"}");
	passes("none", "[]");
}

int main(void)
{
	struct sh_error err = { 0 };

	if (config_parse("t.json", POLICY, strlen(POLICY), &cfg, &err)) {
		tap_diag("config: %s", err.msg);
		return 1;
	}
	test_normalize();
	test_parse();
	test_check();
	config_free(&cfg);
	return tap_done();
}
