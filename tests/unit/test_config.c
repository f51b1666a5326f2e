// SPDX-License-Identifier: GPL-2.0-only
/*
 * Operator config parser: the contract shape and every refusal.
 *
 * Modules: `config.c`, `config_json.c`, `config_policy.c`
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "config/config.h"
#include "helpers.h"
#include "config/names.h"
#include "tap.h"

static const struct sh_rule_entry *rule_for(const struct sh_rule_entry *rules,
					    size_t n, int level, int optname)
{
	for (size_t i = 0; i < n; i++)
		if (rules[i].key.level == level &&
		    rules[i].key.optname == optname)
			return &rules[i];
	return NULL;
}

static void test_example(void)
{
	struct sh_config cfg;
	const struct sh_policy *p;
	const struct sh_rule_entry *e;
	struct sh_error err = { 0 };
	int r = reported(config_load(EXAMPLES "/config.json", &cfg, &err),
			 &err);

	ok(r == 0, "examples/config.json parses");
	if (r)
		return;
	p = config_find_policy(&cfg, "restricted");
	ok(p && p->nr_deny == 3 && p->deny[0].family == 10 &&
		   p->deny[0].type == SH_ANY && p->deny[1].type == 3,
	   "socket deny rules");
	ok(p && p->has_mark && p->mark == 7 && p->priority == 2,
	   "mark and priority");
	e = p ? rule_for(p->set_rules, p->nr_set, 1, 8) : NULL;
	ok(e && e->rule.action == SH_ACTION_CLAMP && e->rule.max == 65536 &&
		   e->rule.min == 0 && e->rule.domain == SH_DOM_U32,
	   "SO_RCVBUF clamp, unsigned, min 0 by default");
	e = p ? rule_for(p->set_rules, p->nr_set, 6, 13) : NULL;
	ok(e && e->rule.action == SH_ACTION_FORCE_BYTES &&
		   e->rule.value_len == 4 && !memcmp(e->rule.value, "reno", 4),
	   "TCP_CONGESTION forced to reno");
	e = p ? rule_for(p->set_rules, p->nr_set, 1, 33) : NULL;
	ok(e && e->alias_of >= 0 && e->rule.action == SH_ACTION_CLAMP &&
		   e->rule.max == 65536 && e->rule.domain == SH_DOM_NEG_TO,
	   "the SO_RCVBUF clamp carries over to SO_RCVBUFFORCE");
	ok(p && p->nr_get == 1 && p->get_rules[0].rule.action == SH_ACTION_DENY,
	   "getsockopt deny");
	p = config_find_policy(&cfg, "bulk");
	ok(p && p->has_bypass && p->bypass && !p->nr_set, "bulk: bypass only");
	ok(cfg.allow_bypass && cfg.nr_allowed == 3 &&
		   cfg.on_unsupported == ON_UNSUPPORTED_FAIL,
	   "annotation allow-lists and on_unsupported");
	config_free(&cfg);
}

static void test_numbers_and_defaults(void)
{
	struct sh_config cfg;
	int r = parse_config(
		"{\"policies\":{\"p\":{\"default\":\"deny\",\"setsockopt\":"
		"[{\"level\":1,\"option\":36,\"action\":\"allow\"},"
		"{\"level\":\"SOL_TCP\",\"option\":\"TCP_MAXSEG\",\"action\":\"force\",\"value\":1200}]}}}",
		&cfg);

	ok(r == 0, "numeric level/option and allow-list mode parse");
	if (r)
		return;
	ok(cfg.policies[0].default_deny, "default deny recorded");
	ok(cfg.policies[0].set_rules[0].key.level == 1 &&
		   cfg.policies[0].set_rules[0].key.optname == 36,
	   "numeric option kept");
	ok(cfg.policies[0].set_rules[1].rule.action == SH_ACTION_FORCE_INT &&
		   *(int *)cfg.policies[0].set_rules[1].rule.value == 1200,
	   "int force value");
	ok(cfg.on_unsupported == ON_UNSUPPORTED_FAIL && !cfg.default_policy,
	   "defaults when keys are absent");
	config_free(&cfg);
}

static void test_refusals(void)
{
	config_refused("{", "invalid JSON", "truncated JSON");
	config_refused("[]", "$: must be a JSON object", "non-object root");
	config_refused("{\"defaults\":{},}", "invalid JSON",
		       "trailing comma (strict)");
	config_refused("{\"defaults\":{\"polcy\":\"\"}}",
		       "defaults.polcy: unknown key (did you mean 'policy'?)",
		       "misspelt key with hint");
	config_refused("{\"on_unsupported\":\"ignore\"}",
		       "on_unsupported: unknown value", "bad on_unsupported");
	config_refused("{\"defaults\":{\"bypass_prot_mem\":\"yes\"}}",
		       "defaults.bypass_prot_mem: must be true or false",
		       "string bool");
	config_refused("{\"defaults\":{\"policy\":\"x\"}}",
		       "defaults.policy: names unknown policy",
		       "unknown default policy");
	config_refused("{\"annotations\":{\"allow_policies\":[\"x\"]}}",
		       "annotations.allow_policies[0]: names unknown policy",
		       "unknown allowed policy");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_MRAK\",\"action\":\"deny\"}]}}}",
		"policies.p.setsockopt[0].option: unknown option 'SO_MRAK' (did you mean 'SO_MARK'?)",
		"misspelt option with hint");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_TCP\",\"option\":\"SO_MARK\",\"action\":\"deny\"}]}}}",
		"'SO_MARK' is not an option of level SOL_TCP",
		"option of another level");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_MARK\",\"action\":\"block\"}]}}}",
		"setsockopt[0].action: unknown action", "unknown action");
	config_refused(
		"{\"policies\":{\"p\":{\"getsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_MARK\",\"action\":\"clamp\",\"max\":1}]}}}",
		"expected deny or force", "clamp on getsockopt");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_RCVBUF\",\"action\":\"clamp\",\"max\":4294967296}]}}}",
		"setsockopt[0].max: 4294967296 is out of range for SO_RCVBUF",
		"clamp out of the unsigned range");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_RCVBUF\",\"action\":\"clamp\",\"min\":9,\"max\":1}]}}}",
		"min (9) is greater than max (1)", "inverted clamp");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_RCVBUF\",\"action\":\"clamp\"}]}}}",
		"clamp needs 'min', 'max' or both", "clamp without bounds");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_TCP\",\"option\":\"TCP_CONGESTION\",\"action\":\"clamp\",\"max\":1}]}}}",
		"clamp needs an int option", "clamp on a string option");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_MARK\",\"action\":\"force\",\"value\":\"seven\"}]}}}",
		"a string value on SO_MARK, which takes an int",
		"string force on int option");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_TCP\",\"option\":\"TCP_CONGESTION\",\"action\":\"force\",\"value\":3}]}}}",
		"an int value on TCP_CONGESTION", "int force on string option");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_TCP\",\"option\":\"TCP_CONGESTION\",\"action\":\"force\",\"value\":\"0123456789abcdefg\"}]}}}",
		"string must be 1 to 15 bytes", "over-long string force");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_MARK\",\"action\":\"deny\",\"max\":3}]}}}",
		"setsockopt[0].max: unknown key", "stray key for action");
	config_refused(
		"{\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_MARK\",\"action\":\"deny\"},"
		"{\"level\":\"SOL_SOCKET\",\"option\":36,\"action\":\"allow\"}]}}}",
		"setsockopt[1]: duplicate rule", "duplicate rule");
	config_refused(
		"{\"policies\":{\"p\":{\"socket\":{\"deny\":[{\"family\":\"AF_UNIX\"}]}}}}",
		"sock_create only sees AF_INET and AF_INET6", "AF_UNIX deny");
	config_refused("{\"policies\":{\"p\":{\"socket\":{\"deny\":[{}]}}}}",
		       "socket.deny[0]: needs at least one", "empty deny rule");
	config_refused("{\"policies\":{\"p\":{\"socket\":{\"mark\":-1}}}}",
		       "policies.p.socket.mark: out of range", "negative mark");
	config_refused("{\"policies\":{\"a/b\":{}}}", "may only use letters",
		       "bad policy name");
	config_refused("{\"policies\":{\"p\":{\"default\":\"maybe\"}}}",
		       "policies.p.default: unknown value", "bad default");
}

static void test_audit_mode(void)
{
	struct sh_config cfg;
	int r = parse_config("{\"annotations\":{\"allow_audit_mode\":true},"
			     "\"policies\":{\"a\":{\"mode\":\"audit\"},"
			     "\"e\":{\"mode\":\"enforce\"},\"d\":{}}}",
			     &cfg);

	ok(r == 0, "audit mode: mode and allow_audit_mode parse");
	if (r)
		return;
	ok(config_find_policy(&cfg, "a")->audit, "mode audit recorded");
	ok(!config_find_policy(&cfg, "e")->audit, "mode enforce recorded");
	ok(!config_find_policy(&cfg, "d")->audit, "enforce by default");
	ok(cfg.allow_audit_mode, "annotations.allow_audit_mode recorded");
	config_free(&cfg);
	r = parse_config("{}", &cfg);
	ok(r == 0 && !cfg.allow_audit_mode, "allow_audit_mode off by default");
	if (!r)
		config_free(&cfg);
	config_refused("{\"policies\":{\"p\":{\"mode\":\"dryrun\"}}}",
		       "policies.p.mode: unknown value 'dryrun'",
		       "bad mode refused, naming it");
	config_refused("{\"policies\":{\"p\":{\"mode\":true}}}",
		       "policies.p.mode", "non-string mode refused");
	config_refused("{\"annotations\":{\"allow_audit_mode\":\"yes\"}}",
		       "annotations.allow_audit_mode: must be true or false",
		       "string allow_audit_mode refused");
	r = parse_config("{\"policies\":{\"a\":{\"mode\":\"audit\","
			 "\"audit_by_annotation\":true},\"b\":{\"mode\":"
			 "\"audit\"}}}",
			 &cfg);
	ok(r == 0 && config_find_policy(&cfg, "a")->audit_by_annotation &&
		   !config_find_policy(&cfg, "b")->audit_by_annotation,
	   "audit_by_annotation recorded, false by default");
	if (!r)
		config_free(&cfg);
	config_refused(
		"{\"policies\":{\"p\":{\"audit_by_annotation\":true}}}",
		"policies.p.audit_by_annotation: is true but the policy's mode is not 'audit'",
		"audit_by_annotation without mode audit refused");
}

static void test_sandbox_policy(void)
{
	struct sh_config cfg;
	int r = parse_config("{}", &cfg);

	ok(r == 0 && cfg.sandbox_policy &&
		   !strcmp(cfg.sandbox_policy->name, SH_SANDBOX_BUILTIN) &&
		   cfg.sandbox_policy->nr_deny == 2,
	   "sandbox_policy: the built-in @deny-sockets by default");
	if (!r)
		config_free(&cfg);
	r = parse_config("{\"sandbox_policy\":\"\"}", &cfg);
	ok(r == 0 && !cfg.sandbox_policy, "sandbox_policy \"\": none");
	if (!r)
		config_free(&cfg);
	r = parse_config("{\"sandbox_policy\":\"p\",\"policies\":{\"p\":{}}}",
			 &cfg);
	ok(r == 0 && cfg.sandbox_policy &&
		   !strcmp(cfg.sandbox_policy->name, "p"),
	   "sandbox_policy names a policy of policies");
	if (!r)
		config_free(&cfg);
	config_refused("{\"sandbox_policy\":\"nope\"}",
		       "sandbox_policy: names unknown policy 'nope'",
		       "unknown sandbox_policy");
	config_refused("{\"sandbox_policy\":false}",
		       "sandbox_policy: must be a string",
		       "non-string sandbox_policy");
	config_refused(
		"{\"annotations\":{\"allow_policies\":[\"@deny-sockets\"]}}",
		"annotations.allow_policies[0]: names the built-in sandbox policy",
		"only sandbox_policy may name the built-in");
}

static void test_names(void)
{
	const struct sh_option_name *opt;
	int v;

	ok(names_level("SOL_TCP", &v) == 0 && v == 6, "SOL_TCP is 6");
	ok(names_level("IPPROTO_IPV6", &v) == 0 && v == 41,
	   "IPPROTO_IPV6 alias");
	ok(names_option_find(1, "SO_RCVBUF", &opt) == 0 && opt->optname == 8,
	   "SO_RCVBUF is 8");
	ok(names_option_find(6, "13", &opt) == 0 && opt->kind == OPT_STRING,
	   "numeric option finds its name and kind");
	ok(names_option_find(6, "9999", &opt) == 0 && opt->kind == OPT_UNKNOWN,
	   "unknown numeric option accepted");
	ok(names_option_find(1, "SO_NOPE", &opt) == -ENOENT, "unknown name");
	is_str(names_suggest("TCP_CONGESTOIN"), "TCP_CONGESTION", "suggestion");
	ok(names_suggest("completely-different") == NULL, "no wild suggestion");
}

/* Writes text to path through a new file renamed over it (as installers
 * and ConfigMaps do), or in place. */
static void rewrite_config(const char *path, const char *text, bool rename_over)
{
	char tmp[PATH_MAX];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(rename_over ? tmp : path, "we");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	if (rename_over)
		rename(tmp, path);
}

/* config_changed(): prestart's check that the file it read is still the
 * config (state.h, SH_STATE_CONFIG_LOCK). */
static void test_changed(void)
{
	char dir[] = "/tmp/sockopt-unit-config.XXXXXX", path[PATH_MAX];
	struct sh_config cfg;
	struct sh_error err = { 0 };

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/config.json", dir);
	rewrite_config(path, "{\"policies\": {}}", false);
	ok(config_load(path, &cfg, &err) == 0 && !config_changed(&cfg),
	   "the file as it was read: not changed");
	rewrite_config(path, "{\"policies\": {\"p\": {}}}", true);
	ok(config_changed(&cfg), "a new file renamed over it: changed");
	config_free(&cfg);
	ok(config_load(path, &cfg, &err) == 0 && !config_changed(&cfg),
	   "read again: not changed");
	rewrite_config(path, "{\"policies\": {\"q\": {}}}", false);
	ok(config_changed(&cfg), "written in place: changed");
	unlink(path);
	ok(config_changed(&cfg), "removed: changed");
	config_free(&cfg);
	rmdir(dir);
}

/* A config file of the test's own (a directory only root may write). */
static const char *write_config(const char *dir, const char *name,
				const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return path;
	fputs(text, f);
	fclose(f);
	return path;
}

/* poststop reads only the log settings: a broken policy does not stop
 * it from logging as the operator asked; broken log settings do. */
static void test_logging_only(void)
{
	char dir[] = "/tmp/test-config-XXXXXX";
	struct sh_error err = { 0 };
	struct sh_config cfg;
	const char *path;

	if (!mkdtemp(dir))
		return;
	path = write_config(dir, "a.json",
			    "{\"log_level\":\"debug\",\"log_format\":\"json\","
			    "\"policies\":{\"p\":{\"setsockopt\":[{\"level\":"
			    "\"SOL_SOCKET\",\"option\":\"SO_NOPE\",\"action\":"
			    "\"deny\"}]}}}");
	ok(config_load(path, &cfg, &err) != 0,
	   "a config with an unknown option is refused by config_load");
	err = (struct sh_error){ 0 };
	ok(config_load_logging(path, &cfg, &err) == 0 &&
		   cfg.log_level == LOG_DEBUG && cfg.log_format == 1,
	   "config_load_logging takes its log settings all the same");
	config_free(&cfg);
	path = write_config(dir, "b.json", "{\"log_level\":\"loud\"}");
	err = (struct sh_error){ 0 };
	ok(config_load_logging(path, &cfg, &err) != 0 &&
		   strstr(err.msg, "log_level: unknown level"),
	   "a bad log_level is refused: %s", err.msg);
	path = write_config(dir, "c.json", "[1]");
	err = (struct sh_error){ 0 };
	ok(config_load_logging(path, &cfg, &err) != 0 &&
		   strstr(err.msg, "must be a JSON object"),
	   "a root that is not an object is refused: %s", err.msg);
	unlink(write_config(dir, "a.json", ""));
	unlink(write_config(dir, "b.json", ""));
	unlink(write_config(dir, "c.json", ""));
	rmdir(dir);
}

static void test_keep_keys(void)
{
	struct sh_config cfg;

	ok(parse_config("{}", &cfg) == 0 && cfg.keep_keys,
	   "keep_keys is on when the config does not say");
	config_free(&cfg);
	ok(parse_config("{\"keep_keys\":false}", &cfg) == 0 && !cfg.keep_keys,
	   "keep_keys false");
	config_free(&cfg);
	config_refused("{\"keep_keys\":\"no\"}",
		       "keep_keys: must be true or false",
		       "keep_keys must be a boolean");
}

int main(void)
{
	test_logging_only();
	test_keep_keys();
	test_example();
	test_numbers_and_defaults();
	test_refusals();
	test_audit_mode();
	test_sandbox_policy();
	test_names();
	test_changed();
	return tap_done();
}
