// SPDX-License-Identifier: GPL-2.0-only
/*
 * counters.c, how audit mode's counters read: "would deny SOL_SOCKET
 * SO_MARK (setsockopt)", socket rules by family, type and protocol, misses
 * of an allow-list, the overflow slots, and the same as labels and JSON.
 * Reading the counters from the programs' maps needs BPF: 67-audit-mode.sh.
 *
 * Modules: `counters.c`
 */
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <json-c/json.h>

#include "tap.h"
#include "observe/counters.h"

static const struct audit_mode_entry deny_mark = {
	.kind = SH_PROG_SET,
	.action = "deny",
	.level = SOL_SOCKET,
	.optname = SO_MARK,
	.n = 3,
};
static const struct audit_mode_entry clamp_unknown = {
	.kind = SH_PROG_SET,
	.action = "clamp",
	.level = 277,
	.optname = 9999,
	.n = 1,
};
static const struct audit_mode_entry deny_socket = {
	.kind = SH_PROG_SOCK,
	.action = "deny",
	.socket = true,
	.level = AF_INET6,
	.optname = SOCK_RAW,
	.extra = -1,
	.n = 2,
};
static const struct audit_mode_entry miss = {
	.kind = SH_PROG_SET,
	.action = "deny",
	.miss = true,
	.level = IPPROTO_TCP,
	.optname = 13 /* TCP_CONGESTION */,
	.n = 4,
};
static const struct audit_mode_entry overflow = {
	.kind = SH_PROG_GET,
	.action = "force",
	.overflow = true,
	.n = 5,
};
static const struct audit_mode_entry overflow_miss = {
	.kind = SH_PROG_SET,
	.action = "deny",
	.overflow = true,
	.miss = true,
	.n = 6,
};

static void text_is(const struct audit_mode_entry *e, const char *want)
{
	char buf[256];

	counters_audit_text(e, buf, sizeof(buf));
	is_str(buf, want, "text: %s", want);
}

static void labels_are(const struct audit_mode_entry *e, const char *level,
		       const char *option)
{
	char l[32], o[96];

	counters_audit_level(e, l, sizeof(l));
	counters_audit_option(e, o, sizeof(o));
	ok(!strcmp(l, level) && !strcmp(o, option),
	   "labels: level '%s' option '%s' (got '%s' '%s')", level, option, l,
	   o);
}

int main(void)
{
	struct audit_mode_counts w = { 0 };
	struct json_object *arr, *o, *v;

	text_is(&deny_mark, "would deny SOL_SOCKET SO_MARK (setsockopt)");
	text_is(&clamp_unknown, "would clamp 277 9999 (setsockopt)");
	text_is(&deny_socket,
		"would deny socket AF_INET6 SOCK_RAW any (sock_create)");
	text_is(&miss,
		"would deny SOL_TCP TCP_CONGESTION (not allowed) (setsockopt)");
	text_is(&overflow, "would force by other rules (getsockopt)");
	text_is(&overflow_miss,
		"would deny other options not allowed (setsockopt)");

	labels_are(&deny_mark, "SOL_SOCKET", "SO_MARK");
	labels_are(&clamp_unknown, "277", "9999");
	labels_are(&deny_socket, "socket", "AF_INET6 SOCK_RAW any");
	labels_are(&overflow, "", "other");

	w.e[w.nr++] = deny_mark;
	w.e[w.nr++] = deny_socket;
	w.e[w.nr++] = miss;
	w.e[w.nr++] = overflow;
	ok(counters_audit_total(&w) == 3 + 2 + 4 + 5,
	   "total: the sum of the counts");
	arr = counters_audit_json(&w);
	ok(json_object_array_length(arr) == 4, "JSON: one object per entry");
	o = json_object_array_get_idx(arr, 2);
	ok(json_object_object_get_ex(o, "program", &v) &&
		   !strcmp(json_object_get_string(v), "setsockopt") &&
		   json_object_object_get_ex(o, "action", &v) &&
		   !strcmp(json_object_get_string(v), "deny") &&
		   json_object_object_get_ex(o, "level", &v) &&
		   !strcmp(json_object_get_string(v), "SOL_TCP") &&
		   json_object_object_get_ex(o, "option", &v) &&
		   !strcmp(json_object_get_string(v), "TCP_CONGESTION") &&
		   json_object_object_get_ex(o, "not_allowed", &v) &&
		   json_object_get_boolean(v) &&
		   json_object_object_get_ex(o, "count", &v) &&
		   json_object_get_uint64(v) == 4,
	   "JSON: program, action, level, option, not_allowed, count");
	json_object_put(arr);
	w.nr = 0;
	ok(counters_audit_total(&w) == 0, "no entries: 0");
	return tap_done();
}
