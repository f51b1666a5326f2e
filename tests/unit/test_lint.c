// SPDX-License-Identifier: GPL-2.0-only
/*
 * validate's warnings about policies a workload can go around.
 *
 * Modules: `lint.c`
 */
#include <string.h>

#include "config/config.h"
#include "config/lint.h"
#include "tap.h"

static int lint(const char *text, struct lint_warnings *w)
{
	struct sh_error err = { 0 };
	struct sh_config cfg;

	memset(w, 0, sizeof(*w));
	if (config_parse("t.json", text, strlen(text), &cfg, &err))
		return -1;
	lint_policies(&cfg, w);
	config_free(&cfg);
	return w->nr;
}

static bool warns(const struct lint_warnings *w, const char *want)
{
	for (int i = 0; i < w->nr; i++)
		if (strstr(w->text[i], want))
			return true;
	return false;
}

static void test_examples(void)
{
	static const char *const files[] = { "config.json",
					     "config-allowlist.json",
					     "config-minimal.json" };
	struct lint_warnings w;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct sh_error err = { 0 };
		struct sh_config cfg;
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", EXAMPLES, files[i]);
		memset(&w, 0, sizeof(w));
		if (config_load(path, &cfg, &err) == 0) {
			lint_policies(&cfg, &w);
			config_free(&cfg);
		}
		ok(w.nr == 0, "examples/%s draws no warning%s%s", files[i],
		   w.nr ? ": " : "", w.nr ? w.text[0] : "");
	}
}

static void test_warnings(void)
{
	struct lint_warnings w;

	lint("{\"policies\":{\"p\":{\"socket\":{\"mark\":3}}}}", &w);
	ok(warns(&w,
		 "policies.p.socket: its mark does not reach MPTCP subflows"),
	   "a stamped mark without an MPTCP deny");
	lint("{\"policies\":{\"p\":{\"socket\":{\"mark\":3,\"deny\":[{\"family\":\"AF_INET\",\"protocol\":\"IPPROTO_MPTCP\"}]}}}}",
	     &w);
	ok(warns(&w, "MPTCP subflows"), "an MPTCP deny for AF_INET only");
	ok(lint("{\"policies\":{\"p\":{\"socket\":{\"mark\":3,\"deny\":[{\"protocol\":\"IPPROTO_MPTCP\"}]}}}}",
		&w) == 0,
	   "a stamped mark with MPTCP denied");
	lint("{\"policies\":{\"p\":{\"socket\":{\"priority\":2,\"deny\":[{\"protocol\":\"IPPROTO_MPTCP\"}]},"
	     "\"setsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_PRIORITY\",\"action\":\"deny\"}]}}}",
	     &w);
	ok(warns(&w, "socket.priority: any process may overwrite it"),
	   "a stamped priority with IP_TOS left open");
	ok(lint("{\"policies\":{\"p\":{\"default\":\"deny\",\"socket\":{\"priority\":2,\"deny\":[{\"protocol\":\"IPPROTO_MPTCP\"}]}}}}",
		&w) == 0,
	   "allow-list mode denies SO_PRIORITY and IP_TOS already");
	lint("{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_IP\",\"option\":\"IP_TTL\",\"action\":\"clamp\",\"max\":64}]}}}",
	     &w);
	ok(warns(&w, "SOL_IP IP_TTL does not cover IPv6 sockets") &&
		   warns(&w, "IPV6_UNICAST_HOPS"),
	   "an IPv4 rule without its IPv6 twin");
	ok(lint("{\"policies\":{\"p\":{\"socket\":{\"deny\":[{\"family\":\"AF_INET6\"}]},"
		"\"setsockopt\":[{\"level\":\"SOL_IP\",\"option\":\"IP_TTL\",\"action\":\"clamp\",\"max\":64}]}}}",
		&w) == 0,
	   "no twin needed where AF_INET6 is denied");
}

static void test_sandbox(void)
{
	struct lint_warnings w;

	lint("{\"sandbox_policy\":\"\"}", &w);
	ok(warns(&w, "sandbox_policy is \"\": pod sandboxes are not policed"),
	   "sandbox_policy \"\": a warning");
	lint("{\"sandbox_policy\":\"p\",\"policies\":{\"p\":{\"socket\":{\"deny\":[{\"family\":\"AF_INET\"}]}}}}",
	     &w);
	ok(warns(&w, "sandbox_policy 'p' lets the pause container create"),
	   "a sandbox policy that leaves AF_INET6 open");
	lint("{\"sandbox_policy\":\"p\",\"policies\":{\"p\":{\"mode\":\"audit\",\"socket\":{\"deny\":[{\"family\":\"AF_INET\"},{\"family\":\"AF_INET6\"}]}}}}",
	     &w);
	ok(warns(&w, "sandbox_policy 'p' is in audit mode"),
	   "a sandbox policy in audit mode");
	ok(lint("{\"sandbox_policy\":\"p\",\"policies\":{\"p\":{\"socket\":{\"deny\":[{\"family\":\"AF_INET6\"},{\"family\":\"AF_INET\"}]}}}}",
		&w) == 0,
	   "a sandbox policy denying both families: no warning");
	ok(lint("{\"sandbox_policy\":\"@deny-sockets\"}", &w) == 0,
	   "the built-in, named: no warning");
}

/* An audit policy a workload may name. */
static void test_audit_allowed(void)
{
	struct lint_warnings w;

	lint("{\"annotations\":{\"allow_policies\":[\"web\"]},"
	     "\"policies\":{\"web\":{\"mode\":\"audit\"}}}",
	     &w);
	ok(warns(&w,
		 "policies.web is in audit mode and in annotations.allow_policies: a container that names it is refused (audit_mode_not_allowed)"),
	   "an audit policy in allow_policies: warned, it is refused");
	lint("{\"annotations\":{\"allow_policies\":[\"web\"]},"
	     "\"policies\":{\"web\":{\"mode\":\"audit\","
	     "\"audit_by_annotation\":true}}}",
	     &w);
	ok(warns(&w,
		 "policies.web is in audit mode and in annotations.allow_policies, with its audit_by_annotation true: any workload that names it runs with nothing applied"),
	   "with audit_by_annotation: warned, any workload lifts its policy");
	lint("{\"annotations\":{\"allow_policies\":[\"web\"]},"
	     "\"policies\":{\"web\":{},\"trial\":{\"mode\":\"audit\"}}}",
	     &w);
	ok(!warns(&w, "annotations.allow_policies"),
	   "an audit policy no annotation may name: no such warning");
}

int main(void)
{
	test_examples();
	test_warnings();
	test_sandbox();
	test_audit_allowed();
	return tap_done();
}
