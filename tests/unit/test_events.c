// SPDX-License-Identifier: GPL-2.0-only
/*
 * Audit lines: journald's native encoding, the reason and cause that a
 * refusal carries, and the JSON line that log_format "json" writes.
 *
 * Modules: `events.c`
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "observe/events.h"
#include "helpers.h"
#include "input/oci.h"
#include "lib/log.h"
#include "policy/policy.h"
#include "tap.h"

static void test_journal_plain(void)
{
	struct journal_msg m = { 0 };
	static const char want[] = "MESSAGE=hello\nOCI_SOCKOPT_HOOK_POD=web\n";

	ok(events_journal_add(&m, "MESSAGE", "hello") == 0 &&
		   events_journal_add(&m, "OCI_SOCKOPT_HOOK_POD", "web") == 0,
	   "two plain fields are added");
	ok(m.used == sizeof(want) - 1 && !memcmp(m.buf, want, m.used),
	   "as KEY=value lines");
	ok(events_journal_add(&m, "OCI_SOCKOPT_HOOK_SETTING", "") == 0 &&
		   events_journal_add(&m, "OCI_SOCKOPT_HOOK_SETTING", NULL) ==
			   0 &&
		   m.used == sizeof(want) - 1,
	   "an empty or missing value adds nothing");
}

static void test_journal_binary(void)
{
	struct journal_msg m = { 0 };
	static const char want[] = "OCI_SOCKOPT_HOOK_SETTING\n"
				   "\x05\0\0\0\0\0\0\0"
				   "a\nb=c\n";

	ok(events_journal_add(&m, "OCI_SOCKOPT_HOOK_SETTING", "a\nb=c") == 0,
	   "a value with a newline is added");
	ok(m.used == sizeof(want) - 1 && !memcmp(m.buf, want, m.used),
	   "as KEY, newline, 64-bit little-endian length, value, newline");
}

static void test_journal_keys(void)
{
	struct journal_msg m = { 0 };

	ok(events_journal_add(&m, "message", "x") == -EINVAL,
	   "a lower-case key");
	ok(events_journal_add(&m, "_PID", "1") == -EINVAL,
	   "a trusted field ('_' first)");
	ok(events_journal_add(&m, "A=B", "x") == -EINVAL, "a key with '='");
	ok(events_journal_add(&m, "", "x") == -EINVAL, "an empty key");
	ok(m.used == 0, "a refused key adds nothing");
}

static void test_journal_full(void)
{
	struct journal_msg *m = calloc(1, sizeof(*m));
	char *big = malloc(SH_JOURNAL_MSG_MAX);
	size_t before;

	if (!m || !big)
		abort();
	memset(big, 'x', SH_JOURNAL_MSG_MAX - 1);
	big[SH_JOURNAL_MSG_MAX - 1] = '\0';
	events_journal_add(m, "MESSAGE", "short");
	before = m->used;
	ok(events_journal_add(m, "BIG", big) == -ENOSPC && m->used == before &&
		   m->overflow,
	   "a field that does not fit: -ENOSPC, nothing half-written");
	ok(events_journal_send(m) == -EINVAL, "and the message is not sent");
	free(big);
	free(m);
}

/* A field is cut before it is added, never dropped whole. */
static void test_journal_cut(void)
{
	struct journal_msg *m = calloc(1, sizeof(*m));
	static const char want[] = "POD=abc...\nSETTING\n"
				   "\x06\0\0\0\0\0\0\0"
				   "a\nb...\nSHORT=ab\n";
	char *big = malloc(2 * SH_JOURNAL_MSG_MAX);
	int r = 0;

	if (!m || !big)
		abort();
	ok(events_journal_add_cut(m, "POD", "abcdef", 3) == 0 &&
		   events_journal_add_cut(m, "SETTING", "a\nbcdef", 3) == 0 &&
		   events_journal_add_cut(m, "SHORT", "ab", 2) == 0,
	   "values longer than the cut are added");
	ok(m->used == sizeof(want) - 1 && !memcmp(m->buf, want, m->used),
	   "cut, with '...' after a cut value (binary form counted with it)");
	memset(big, 'x', 2 * SH_JOURNAL_MSG_MAX - 1);
	big[2 * SH_JOURNAL_MSG_MAX - 1] = '\0';
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < 10 && !r; i++)
		r = events_journal_add_cut(m, "BIG", big, 256);
	ok(r == 0 && !m->overflow && m->used == 10 * (4 + 256 + 3 + 1),
	   "ten fields of 16 KiB, each cut to 256 bytes, all fit");
	free(big);
	free(m);
}

/* policy_resolve on a state with these annotations. */
static int resolve(const char *cfg_text, const char *annotations,
		   struct sh_error *err)
{
	char text[2048];
	struct sh_effective eff;
	struct sh_container c;
	struct oci_state st;
	struct sh_config cfg;
	int r;

	snprintf(text, sizeof(text),
		 "{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":"
		 "\"creating\",\"pid\":1,\"annotations\":{%s}}",
		 annotations);
	if (parse_config(cfg_text, &cfg))
		return -100;
	container_of_state(text, &st, &c);
	r = policy_resolve(&cfg, &c, &eff, err);
	oci_state_free(&st);
	config_free(&cfg);
	return r;
}

#define POLICIES "\"policies\":{\"bulk\":{},\"web\":{}}"
#define APP "\"io.kubernetes.cri.container-name\":\"app\","

static void refused_with(const char *cfg, const char *annotations,
			 const char *reason, const char *key,
			 const char *setting, const char *what)
{
	struct sh_error err = { 0 };
	int r = resolve(cfg, annotations, &err);

	ok(r < 0 && !strcmp(error_reason_text(&err), reason) &&
		   !strcmp(err.cause.annotation, key) &&
		   !strcmp(err.cause.setting, setting),
	   "%s: %s, annotation %s, setting '%s'", what, reason, key, setting);
	if (r >= 0 || strcmp(error_reason_text(&err), reason))
		printf("#   got %d %s '%s' '%s'\n", r, error_reason_text(&err),
		       err.cause.annotation, err.cause.setting);
}

static void test_reasons(void)
{
	refused_with("{" POLICIES ",\"annotations\":{\"allow_policies\":"
		     "[\"bulk\"]}}",
		     "\"sockopt-hook.io/policy\":\"web\"", "policy_not_allowed",
		     "sockopt-hook.io/policy", "web", "a policy not allowed");
	refused_with("{" POLICIES ",\"annotations\":{\"allow_policies\":"
		     "[\"bulk\"]}}",
		     "\"sockopt-hook.io/policy\":\"nope\"", "policy_unknown",
		     "sockopt-hook.io/policy", "nope", "an unknown policy");
	refused_with("{" POLICIES ",\"annotations\":{\"allow_policies\":"
		     "[\"bulk\"]}}",
		     APP "\"sockopt-hook.io/containers.policy\":\"app=web\"",
		     "policy_not_allowed",
		     "sockopt-hook.io/containers.policy[app]", "web",
		     "a policy not allowed, from the containers list");
	refused_with("{" POLICIES "}",
		     APP "\"sockopt-hook.io/bypass-prot-mem.app\":\"yes\"",
		     "annotation_invalid",
		     "sockopt-hook.io/bypass-prot-mem.app", "yes",
		     "a bad bypass value, container-scoped");
	refused_with("{" POLICIES "}",
		     APP "\"sockopt-hook.io/containers.policy\":\"app\"",
		     "annotation_invalid", "sockopt-hook.io/containers.policy",
		     "app", "a list without '='");
	refused_with("{\"annotations\":{\"allow_bypass_prot_mem\":false}}",
		     "\"sockopt-hook.io/bypass-prot-mem\":\"true\"",
		     "bypass_not_allowed", "sockopt-hook.io/bypass-prot-mem",
		     "true", "bypass not allowed");
	refused_with("{}", "\"io.kubernetes.cri.container-name\":\"-x\"",
		     "annotation_invalid", "io.kubernetes.cri.container-name",
		     "-x", "a container name that is no name");
}

static void test_unclassified(void)
{
	struct sh_error err = { 0 };

	is_str(error_reason_text(&err), "error",
	       "an error no site classified: 'error'");
	error_reason(&err, SH_REASON_POLICY_UNKNOWN);
	error_reason(&err, SH_REASON_ATTACH_FAILED);
	is_str(error_reason_text(&err), "policy_unknown",
	       "the first reason set stays");
	error_cause(&err, "k", "v");
	error_cause(&err, "k2", "v2");
	ok(!strcmp(err.cause.annotation, "k") &&
		   !strcmp(err.cause.setting, "v"),
	   "the first cause set stays");
}

#define FIELD(k) (json_path(obj, k) ?: "")

static void test_json_line(void)
{
	struct sh_error err = { 0 };
	struct oci_state st;
	struct sh_container c;
	struct json_object *obj = NULL;
	static const char state[] =
		"{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\","
		"\"pid\":1,\"annotations\":{"
		"\"io.kubernetes.cri.container-type\":\"container\","
		"\"io.kubernetes.cri.container-name\":\"app\","
		"\"io.kubernetes.cri.sandbox-name\":\"web\","
		"\"io.kubernetes.cri.sandbox-namespace\":\"shop\"}}";
	char *text;

	container_of_state(state, &st, &c);
	log_capture_begin(LOG_FORMAT_JSON);
	error_reason(&err, SH_REASON_POLICY_UNKNOWN);
	error_cause(&err, "sockopt-hook.io/policy", "n\"o\npe\xff");
	error_set(&err, -ENOENT, "no such policy");
	events_refusal("prestart", &c, &err, -ENOENT);
	text = log_capture_end();
	ok(strlen(text) > 0 && strchr(text, '\n') == text + strlen(text) - 1,
	   "one line");
	ok(!strpbrk(text, "\x80\xff"), "in ASCII");
	obj = json_tokener_parse(text);
	ok(obj && json_object_is_type(obj, json_type_object), "a JSON object");
	is_str(FIELD("event"), "refused", "event refused");
	is_str(FIELD("reason"), "policy_unknown", "its reason");
	is_str(FIELD("container_id"), "c1", "the container id");
	is_str(FIELD("namespace"), "shop", "the namespace");
	is_str(FIELD("pod"), "web", "the pod");
	is_str(FIELD("container"), "app", "the container");
	is_str(FIELD("annotation"), "sockopt-hook.io/policy", "the annotation");
	is_str(FIELD("setting"), "n\"o\\x0ape\\xff",
	       "the setting, its control and non-ASCII bytes as \\xNN");
	is_str(FIELD("message"), "no such policy", "the message");
	is_str(FIELD("stage"), "prestart", "the stage");
	is_str(FIELD("level"), "notice",
	       "level notice: the error line before it has the error");
	if (obj)
		json_object_put(obj);
	else
		printf("#   got: %s", text);
	free(text);
	oci_state_free(&st);
}

/* A fallback: one "fallback" line at notice level, in text and in JSON,
 * with the reason's own message. */
static void test_fallback(void)
{
	struct sh_cause cause = { .annotation =
					  "sockopt-hook.io/bypass-prot-mem",
				  .setting = "true" };
	struct oci_state st;
	struct sh_container c;
	struct json_object *obj = NULL;
	static const char state[] =
		"{\"ociVersion\":\"1.0.2\",\"id\":\"c2\",\"status\":\"creating\",\"pid\":1}";
	char *text;

	container_of_state(state, &st, &c);
	log_capture_begin(LOG_FORMAT_TEXT);
	events_fallback("prestart", &c, SH_REASON_BYPASS_PROT_MEM_UNSUPPORTED,
			&cause);
	text = log_capture_end();
	ok(strstr(text,
		  " notice: event=fallback reason=bypass_prot_mem_unsupported") &&
		   strstr(text,
			  " annotation='sockopt-hook.io/bypass-prot-mem' setting='true'") &&
		   strchr(text, '\n') == text + strlen(text) - 1,
	   "a fallback in text: one notice line, its reason and what asked");
	if (!strstr(text, "event=fallback"))
		tap_diag("  got: %s", text);
	free(text);

	log_capture_begin(LOG_FORMAT_JSON);
	events_fallback("prestart", &c, SH_REASON_NONE, &cause);
	text = log_capture_end();
	obj = json_tokener_parse(text);
	is_str(FIELD("event"), "fallback",
	       "a fallback in JSON: event fallback");
	is_str(FIELD("reason"), "error", "no reason: \"error\"");
	is_str(FIELD("message"), "started with less than its policy asks for",
	       "the general message");
	is_str(FIELD("annotation"), "sockopt-hook.io/bypass-prot-mem",
	       "the annotation that asked");
	is_str(FIELD("container_id"), "c2", "the container id");
	if (obj)
		json_object_put(obj);
	free(text);
	oci_state_free(&st);
}

static void test_log_format(void)
{
	struct sh_config cfg;

	ok(parse_config("{}", &cfg) == 0 && cfg.log_format == LOG_FORMAT_TEXT,
	   "log_format: text by default");
	config_free(&cfg);
	ok(parse_config("{\"log_format\":\"json\"}", &cfg) == 0 &&
		   cfg.log_format == LOG_FORMAT_JSON,
	   "log_format json");
	config_free(&cfg);
	config_refused("{\"log_format\":\"xml\"}",
		       "log_format: unknown value 'xml'", "log_format xml");
	config_refused("{\"log_format\":true}", "log_format: must be a string",
		       "log_format true");
}

int main(void)
{
	test_log_format();
	test_journal_plain();
	test_journal_binary();
	test_journal_keys();
	test_journal_full();
	test_journal_cut();
	test_reasons();
	test_unclassified();
	test_json_line();
	test_fallback();
	return tap_done();
}
