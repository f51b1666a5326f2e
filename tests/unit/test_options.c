// SPDX-License-Identifier: GPL-2.0-only
/*
 * The option table's kernel semantics and what the config compiles from
 * them: domains, short reads, getsockopt forms, aliases, and the rules the
 * programs could not enforce.
 *
 * Modules: `names.c`
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "config/config.h"
#include "helpers.h"
#include "config/names.h"
#include "tap.h"

#define POLICY(rules) "{\"policies\":{\"p\":{" rules "}}}"
#define SET(rule) POLICY("\"setsockopt\":[" rule "]")
#define GET(rule) POLICY("\"getsockopt\":[" rule "]")

static const struct sh_policy *compile(const char *text, struct sh_config *cfg)
{
	if (parse_config(text, cfg))
		return NULL;
	return config_find_policy(cfg, "p");
}

/* Record mode finds an int option's domain at its slot (sockopt_hook.h):
 * each needs one, at its level and UDP's also at SOL_UDPLITE, and no two
 * may share it. The first option that has none or shares one, or NULL. */
static const struct sh_option_name *slots_lost(void)
{
	static const struct sh_option_name *at[SH_FP_DOMAINS_MAX];
	const struct sh_option_name *o;
	int slot;

	for (size_t i = 0; (o = names_option_at(i)); i++) {
		if (o->kind != OPT_INT)
			continue;
		for (int pass = 0; pass < (o->level == 17 ? 2 : 1); pass++) {
			slot = sh_fp_domain_slot(pass ? SOL_UDPLITE_LEVEL :
							o->level,
						 o->optname);
			if (slot < 0 || slot >= SH_FP_DOMAINS_MAX || at[slot]) {
				tap_diag("  no slot of its own: level %d, %s",
					 o->level, o->name);
				return o;
			}
			at[slot] = o;
		}
	}
	return NULL;
}

static void test_table(void)
{
	const struct sh_option_name *o, *lost = NULL;
	size_t i;

	for (i = 0; (o = names_option_at(i)); i++) {
		const struct sh_option_name *again;

		if (names_option_find(o->level, o->name, &again) ||
		    again != o ||
		    names_option_by_value(o->level, o->optname) != o) {
			lost = o;
			break;
		}
	}
	ok(!lost && i == names_option_count() && i > 0,
	   "all %zu options are found by name and value", names_option_count());
	if (lost)
		tap_diag("  not found again: level %d, %s (%d)", lost->level,
			 lost->name, lost->optname);
	ok(!slots_lost(), "every int option has a record-mode slot of its own");
	o = names_option_by_value(1, 8);
	ok(o && o->domain == SH_DOM_U32, "SO_RCVBUF is kept unsigned");
	o = names_option_by_value(1, 18);
	ok(o && o->domain == SH_DOM_NEG_TO && o->special == INT_MAX,
	   "SO_RCVLOWAT: negative means INT_MAX");
	o = names_option_by_value(0, 1);
	ok(o && o->domain == SH_DOM_U8 &&
		   names_option_short_read(o) == SH_SHORT_BYTE &&
		   names_option_get_form(o) == SH_GET_INT_BYTE,
	   "IP_TOS: a byte is kept; IPv4 reads and returns single bytes");
	o = names_option_by_value(41, 67);
	ok(o && o->domain == SH_DOM_M1_TO && o->special == 0 &&
		   names_option_short_read(o) == SH_SHORT_ZERO,
	   "IPV6_TCLASS: -1 means 0; a short IPv6 value reads as 0");
	o = names_option_by_value(1, 47);
	ok(o && names_option_get_form(o) == SH_GET_U64,
	   "SO_MAX_PACING_RATE comes back as a u64");
	o = names_option_by_value(6, 13);
	ok(o && names_option_get_form(o) == SH_GET_STR_PADDED,
	   "TCP_CONGESTION comes back NUL-padded");
	o = names_option_by_value(1, 25);
	ok(o && names_option_get_form(o) == SH_GET_STR_NUL,
	   "SO_BINDTODEVICE comes back with its NUL");
}

static const struct sh_rule_entry *entry(const struct sh_policy *p, int level,
					 int optname)
{
	for (size_t i = 0; p && i < p->nr_set; i++)
		if (p->set_rules[i].key.level == level &&
		    p->set_rules[i].key.optname == optname)
			return &p->set_rules[i];
	return NULL;
}

static void test_aliases(void)
{
	struct sh_config cfg;
	const struct sh_policy *p = compile(
		SET("{\"level\":\"SOL_UDP\",\"option\":\"UDP_CORK\",\"action\":\"deny\"},"
		    "{\"level\":\"SOL_SOCKET\",\"option\":\"SO_TIMESTAMP\",\"action\":\"deny\"},"
		    "{\"level\":\"SOL_SOCKET\",\"option\":\"SO_SNDBUF\",\"action\":\"clamp\",\"max\":1000},"
		    "{\"level\":\"SOL_SOCKET\",\"option\":\"SO_SNDBUFFORCE\",\"action\":\"deny\"},"
		    "{\"level\":\"SOL_SOCKET\",\"option\":\"SO_BINDTODEVICE\",\"action\":\"force\",\"value\":\"lo\"}"),
		&cfg);
	const struct sh_rule_entry *e;

	ok(p != NULL, "a policy with aliased options compiles");
	e = entry(p, 136, 1);
	ok(e && e->alias_of == 0 && e->rule.action == SH_ACTION_DENY,
	   "SOL_UDP UDP_CORK also covers SOL_UDPLITE");
	e = entry(p, 1, 63);
	ok(e && e->alias_of == 1, "SO_TIMESTAMP also covers SO_TIMESTAMP_NEW");
	e = entry(p, 1, 32);
	ok(e && e->alias_of < 0 && e->rule.action == SH_ACTION_DENY,
	   "an explicit SO_SNDBUFFORCE rule wins over the SO_SNDBUF alias");
	ok(!entry(p, 1, 62),
	   "a forced SO_BINDTODEVICE name is not carried to SO_BINDTOIFINDEX");
	if (p)
		config_free(&cfg);
	p = compile(
		SET("{\"level\":\"SOL_UDPLITE\",\"option\":\"1\",\"action\":\"deny\"}"),
		&cfg);
	ok(p && entry(p, 17, 1) && entry(p, 136, 1),
	   "a rule written at SOL_UDPLITE covers SOL_UDP too");
	if (p)
		config_free(&cfg);
	p = compile(
		SET("{\"level\":\"SOL_SOCKET\",\"option\":\"SO_RCVBUF\",\"action\":\"clamp\",\"min\":3000000000}"),
		&cfg);
	e = entry(p, 1, 33);
	ok(e && e->rule.min == INT32_MAX && e->rule.max == INT32_MAX,
	   "a carried-over clamp keeps to SO_RCVBUFFORCE's signed int");
	if (p)
		config_free(&cfg);
	config_refused(
		SET("{\"level\":\"SOL_UDP\",\"option\":\"UDP_CORK\",\"action\":\"deny\"},"
		    "{\"level\":\"SOL_UDPLITE\",\"option\":\"1\",\"action\":\"allow\"}"),
		"duplicate rule",
		"SOL_UDP and SOL_UDPLITE rules for one option");
}

static void test_domains(void)
{
	struct sh_config cfg;
	const struct sh_policy *p = compile(
		SET("{\"level\":\"SOL_SOCKET\",\"option\":\"SO_MAX_PACING_RATE\",\"action\":\"clamp\",\"max\":10000000000},"
		    "{\"level\":\"SOL_SOCKET\",\"option\":\"SO_MARK\",\"action\":\"force\",\"value\":4294967295},"
		    "{\"level\":\"SOL_IP\",\"option\":\"IP_TTL\",\"action\":\"clamp\",\"max\":64}"),
		&cfg);
	const struct sh_rule_entry *e;
	__s64 v = 0;

	e = entry(p, 1, 47);
	ok(e && e->rule.max == 10000000000LL && e->rule.min == 0,
	   "a pacing-rate clamp takes 64-bit bounds");
	e = entry(p, 1, 36);
	if (e)
		memcpy(&v, e->rule.value, sizeof(v));
	ok(e && v == 4294967295LL, "SO_MARK may be forced to 0xffffffff");
	e = entry(p, 0, 2);
	ok(e && e->rule.domain == SH_DOM_M1_TO && e->rule.special == 255 &&
		   e->rule.short_read == SH_SHORT_BYTE &&
		   e->rule.min == INT32_MIN,
	   "IP_TTL: -1 (the default) counts as 255, a byte is read");
	if (p)
		config_free(&cfg);
	config_refused(
		SET("{\"level\":\"SOL_SOCKET\",\"option\":\"SO_RCVBUF\",\"action\":\"clamp\",\"min\":-1,\"max\":9}"),
		"-1 is out of range for SO_RCVBUF (0..4294967295: the kernel keeps it unsigned)",
		"a negative bound on an unsigned option");
	config_refused(
		SET("{\"level\":\"SOL_SOCKET\",\"option\":\"SO_KEEPALIVE\",\"action\":\"clamp\",\"max\":2}"),
		"2 is out of range for SO_KEEPALIVE (0..1: it is a boolean)",
		"a bound beyond a boolean");
	config_refused(
		SET("{\"level\":\"SOL_IP\",\"option\":\"IP_TOS\",\"action\":\"force\",\"value\":256}"),
		"256 is out of range for IP_TOS (0..255: the kernel keeps one byte)",
		"a forced TOS beyond a byte");
	config_refused(
		SET("{\"level\":\"SOL_SOCKET\",\"option\":\"SO_TYPE\",\"action\":\"force\",\"value\":1}"),
		"SO_TYPE cannot be set", "forcing a read-only option on set");
	config_refused(
		SET("{\"level\":\"SOL_IP\",\"option\":\"IP_LOCAL_PORT_RANGE\",\"action\":\"clamp\",\"max\":1}"),
		"clamp needs an int option, and IP_LOCAL_PORT_RANGE is not one",
		"clamping a packed pair");
	config_refused(
		GET("{\"level\":\"SOL_TCP\",\"option\":\"TCP_ZEROCOPY_RECEIVE\",\"action\":\"deny\"}"),
		"getsockopt rules cannot cover TCP_ZEROCOPY_RECEIVE",
		"a getsockopt rule the program cannot enforce");
	config_refused(
		GET("{\"level\":\"SOL_TCP\",\"option\":\"35\",\"action\":\"force\",\"value\":1}"),
		"getsockopt rules cannot cover TCP_ZEROCOPY_RECEIVE",
		"the same rule given by number");
}

int main(void)
{
	/* 9 table checks, 8 alias checks, 10 domain checks */
	tap_plan(27);
	test_table();
	test_aliases();
	test_domains();
	return tap_done();
}
