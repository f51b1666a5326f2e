// SPDX-License-Identifier: GPL-2.0-only
/*
 * Record mode's proposed policy: a footprint becomes a policy that the
 * hook's own config parser accepts, with clamps in the kernel's terms; it
 * never proposes less than the running policy (its denies, forces, stamps
 * and getsockopt rules kept, a refused call never allowed); what no config
 * can say is dropped or folded. The footprint's JSON form reads back; the
 * record.* config keys; recording file names.
 *
 * Modules: `footprint.c`, `recording.c`
 */
#include <errno.h>
#include <string.h>

#include "record/footprint.h"
#include "helpers.h"
#include "config/names.h"
#include "record/recording.h"
#include "tap.h"

static struct footprint fp;

static void add_v(__u32 kind, int a, int b, int c, int has, long long min,
		  long long max, unsigned count, unsigned refused)
{
	struct footprint_entry *e = &fp.e[fp.nr++];

	e->key = (struct sh_fp_key){ kind, a, b, c };
	e->v = (struct sh_fp_value){ .count = count,
				     .min = min,
				     .max = max,
				     .has_value = (__u32)has,
				     .refused = refused };
}

static void add(__u32 kind, int a, int b, int c, int has, long long min,
		long long max)
{
	add_v(kind, a, b, c, has, min, max, 1, 0);
}

static void reset(void)
{
	memset(&fp, 0, sizeof(fp));
	fp.kind_read[SH_PROG_SOCK] = true;
	fp.kind_read[SH_PROG_SET] = true;
	fp.kind_read[SH_PROG_GET] = true;
}

/* The proposal under running (JSON text or NULL), as the recording file
 * has it, parsed as an operator config: 0, or -1 when it is not written
 * (why says). */
static int propose(const char *running, struct sh_config *cfg, const char **why)
{
	struct json_object *run = running ? json_tokener_parse(running) : NULL;
	struct json_object *doc;
	static char text[1 << 17];
	struct sh_error err = { 0 };
	static char msg[SH_ERROR_MSG_MAX];

	doc = recording_document(json_object_new_array(), &fp, run, "web",
				 &err);
	json_object_put(run);
	snprintf(msg, sizeof(msg), "%s", err.msg);
	*why = msg;
	if (!doc)
		return -1;
	snprintf(text, sizeof(text), "%s", json_object_to_json_string(doc));
	json_object_put(doc);
	return parse_config(text, cfg);
}

static const struct sh_rule_entry *rule(const struct sh_policy *p, int level,
					int optname)
{
	for (size_t i = 0; p && i < p->nr_set; i++)
		if (p->set_rules[i].key.level == level &&
		    p->set_rules[i].key.optname == optname &&
		    p->set_rules[i].alias_of < 0)
			return &p->set_rules[i];
	return NULL;
}

static void test_policy(void)
{
	const struct sh_policy *p;
	struct sh_config cfg;
	const char *why;

	reset();
	add(SH_FP_SET, 1, 8, 0, 1, 65536, 131072); /* SO_RCVBUF */
	add(SH_FP_SET, 1, 9, 0, 1, 1, 1); /* SO_KEEPALIVE: bool */
	add(SH_FP_SET, 1, 15, 0, 1, -1, 7); /* SO_RCVLOWAT */
	add(SH_FP_SET, 6, 13, 0, 1, 0x62756300,
	    0x62756300); /* TCP_CONGESTION */
	add(SH_FP_SET, 1, 2999, 0, 1, 1, 1); /* unknown: a number */
	add(SH_FP_GET, 1, 36, 0, 0, 0, 0); /* SO_MARK: no rule */
	add(SH_FP_SOCK, 2, 2, 17, 0, 0, 0); /* AF_INET dgram */
	ok(propose(NULL, &cfg, &why) == 0, "the proposed policy parses");
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
	ok(propose(NULL, &cfg, &why) == 0 && config_find_policy(&cfg, "web") &&
		   config_find_policy(&cfg, "web")->nr_deny == 0,
	   "an overflowed socket table denies no socket");
	config_free(&cfg);
}

/* The running policy's restrictions are all kept. */
#define RESTRICTED                                                             \
	"{\"bypass_prot_mem\": true, \"socket\": {\"deny\": [{\"family\": "    \
	"\"AF_INET6\"}, {\"type\": \"SOCK_RAW\"}, {\"protocol\": "             \
	"\"IPPROTO_MPTCP\"}], \"mark\": 7, \"priority\": 2}, \"setsockopt\": " \
	"[{\"level\": \"SOL_SOCKET\", \"option\": \"SO_MARK\", \"action\": "   \
	"\"deny\"}, {\"level\": \"SOL_SOCKET\", \"option\": \"SO_RCVBUF\", "   \
	"\"action\": \"clamp\", \"max\": 65536}, {\"level\": \"SOL_TCP\", "    \
	"\"option\": \"TCP_CONGESTION\", \"action\": \"force\", \"value\": "   \
	"\"reno\"}, {\"level\": \"SOL_SOCKET\", \"option\": \"SO_PRIORITY\", " \
	"\"action\": \"clamp\", \"max\": 3}], \"getsockopt\": [{\"level\": "   \
	"\"SOL_SOCKET\", \"option\": \"SO_MARK\", \"action\": \"deny\"}]}"

static void test_running(void)
{
	const struct sh_rule_entry *r;
	const struct sh_policy *p;
	struct sh_config cfg;
	const char *why;

	reset();
	/* Tried and refused: SO_MARK, AF_INET6, SOCK_RAW. */
	add_v(SH_FP_SET, 1, 36, 0, 0, 0, 0, 0, 2); /* SO_MARK */
	add_v(SH_FP_SOCK, 10, 1, 6, 0, 0, 0, 0, 1); /* AF_INET6 stream */
	add_v(SH_FP_SOCK, 2, 3, 255, 0, 0, 0, 0, 1); /* SOCK_RAW */
	add(SH_FP_SOCK, 2, 1, 6, 0, 0, 0); /* AF_INET stream */
	/* Asked 4 MiB, clamped to 64 KiB: the kernel got at most that. */
	add(SH_FP_SET, 1, 8, 0, 1, 4096, 4194304);
	add(SH_FP_SET, 6, 13, 0, 1, 0x63, 0x63); /* TCP_CONGESTION */
	/* SO_KEEPALIVE: no rule of the running policy, allowed. */
	add(SH_FP_SET, 1, 9, 0, 1, 1, 1);
	/* Refused by an allow-list: never allowed. */
	add_v(SH_FP_SET, 6, 1, 0, 1, 1, 1, 0, 3); /* TCP_NODELAY */
	/* Refused, with a count two CPUs' plain stores left above 0. */
	add_v(SH_FP_SET, 6, 9, 0, 1, 1, 1, 1, 1); /* TCP_DEFER_ACCEPT */
	add_v(SH_FP_SOCK, 10, 2, 17, 0, 0, 0, 1, 1); /* AF_INET6 dgram */
	ok(propose(RESTRICTED, &cfg, &why) == 0,
	   "the proposal under a running policy parses");
	p = config_find_policy(&cfg, "web");
	ok(p && p->nr_deny == 3 && p->deny[0].family == 10 &&
		   p->deny[1].type == 3 && p->deny[2].protocol == 262,
	   "its socket denies are kept, none added twice (%u)",
	   p ? p->nr_deny : 0);
	ok(p && p->has_mark && p->mark == 7 && p->has_priority &&
		   p->priority == 2,
	   "its stamps (mark 7, priority 2) are kept");
	ok(p && p->has_bypass && p->bypass, "its bypass_prot_mem is kept");
	r = rule(p, 1, 36);
	ok(r && r->rule.action == SH_ACTION_DENY,
	   "SO_MARK, tried and refused: still denied, not allowed");
	r = rule(p, 1, 8);
	ok(r && r->rule.action == SH_ACTION_CLAMP && r->rule.min == 4096 &&
		   r->rule.max == 65536,
	   "SO_RCVBUF: the values seen, within the running clamp (4096..65536)");
	r = rule(p, 6, 13);
	ok(r && r->rule.action == SH_ACTION_FORCE_BYTES,
	   "TCP_CONGESTION: the force is kept");
	ok(!rule(p, 1, 12), "SO_PRIORITY, clamped but never used: not allowed");
	ok(rule(p, 1, 9) && rule(p, 1, 9)->rule.action == SH_ACTION_ALLOW,
	   "SO_KEEPALIVE, let through: allowed");
	ok(!rule(p, 6, 1), "TCP_NODELAY, refused: not allowed");
	ok(!rule(p, 6, 9),
	   "TCP_DEFER_ACCEPT, refused once with a count left by a race: not allowed");
	ok(p && p->nr_get == 1 && p->get_rules[0].rule.action == SH_ACTION_DENY,
	   "its getsockopt rule is kept");
	if (p)
		config_free(&cfg);
	else
		tap_diag("%s", why);
}

/* What no config can say is dropped or folded. */
static void test_inexpressible(void)
{
	const struct sh_rule_entry *r;
	const struct sh_policy *p;
	struct sh_config cfg;
	const char *why;

	reset();
	add(SH_FP_SET, -1, 5, 0, 1, 1, 1); /* level -1 */
	add(SH_FP_SET, 1, -7, 0, 1, 1, 1); /* option -7 */
	add(SH_FP_SET, 17, 1, 0, 1, 1, 1); /* SOL_UDP UDP_CORK */
	add(SH_FP_SET, 136, 1, 0, 1, 0, 0); /* SOL_UDPLITE UDP_CORK */
	add(SH_FP_SET, 1, 29, 0, 1, 1, 1); /* SO_TIMESTAMP_OLD */
	add(SH_FP_SET, 1, 63, 0, 1, 1, 1); /* SO_TIMESTAMP_NEW */
	add(SH_FP_SET, 1, 66, 0, 0, 0, 0); /* SO_RCVTIMEO_NEW */
	ok(propose(NULL, &cfg, &why) == 0,
	   "negative levels, SOL_UDPLITE and *_NEW: the proposal parses");
	p = config_find_policy(&cfg, "web");
	ok(p && !rule(p, -1, 5) && !rule(p, 1, -7),
	   "a negative level or option is dropped");
	r = rule(p, 17, 1);
	ok(r && r->rule.action == SH_ACTION_ALLOW && !rule(p, 136, 1),
	   "SOL_UDPLITE UDP_CORK is folded into SOL_UDP's one rule");
	ok(rule(p, 1, 29) && !rule(p, 1, 63),
	   "SO_TIMESTAMP_NEW is folded into SO_TIMESTAMP_OLD");
	ok(rule(p, 1, 20) && !rule(p, 1, 66),
	   "SO_RCVTIMEO_NEW into SO_RCVTIMEO_OLD");
	if (p)
		config_free(&cfg);
	else
		tap_diag("%s", why);
}

/* The proposal is parsed before it is written: a running policy the
 * parser no longer takes gives no proposal, and says why in one line. */
static void test_unparsable(void)
{
	struct sh_config cfg;
	const char *why = "";
	int r;

	reset();
	add(SH_FP_SET, 1, 9, 0, 1, 1, 1);
	r = propose("{\"default\": \"maybe\"}", &cfg, &why);
	ok(r == -1 && strstr(why, "policies.running.default") &&
		   !strchr(why, '\n'),
	   "an unparsable running policy: nothing proposed, one line (%s)",
	   why);
}

static void test_json(void)
{
	static struct footprint back;
	struct json_object *prov = json_object_new_object();
	struct sh_error err = { 0 };

	reset();
	add_v(SH_FP_SET, 1, 8, 0, SH_FP_KEPT, 5, 65536, 3, 0);
	add_v(SH_FP_SET, -1, 4, 0, 0, 0, 0, 1, 0);
	add_v(SH_FP_SET, 136, 1, 0, SH_FP_KEPT, 0, 1, 1, 0);
	add_v(SH_FP_GET, 1, 36, 0, 0, 0, 0, 0, 4);
	add_v(SH_FP_SOCK, 10, 2, 17, 0, 0, 0, 2, 0);
	add_v(SH_FP_SOCK, 44, 7, 999, 0, 0, 0, 1, 0);
	fp.overflow[SH_PROG_SET] = 9;
	footprint_json_add(prov, &fp);
	memset(&back, 0, sizeof(back));
	ok(footprint_json_read(prov, &back, &err) == 0,
	   "the footprint's JSON reads back (%s)", err.msg);
	ok(back.nr == fp.nr && !memcmp(back.e, fp.e, fp.nr * sizeof(fp.e[0])),
	   "entry for entry, names and numbers alike");
	ok(back.overflow[SH_PROG_SET] == 9 && back.kind_read[SH_PROG_GET],
	   "with the overflow counts and the tables read");
	ok(footprint_json_read(prov, &back, &err) == 0 && back.nr == fp.nr &&
		   back.e[0].v.count == 6 && back.e[3].v.refused == 8,
	   "read twice: merged, counts added");
	json_object_object_add(prov, "values", json_object_new_string("as-is"));
	ok(footprint_json_read(prov, &back, &err) == -EBADMSG &&
		   strstr(err.msg, "\"values\""),
	   "a \"values\" of another kind is refused (%s)", err.msg);
	json_object_put(prov);
}

/* The (min, max) of entry 0 once typed, as "min..max". */
static const char *typed(long long min, long long max, int has, int level,
			 int optname)
{
	static char text[64];
	struct footprint_entry e = {
		.key = { SH_FP_SET, level, optname, 0 },
		.v = { .count = 1, .min = min, .max = max, .has_value = has },
	};

	footprint_policy_typed(&e);
	snprintf(text, sizeof(text), "%lld..%lld%s", (long long)e.v.min,
		 (long long)e.v.max, e.v.has_value == SH_FP_KEPT ? "" : "?");
	return text;
}

/*
 * Value ranges keep the option's type: an unsigned option's values are
 * unsigned in the footprint, the proposal, a merge and what validate
 * reads, and a recording is never lost to its range.
 */
static void test_typed(void)
{
	static struct footprint back;
	const struct sh_policy *p;
	struct json_object *prov;
	struct sh_error err = { 0 };
	struct sh_config cfg;
	const char *why = "";
	int r;

	/* SO_MARK (36) as an older hook's programs noted 0 and 0xffffffff. */
	is_str(typed(-1, 0, SH_FP_RAW, 1, 36), "0..4294967295",
	       "SO_MARK noted as given, -1..0: 0..4294967295");
	is_str(typed(-2, -1, SH_FP_RAW, 1, 36), "4294967294..4294967295",
	       "SO_MARK -2..-1 as given: the top of the u32 range");
	is_str(typed(0, 4294967295LL, SH_FP_KEPT, 1, 36), "0..4294967295",
	       "SO_MARK as the programs note it now: as it is");
	is_str(typed(16, 256, SH_FP_RAW, 0, 1), "0..255",
	       "IP_TOS 16..256 as given: the low byte wraps, so all of it");
	is_str(typed(16, 40, SH_FP_RAW, 0, 1), "16..40",
	       "IP_TOS 16..40 as given: as it is");
	is_str(typed(-3, 7, SH_FP_RAW, 1, 18), "0..2147483647",
	       "SO_RCVLOWAT -3..7 as given: a negative one is INT_MAX");
	is_str(typed(-1, -1, SH_FP_RAW, 0, 2), "255..255",
	       "IP_TTL -1 as given: the netns default, 255");
	is_str(typed(-1, 0, SH_FP_RAW, 1, 47), "0..9223372036854775807",
	       "SO_MAX_PACING_RATE -1..0 as given: ~0U is unlimited");
	is_str(typed(9, 3, SH_FP_KEPT, 1, 36), "3..9",
	       "two CPUs' first notes raced (min above max): both values");
	is_str(typed(-7, 5, SH_FP_RAW, 1, 2999), "-7..5",
	       "an option the hook does not know: the int as given");

	/* The proposal: a clamp of SO_MARK to what was seen, that parses. */
	reset();
	add(SH_FP_SET, 1, 36, 0, SH_FP_RAW, -1, 0);
	add(SH_FP_SET, 0, 1, 0, SH_FP_KEPT, 0, 16);
	r = propose(NULL, &cfg, &why);
	ok(r == 0, "SO_MARK 0 and 0xffffffff: proposed (%s)", why);
	p = config_find_policy(&cfg, "web");
	ok(p && rule(p, 1, 36) &&
		   rule(p, 1, 36)->rule.action == SH_ACTION_CLAMP &&
		   rule(p, 1, 36)->rule.min == 0 &&
		   rule(p, 1, 36)->rule.max == 4294967295LL,
	   "SO_MARK: a clamp to 0..4294967295");
	ok(p && rule(p, 0, 1) && rule(p, 0, 1)->rule.min == 0 &&
		   rule(p, 0, 1)->rule.max == 16,
	   "IP_TOS: a clamp to 0..16");
	config_free(&cfg);

	/* A merge: 5 as the programs note it now, -1 (0xffffffff) from an
	 * older hook's recording file, which has no "values". */
	memset(&back, 0, sizeof(back));
	reset();
	add(SH_FP_SET, 1, 36, 0, SH_FP_KEPT, 5, 5);
	prov = json_object_new_object();
	footprint_json_add(prov, &fp);
	ok(footprint_json_read(prov, &back, &err) == 0, "a new file reads (%s)",
	   err.msg);
	json_object_put(prov);
	reset();
	add(SH_FP_SET, 1, 36, 0, SH_FP_RAW, -1, -1);
	prov = json_object_new_object();
	footprint_json_add(prov, &fp);
	json_object_object_del(prov, "values");
	ok(footprint_json_read(prov, &back, &err) == 0,
	   "an older file reads (%s)", err.msg);
	json_object_put(prov);
	ok(back.nr == 1 && back.e[0].v.min == 5 &&
		   back.e[0].v.max == 4294967295LL &&
		   back.e[0].v.has_value == SH_FP_KEPT,
	   "merged: SO_MARK 5..4294967295 (%lld..%lld)",
	   (long long)back.e[0].v.min, (long long)back.e[0].v.max);
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
	ok(parse_config("{\"recordings\": [{\"record\": \"web\"}]}", &cfg) == 0,
	   "a recording's provenance is a note the parser takes");
	config_free(&cfg);
	ok(parse_config_said("{\"recordings\": [1]}", &cfg, &said) < 0 &&
		   said && strstr(said, "recordings"),
	   "but only as a list of objects");
}

static void test_names(void)
{
	struct sh_attachment att = { 0 };
	char name[SH_RECORDING_FILE_MAX], other[SH_RECORDING_FILE_MAX], id[17];

	ok(names_record_ok("web-1.a_b"), "a plain record name");
	ok(!names_record_ok("../x") && !names_record_ok(".x") &&
		   !names_record_ok(""),
	   "names that could leave the directory are refused");
	strcpy(att.id, "abc/def_0123456789");
	strcpy(att.footprint, "web");
	footprint_recording_id(&att, id);
	recording_file_name(&att, name, sizeof(name));
	ok(!strncmp(name, "-_-_abc-def-0123_", 17) &&
		   !strncmp(name + 17, id, 12) && !strcmp(name + 29, ".json"),
	   "no names: '-', the id's first twelve with odd characters as '-' (%s)",
	   name);
	strcpy(att.k8s_namespace, "shop");
	strcpy(att.pod, "web-7d9f");
	strcpy(att.container, "nginx");
	recording_file_name(&att, name, sizeof(name));
	ok(!strncmp(name, "shop_web-7d9f_nginx_", 20) &&
		   !strncmp(name + 20, id, 12) && !strcmp(name + 32, ".json"),
	   "namespace, pod, container and the recording id (%s)", name);
	att.pid_start = 1;
	recording_file_name(&att, other, sizeof(other));
	ok(strcmp(name, other), "another start of the same id: another file");
}

/* What `record ID` shows of each entry (its JSON: test_json). */
static void test_entries(void)
{
	char text[SH_FOOTPRINT_TEXT_MAX];

	reset();
	add_v(SH_FP_SET, 1, 8, 0, 1, 4096, 65536, 2, 0); /* SO_RCVBUF */
	add(SH_FP_SOCK, 10, 3, 58, 0, 0, 0); /* AF_INET6 raw ICMPv6 */
	add(SH_FP_GET, 277, 4242, 0, 0, 0, 0); /* unknown level */
	footprint_json_entry_text(&fp.e[0], text, sizeof(text));
	is_str(text,
	       "setsockopt SOL_SOCKET SO_RCVBUF count 2 values 4096..65536",
	       "text: call, level, option, count, values");
	footprint_json_entry_text(&fp.e[1], text, sizeof(text));
	is_str(text, "socket AF_INET6 SOCK_RAW IPPROTO_ICMPV6 count 1",
	       "text: a socket by family, type and protocol");
	footprint_json_entry_text(&fp.e[2], text, sizeof(text));
	is_str(text, "getsockopt 277 4242 count 1",
	       "text: unnamed level and option as numbers");
	footprint_json_entry_text(&fp.e[0], text, 12);
	ok(strlen(text) < 12, "a short buffer is never overrun");
}

int main(void)
{
	test_policy();
	test_running();
	test_inexpressible();
	test_unparsable();
	test_json();
	test_typed();
	test_entries();
	test_config();
	test_names();
	return tap_done();
}
