// SPDX-License-Identifier: GPL-2.0-only
/* The one rules renderer and its action table (render.c): every action as
 * JSON and as text, socket rules, names or numbers, a text that does not
 * fit, the names the config parser takes.
 *
 * Modules: `render.c`
 */
#include <string.h>

#include "config/render.h"
#include "tap.h"

static const char *json(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

static struct sh_rule_entry rule(int level, int optname, const char *name,
				 __u32 action)
{
	struct sh_rule_entry e = {
		.option_name = name,
		.key = { .level = level, .optname = optname },
		.rule = { .action = action },
		.alias_of = -1,
	};

	return e;
}

static void check(const struct sh_rule_entry *e, const char *want_json,
		  const char *want_text)
{
	struct json_object *o = render_rule_json(e);
	struct render_buf t;
	char buf[128];

	is_str(json(o), want_json, "json: %s", json(o));
	render_buf_init(&t, buf, sizeof(buf));
	render_rule_text(&t, e);
	ok(!strcmp(buf, want_text), "text: %s", buf);
	json_object_put(o);
}

static void test_actions(void)
{
	struct sh_rule_entry e;
	__s64 v = 64;

	e = rule(1, 36, "SO_MARK", SH_ACTION_DENY);
	check(&e,
	      "{\"level\":\"SOL_SOCKET\",\"option\":\"SO_MARK\",\"action\":\"deny\"}",
	      "deny SOL_SOCKET SO_MARK");
	e = rule(1, 9, "SO_KEEPALIVE", SH_ACTION_ALLOW);
	check(&e,
	      "{\"level\":\"SOL_SOCKET\",\"option\":\"SO_KEEPALIVE\",\"action\":\"allow\"}",
	      "allow SOL_SOCKET SO_KEEPALIVE");
	e = rule(1, 8, "SO_RCVBUF", SH_ACTION_CLAMP);
	e.rule.min = 4096;
	e.rule.max = 65536;
	check(&e,
	      "{\"level\":\"SOL_SOCKET\",\"option\":\"SO_RCVBUF\",\"action\":\"clamp\",\"min\":4096,\"max\":65536}",
	      "clamp SOL_SOCKET SO_RCVBUF 4096..65536");
	e = rule(0, 2, "IP_TTL", SH_ACTION_FORCE_INT);
	memcpy(e.rule.value, &v, sizeof(v));
	e.rule.value_len = sizeof(v);
	check(&e,
	      "{\"level\":\"SOL_IP\",\"option\":\"IP_TTL\",\"action\":\"force\",\"value\":64}",
	      "force SOL_IP IP_TTL =64");
	e = rule(6, 13, "TCP_CONGESTION", SH_ACTION_FORCE_BYTES);
	memcpy(e.rule.value, "reno", 4);
	e.rule.value_len = 4;
	check(&e,
	      "{\"level\":\"SOL_TCP\",\"option\":\"TCP_CONGESTION\",\"action\":\"force\",\"value\":\"reno\"}",
	      "force SOL_TCP TCP_CONGESTION =\"reno\"");
	/* A level and an option the hook has no name for: numbers. */
	e = rule(999, 77, NULL, SH_ACTION_DENY);
	check(&e, "{\"level\":999,\"option\":77,\"action\":\"deny\"}",
	      "deny 999 77");
	is_str(render_action_name(SH_ACTION_FORCE_BYTES), "force",
	       "both forces are named force");
	is_str(render_action_name(99), "?", "an unknown action: ?");
	ok(render_action_named("force") &&
		   render_action_named("force")->action == SH_ACTION_FORCE_INT,
	   "operators' force is the int force (a string makes it bytes)");
	ok(render_action_named("clamp") &&
		   !render_action_named("clamp")->on_get,
	   "clamp is no getsockopt action");
	ok(render_action_named("deny") && render_action_named("deny")->on_get,
	   "deny is a getsockopt action");
	ok(!render_action_named("bogus") && !render_action_named("?"),
	   "an unknown name: no action");
}

static void test_sock(void)
{
	struct sh_sock_rule raw = { 2, 3, SH_ANY },
			    any = { SH_ANY, SH_ANY, SH_ANY };
	struct sh_sock_rule num = { 4242, SH_ANY, SH_ANY };
	struct json_object *o;
	struct render_buf t;
	char buf[64];

	o = render_sock_json(&raw);
	is_str(json(o), "{\"family\":\"AF_INET\",\"type\":\"SOCK_RAW\"}",
	       "a socket rule's json names only what it sets");
	json_object_put(o);
	o = render_sock_json(&num);
	is_str(json(o), "{\"family\":4242}", "an unnamed family: its number");
	json_object_put(o);
	render_buf_init(&t, buf, sizeof(buf));
	render_sock_text(&t, &raw);
	render_sep(&t);
	render_sock_text(&t, &any);
	ok(!strcmp(buf, "deny AF_INET SOCK_RAW; deny every socket"),
	   "socket rules as text: %s", buf);
}

static void test_buf(void)
{
	struct render_buf t;
	char small[12];

	render_buf_init(&t, small, sizeof(small));
	render_named(&t, "first", 0);
	render_named(&t, NULL, 7);
	ok(!strcmp(small, "first 7"), "the first word has no space before it");
	render_add(&t, " and much more");
	ok(t.full, "a text that does not fit is full");
	ok(!strcmp(small, "first 7 ..."), "and ends in ...: %s", small);
	render_add(&t, "x");
	ok(!strcmp(small, "first 7 ..."), "nothing is added once full");
	render_buf_init(&t, small, 0);
	render_add(&t, "x");
	ok(!t.pos, "a buffer of no bytes takes nothing");
}

int main(void)
{
	test_actions();
	test_sock();
	test_buf();
	return tap_done();
}
