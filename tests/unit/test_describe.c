// SPDX-License-Identifier: GPL-2.0-only
/*
 * policy.c: what `explain` shows of an effective policy, in JSON and as
 * text: the policy and where it came from, the socket rules by name, the
 * option rules with their values and aliases, the bypass and the mode, and
 * exactly the programs that would attach.
 *
 * Modules: `policy.c`
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "config/config.h"
#include "policy/policy.h"
#include "helpers.h"
#include "tap.h"

static struct json_object *get(struct json_object *o, const char *path)
{
	char key[64];
	const char *dot;

	while (o && *path) {
		dot = strchr(path, '.');
		snprintf(key, sizeof(key), "%.*s",
			 (int)(dot ? dot - path : (long)strlen(path)), path);
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, atoi(key));
		else if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		path = dot ? dot + 1 : "";
	}
	return o;
}

static const char *text_of(struct json_object *o, const char *path)
{
	struct json_object *v = get(o, path);

	return v ? json_object_get_string(v) : NULL;
}

/* What policy_describe_text() prints, as one string (free it). */
static char *printed(struct json_object *desc)
{
	FILE *f = tmpfile();
	int saved = dup(STDOUT_FILENO);
	char *text = calloc(1, 8192);

	fflush(stdout);
	dup2(fileno(f), STDOUT_FILENO);
	policy_describe_text(desc);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(f);
	(void)!fread(text, 1, 8191, f);
	fclose(f);
	return text;
}

static void test_restricted(const struct sh_config *cfg)
{
	struct sh_effective eff;
	struct oci_state st;
	struct json_object *d;
	char *text;

	ok(effective_for(cfg, "{\"sockopt-hook.io/policy\":\"restricted\"}",
			 &st, &eff) == 0,
	   "restricted by annotation resolves");
	d = policy_describe(&eff);
	is_str(text_of(d, "policy.name"), "restricted", "policy.name");
	is_str(text_of(d, "policy.source"), "annotation sockopt-hook.io/policy",
	       "policy.source");
	is_str(text_of(d, "socket.deny.0.family"), "AF_INET6",
	       "socket deny rules by name: family");
	is_str(text_of(d, "socket.deny.1.type"), "SOCK_RAW", "type");
	is_str(text_of(d, "socket.deny.2.protocol"), "IPPROTO_MPTCP",
	       "protocol");
	ok(get(d, "socket.deny.0.type") == NULL,
	   "an unset field of a deny rule is left out (any)");
	ok(json_object_get_int(get(d, "socket.mark")) == 7 &&
		   json_object_get_int(get(d, "socket.priority")) == 2,
	   "mark and priority");
	is_str(text_of(d, "setsockopt_default"), "allow",
	       "setsockopt_default: allow");
	is_str(text_of(d, "setsockopt.0.option"), "SO_MARK",
	       "setsockopt rules by option name");
	is_str(text_of(d, "setsockopt.0.action"), "deny", "... and action");
	is_str(text_of(d, "setsockopt.3.action"), "clamp", "a clamp rule");
	ok(json_object_get_int64(get(d, "setsockopt.3.max")) == 65536,
	   "... with its max");
	is_str(text_of(d, "setsockopt.4.value"), "reno",
	       "a forced string value");
	is_str(text_of(d, "getsockopt.0.option"), "SO_MARK",
	       "getsockopt rules");
	ok(json_object_get_boolean(get(d, "bypass_prot_mem.value")) == false,
	   "bypass_prot_mem false");
	ok(!json_object_get_boolean(get(d, "sandbox")), "not a sandbox");
	is_str(json_object_to_json_string_ext(get(d, "programs"),
					      JSON_C_TO_STRING_PLAIN),
	       "[\"sock_create\",\"setsockopt\",\"getsockopt\"]",
	       "all three programs would attach");
	ok(get(d, "mode") == NULL, "no mode when nobody set one");

	text = printed(d);
	ok(strstr(text,
		  "policy: restricted (from annotation sockopt-hook.io/policy)\n") &&
		   strstr(text, "bypass-prot-mem: false (from ") &&
		   strstr(text,
			  "setsockopt rules:\n  { \"level\": \"SOL_SOCKET\", \"option\": \"SO_MARK\", \"action\": \"deny\" }\n") &&
		   strstr(text, "getsockopt rules:\n") &&
		   strstr(text,
			  "programs that would attach: [ \"sock_create\", \"setsockopt\", \"getsockopt\" ]\n"),
	   "the text form: policy, bypass, rules, programs");
	free(text);
	json_object_put(d);
	oci_state_free(&st);
}

static void test_small(const struct sh_config *cfg)
{
	struct sh_effective eff;
	struct oci_state st;
	struct json_object *d;
	char *text;

	ok(effective_for(cfg, "{\"sockopt-hook.io/policy\":\"setonly\"}", &st,
			 &eff) == 0,
	   "setonly resolves");
	d = policy_describe(&eff);
	is_str(json_object_to_json_string_ext(get(d, "programs"),
					      JSON_C_TO_STRING_PLAIN),
	       "[\"setsockopt\"]", "only setsockopt would attach");
	ok(!get(d, "socket") && !get(d, "getsockopt"),
	   "no socket or getsockopt part");
	json_object_put(d);
	oci_state_free(&st);

	ok(effective_for(cfg, "{\"x\":\"y\"}", &st, &eff) == 0,
	   "no annotation resolves");
	d = policy_describe(&eff);
	text = printed(d);
	ok(!get(d, "policy") && strstr(text, "policy: none\n") &&
		   strstr(text, "programs that would attach: none\n"),
	   "no policy: 'policy: none', no programs");
	free(text);
	json_object_put(d);
	oci_state_free(&st);

	ok(effective_for(cfg, "{\"sockopt-hook.io/bypass-prot-mem\":\"true\"}",
			 &st, &eff) == 0,
	   "the bypass annotation resolves");
	d = policy_describe(&eff);
	ok(json_object_get_boolean(get(d, "bypass_prot_mem.value")) &&
		   strstr(text_of(d, "bypass_prot_mem.source"),
			  "sockopt-hook.io/bypass-prot-mem"),
	   "bypass true, from the annotation");
	is_str(json_object_to_json_string_ext(get(d, "programs"),
					      JSON_C_TO_STRING_PLAIN),
	       "[\"sock_create\"]", "the bypass needs sock_create only");
	json_object_put(d);
	oci_state_free(&st);
}

static void test_aliases_and_mode(void)
{
	struct sh_config cfg;
	struct sh_effective eff;
	struct oci_state st;
	struct json_object *d;
	char *text;

	ok(parse_config(
		   "{\"annotations\":{\"allow_policies\":[\"p\"],\"allow_audit_mode\":true},"
		   "\"policies\":{\"p\":{\"setsockopt\":[{\"level\":\"SOL_IP\",\"option\":\"IP_TOS\",\"action\":\"force\",\"value\":16},"
		   "{\"level\":\"SOL_SOCKET\",\"option\":\"SO_RCVBUF\",\"action\":\"clamp\",\"max\":4096}]}}}",
		   &cfg) == 0,
	   "a config forcing IP_TOS and clamping SO_RCVBUF, audit mode allowed");
	ok(effective_for(
		   &cfg,
		   "{\"sockopt-hook.io/policy\":\"p\",\"sockopt-hook.io/mode\":\"audit\"}",
		   &st, &eff) == 0,
	   "p in audit mode resolves");
	d = policy_describe(&eff);
	ok(json_object_get_int(get(d, "setsockopt.0.value")) == 16,
	   "a forced integer value");
	ok(get(d, "setsockopt.0.also") == NULL, "IP_TOS has no alias");
	is_str(text_of(d, "setsockopt.1.also.0"), "SOL_SOCKET SO_RCVBUFFORCE",
	       "SO_RCVBUF's alias SO_RCVBUFFORCE is shown with it (also)");
	ok(get(d, "setsockopt.2") == NULL, "... and not as a rule of its own");
	is_str(text_of(d, "mode.value"), "audit", "mode: audit");
	text = printed(d);
	ok(strstr(text,
		  "mode: audit (from annotation sockopt-hook.io/mode): the programs count what they would do and apply nothing\n") !=
		   NULL,
	   "the text says what audit mode means");
	free(text);
	json_object_put(d);
	oci_state_free(&st);
	config_free(&cfg);
}

int main(void)
{
	struct sh_config cfg;
	struct sh_error err = { 0 };

	if (reported(config_load(EXAMPLES "/config.json", &cfg, &err), &err))
		return tap_done();
	test_restricted(&cfg);
	test_small(&cfg);
	config_free(&cfg);
	test_aliases_and_mode();
	return tap_done();
}
