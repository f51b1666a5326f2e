// SPDX-License-Identifier: GPL-2.0-only
/*
 * log.c: untrusted text quoted for a log line (log_quote), one line on
 * stderr for errors and warnings, the log file's text and JSON lines, and
 * which files it refuses to write.
 *
 * Modules: `log.c`
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>

#include "helpers.h"
#include "lib/log.h"
#include "tap.h"

static void quotes(const char *text, const char *want, const char *what)
{
	struct log_quoted q;

	is_str(log_quote(&q, text), want, "log_quote: %s", what);
}

static void test_quote(void)
{
	char in[SH_LOG_QUOTE_MAX + 2], want[SH_LOG_QUOTE_MAX + 64];
	struct log_quoted q;

	quotes("web", "'web'", "plain text in single quotes");
	quotes("", "''", "the empty string");
	quotes("it's", "'it\\'s'", "a quote is escaped");
	quotes("a\\b", "'a\\\\b'", "a backslash is escaped");
	quotes("a\nb\tc\r", "'a\\nb\\tc\\r'", "newline, tab and CR by name");
	quotes("\x1b[31m", "'\\x1b[31m'", "an escape byte in hex");
	quotes("caf\xc3\xa9", "'caf\\xc3\\xa9'", "non-ASCII bytes in hex");
	quotes("\x7f", "'\\x7f'", "DEL in hex");

	memset(in, 'x', SH_LOG_QUOTE_MAX);
	in[SH_LOG_QUOTE_MAX] = '\0';
	snprintf(want, sizeof(want), "'%s'", in);
	quotes(in, want, "64 bytes shown whole");
	in[SH_LOG_QUOTE_MAX] = 'y';
	in[SH_LOG_QUOTE_MAX + 1] = '\0';
	in[SH_LOG_QUOTE_MAX] = '\0';
	snprintf(want, sizeof(want), "'%s'... (65 bytes)", in);
	in[SH_LOG_QUOTE_MAX] = 'y';
	quotes(in, want, "65 bytes: the first 64 and the length");

	/* The worst case, every byte as \xNN, fits the buffer. */
	memset(in, 0xff, SH_LOG_QUOTE_MAX + 1);
	in[SH_LOG_QUOTE_MAX + 1] = '\0';
	log_quote(&q, in);
	ok(strlen(q.text) < sizeof(q.text) &&
		   strstr(q.text, "\\xff'... (65 bytes)"),
	   "65 bytes of 0xff: 64 in hex, then the length, in the buffer");
	ok(!strchr(LOG_Q("a\nb"), '\n'), "LOG_Q: no newline survives");
}

static void test_names(void)
{
	ok(log_level_from_name("error") == LOG_ERR &&
		   log_level_from_name("warning") == LOG_WARNING &&
		   log_level_from_name("info") == LOG_INFO &&
		   log_level_from_name("debug") == LOG_DEBUG,
	   "the four level names");
	ok(log_level_from_name("warn") == -EINVAL &&
		   log_level_from_name("ERROR") == -EINVAL &&
		   log_level_from_name("") == -EINVAL,
	   "anything else is -EINVAL (no prefix, no case folding)");
	ok(log_format_from_name("text") == LOG_FORMAT_TEXT &&
		   log_format_from_name("json") == LOG_FORMAT_JSON,
	   "the two formats");
	ok(log_format_from_name("JSON") == -EINVAL &&
		   log_format_from_name("xml") == -EINVAL,
	   "another format is -EINVAL");
}

static bool matches(const char *text, const char *pattern)
{
	regex_t re;
	bool m;

	if (regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE | REG_NOSUB))
		return false;
	m = regexec(&re, text, 0, NULL, 0) == 0;
	regfree(&re);
	return m;
}

static void test_stderr(void)
{
	const char *said;

	log_set_level(LOG_INFO);
	log_set_context("container %s", "c1");
	capture_start();
	log_error("cannot %s", "attach");
	said = capture_end();
	is_str(said, "oci-sockopt-hook: container c1: cannot attach\n",
	       "an error: one stderr line, ident, context, message");

	capture_start();
	log_warn("two\nlines\rhere");
	said = capture_end();
	is_str(said,
	       "oci-sockopt-hook: warning: container c1: two lines here\n",
	       "a warning says so; newlines and CRs become spaces");

	capture_start();
	log_info("quiet");
	log_debug("quieter");
	said = capture_end();
	is_str(said, "", "info and debug never reach stderr");

	log_set_context("%s", "");
	capture_start();
	log_error("bare");
	said = capture_end();
	is_str(said, "oci-sockopt-hook: bare\n", "no context: no ': ' prefix");
}

static void test_file_text(void)
{
	char *text, *long_msg;
	int n = 0;

	ok(log_set_file(TMP_PATH("hook.log")) == 0, "log_set_file: a new file");
	log_set_format(LOG_FORMAT_TEXT);
	log_set_level(LOG_INFO);
	log_set_context("container c2");
	capture_start();
	log_error("denied");
	log_info("attached");
	log_debug("not at level info");
	capture_end();
	log_set_level(LOG_DEBUG);
	log_debug("at level debug");
	long_msg = malloc(4000);
	memset(long_msg, 'z', 3999);
	long_msg[3999] = '\0';
	log_info("%s", long_msg);
	free(long_msg);
	log_close();

	text = read_file(TMP_PATH("hook.log"));
	ok(text && matches(text,
			   "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z "
			   "oci-sockopt-hook\\[[0-9]+\\] error: container c2: denied$"),
	   "a text line: UTC time, ident[pid], level, context, message");
	ok(text && matches(text, "\\] info: container c2: attached$"),
	   "info reaches the file");
	ok(text && !strstr(text, "not at level info") &&
		   strstr(text, "] debug: container c2: at level debug\n"),
	   "the level filters the file too");
	for (const char *p = text; p && *p; p++)
		n += *p == '\n';
	ok(n == 4, "one line per message, a long one cut, still one line (%d)",
	   n);
	ok(text && matches(text, "z{100}$"), "the long line ends in a newline");
	free(text);
}

static void test_file_json(void)
{
	struct json_object *obj, *v;
	char *text, *nl;
	bool ascii = true;

	ok(log_set_file(TMP_PATH("json.log")) == 0, "log_set_file: json file");
	log_set_format(LOG_FORMAT_JSON);
	log_set_level(LOG_INFO);
	log_set_context("container \"q\"");
	capture_start();
	log_warn("caf\xc3\xa9 \x01");
	capture_end();
	log_close();
	log_set_format(LOG_FORMAT_TEXT);

	text = read_file(TMP_PATH("json.log"));
	nl = text ? strchr(text, '\n') : NULL;
	ok(nl && nl[1] == '\0', "one JSON line");
	for (const char *p = text; p && *p; p++)
		ascii = ascii && (unsigned char)*p < 0x80;
	ok(ascii, "the line is ASCII: non-ASCII bytes as \\u00XX");
	obj = text ? json_tokener_parse(text) : NULL;
	ok(obj != NULL, "the line parses as JSON");
	ok(json_object_object_get_ex(obj, "context", &v) &&
		   !strcmp(json_object_get_string(v), "container \"q\""),
	   "context kept apart, quotes intact");
	ok(json_object_object_get_ex(obj, "message", &v) &&
		   !strcmp(json_object_get_string(v),
			   "caf\xc3\x83\xc2\xa9 \x01"),
	   "message: each byte >= 0x80 read back as U+00XX, control bytes escaped");
	ok(json_object_object_get_ex(obj, "level", &v) &&
		   !strcmp(json_object_get_string(v), "warning") &&
		   json_object_object_get_ex(obj, "ident", &v) &&
		   !strcmp(json_object_get_string(v), "oci-sockopt-hook") &&
		   json_object_object_get_ex(obj, "pid", &v) &&
		   json_object_get_int(v) == getpid() &&
		   json_object_object_get_ex(obj, "time", &v),
	   "level, ident, pid and time");
	json_object_put(obj);
	free(text);
	log_set_context("%s", "");
}

static void test_file_refused(void)
{
	ok(symlink(TMP_PATH("target.log"), TMP_PATH("link.log")) == 0,
	   "a symbolic link to a log file");
	ok(log_set_file(TMP_PATH("link.log")) == -ELOOP,
	   "log_set_file refuses a symbolic link (-ELOOP)");
	ok(access(TMP_PATH("target.log"), F_OK) < 0,
	   "... and creates nothing through it");
	ok(mkfifo(TMP_PATH("fifo"), 0600) == 0, "a FIFO");
	/* Opened non-blocking with no reader: ENXIO, never a hang. */
	ok(log_set_file(TMP_PATH("fifo")) < 0, "log_set_file refuses a FIFO");
	ok(log_set_file(unit_dir) == -EISDIR, "and a directory (-EISDIR)");
	ok(log_set_file(TMP_PATH("no/such/dir.log")) == -ENOENT,
	   "and a path in a missing directory (-ENOENT)");
	ok(log_set_file("/dev/null") == -EINVAL,
	   "and a device (-EINVAL: regular files only)");
	log_close();
}

int main(void)
{
	tmpdir_make();
	test_quote();
	test_names();
	test_stderr();
	test_file_text();
	test_file_json();
	test_file_refused();
	return tap_done();
}
