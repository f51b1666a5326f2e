// SPDX-License-Identifier: GPL-2.0-only
/*
 * Record mode's proposed policy: a footprint becomes a policy that the
 * hook's own config parser accepts, with clamps in the kernel's terms, and
 * the record.* config keys.
 */
#include <string.h>

#include "footprint.h"
#include "footprint_policy.h"
#include "helpers.h"
#include "names.h"
#include "tap.h"

static void add(struct footprint *fp, __u32 kind, int a, int b, int c, int has,
		long long min, long long max)
{
	struct footprint_entry *e = &fp->e[fp->nr++];

	e->key = (struct sh_fp_key){ kind, a, b, c };
	e->v = (struct sh_fp_value){
		.count = 1, .min = min, .max = max, .has_value = (__u32)has
	};
}

/* The policy's text, parsed as an operator config. */
static int parse_policy(const struct footprint *fp, struct sh_config *cfg)
{
	struct json_object *o = footprint_policy_json(fp, "web");
	const char *text = json_object_to_json_string(o);
	static char copy[65536];
	int r;

	snprintf(copy, sizeof(copy), "%s", text);
	json_object_put(o);
	r = parse_config(copy, cfg);
	return r;
}

static void test_policy(void)
{
	static struct footprint fp;
	const struct sh_policy *p;
	struct sh_config cfg;

	memset(&fp, 0, sizeof(fp));
	fp.kind_read[SH_PROG_SOCK] = true;
	add(&fp, SH_FP_SET, 1, 8, 0, 1, 65536, 131072); /* SO_RCVBUF */
	add(&fp, SH_FP_SET, 1, 9, 0, 1, 1, 1); /* SO_KEEPALIVE: bool */
	add(&fp, SH_FP_SET, 1, 15, 0, 1, -1, 7); /* SO_RCVLOWAT */
	add(&fp, SH_FP_SET, 6, 13, 0, 1, 0x62756300,
	    0x62756300); /* TCP_CONGESTION */
	add(&fp, SH_FP_SET, 1, 2999, 0, 1, 1, 1); /* unknown: a number */
	add(&fp, SH_FP_GET, 1, 36, 0, 0, 0, 0); /* SO_MARK: no rule */
	add(&fp, SH_FP_SOCK, 2, 2, 17, 0, 0, 0); /* AF_INET dgram */
	ok(parse_policy(&fp, &cfg) == 0, "the proposed policy parses");
	p = config_find_policy(&cfg, "web");
	ok(p && p->default_deny, "in allow-list mode");
	ok(p && p->nr_set >= 5, "one setsockopt rule per option (%zu)",
	   p ? p->nr_set : 0);
	ok(p && p->set_rules[0].rule.action == SH_ACTION_CLAMP &&
		   p->set_rules[0].rule.min == 65536 &&
		   p->set_rules[0].rule.max == 131072,
	   "SO_RCVBUF: a clamp to the observed range");
	ok(p && p->set_rules[1].rule.action == SH_ACTION_ALLOW,
	   "SO_KEEPALIVE (a boolean): an allow");
	ok(p && p->nr_get == 0, "no getsockopt rule");
	ok(p && p->nr_deny == 2, "SOCK_RAW and AF_INET6 denied (%u)",
	   p ? p->nr_deny : 0);
	config_free(&cfg);

	fp.overflow[SH_PROG_SOCK] = 1;
	ok(parse_policy(&fp, &cfg) == 0 && config_find_policy(&cfg, "web") &&
		   config_find_policy(&cfg, "web")->nr_deny == 0,
	   "an overflowed socket table denies no socket");
	config_free(&cfg);
}

static void test_config(void)
{
	struct sh_config cfg;
	const char *said = NULL;

	ok(parse_config("{\"record\": {\"allow\": true, \"dir\": \"/x\"}}",
			&cfg) == 0 &&
		   cfg.record_allow && !strcmp(cfg.record_dir, "/x"),
	   "record.allow and record.dir");
	config_free(&cfg);
	ok(parse_config("{}", &cfg) == 0 && !cfg.record_allow &&
		   !strcmp(cfg.record_dir, SH_RECORD_DIR_DEFAULT),
	   "recording is off by default");
	config_free(&cfg);
	ok(parse_config_said("{\"record\": {\"dir\": \"rel\"}}", &cfg, &said) <
			   0 &&
		   said && strstr(said, "record.dir"),
	   "a relative record.dir is refused");
}

static void test_names(void)
{
	struct sh_record rec = { 0 };
	char name[256];

	ok(names_record_ok("web-1.a_b"), "a plain record name");
	ok(!names_record_ok("../x") && !names_record_ok(".x") &&
		   !names_record_ok(""),
	   "names that could leave the directory are refused");
	strcpy(rec.id, "abc/def");
	strcpy(rec.footprint, "web");
	footprint_file_name(&rec, name, sizeof(name));
	ok(!strcmp(name, "web-abc_def.json"),
	   "an id's odd characters become _");
	strcpy(rec.container, "nginx");
	footprint_file_name(&rec, name, sizeof(name));
	ok(!strcmp(name, "web-nginx.json"),
	   "the container name when there is one");
}

/* What `record ID` shows of each entry, as text and as JSON. */
static void test_entries(void)
{
	static struct footprint fp;
	struct json_object *all, *arr, *o, *v;
	char text[SH_FOOTPRINT_TEXT_MAX];

	memset(&fp, 0, sizeof(fp));
	add(&fp, SH_FP_SET, 1, 8, 0, 1, 4096, 65536); /* SO_RCVBUF */
	add(&fp, SH_FP_SOCK, 10, 3, 58, 0, 0, 0); /* AF_INET6 raw ICMPv6 */
	add(&fp, SH_FP_GET, 277, 4242, 0, 0, 0, 0); /* unknown level */
	fp.e[0].v.count = 2;
	fp.overflow[SH_PROG_SET] = 5;
	footprint_policy_entry_text(&fp.e[0], text, sizeof(text));
	is_str(text,
	       "setsockopt SOL_SOCKET SO_RCVBUF count 2 values 4096..65536",
	       "text: call, level, option, count, values");
	footprint_policy_entry_text(&fp.e[1], text, sizeof(text));
	is_str(text, "socket AF_INET6 SOCK_RAW IPPROTO_ICMPV6 count 1",
	       "text: a socket by family, type and protocol");
	footprint_policy_entry_text(&fp.e[2], text, sizeof(text));
	is_str(text, "getsockopt 277 4242 count 1",
	       "text: unnamed level and option as numbers");
	footprint_policy_entry_text(&fp.e[0], text, 12);
	ok(strlen(text) < 12, "a short buffer is never overrun");

	all = footprint_policy_entries_json(&fp);
	ok(json_object_object_get_ex(all, "entries", &arr) &&
		   json_object_is_type(arr, json_type_array) &&
		   json_object_array_length(arr) == 3,
	   "JSON: entries, one object each");
	ok(json_object_object_get_ex(all, "table_size", &v) &&
		   json_object_get_int(v) == SH_FP_MAX &&
		   json_object_object_get_ex(all, "overflow", &o) &&
		   json_object_object_get_ex(o, "setsockopt", &v) &&
		   json_object_get_int(v) == 5,
	   "JSON: the table size and each program's overflow");
	o = json_object_array_get_idx(arr, 0);
	ok(json_object_object_get_ex(o, "call", &v) &&
		   !strcmp(json_object_get_string(v), "setsockopt") &&
		   json_object_object_get_ex(o, "count", &v) &&
		   json_object_get_int(v) == 2 &&
		   json_object_object_get_ex(o, "min", &v) &&
		   json_object_get_int(v) == 4096 &&
		   json_object_object_get_ex(o, "max", &v) &&
		   json_object_get_int(v) == 65536,
	   "JSON: call, count, min, max");
	o = json_object_array_get_idx(arr, 1);
	ok(json_object_object_get_ex(o, "family", &v) &&
		   !strcmp(json_object_get_string(v), "AF_INET6") &&
		   json_object_object_get_ex(o, "protocol", &v) &&
		   !strcmp(json_object_get_string(v), "IPPROTO_ICMPV6") &&
		   !json_object_object_get_ex(o, "min", &v),
	   "JSON: a socket entry by name, no values");
	json_object_put(all);
}

int main(void)
{
	test_policy();
	test_entries();
	test_config();
	test_names();
	return tap_done();
}
