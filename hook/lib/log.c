// SPDX-License-Identifier: GPL-2.0-only
/*
 * One reporter for the whole binary. Errors and warnings go to stderr as a
 * single line, because runc puts the hook's stderr in its own error; every
 * message also goes to syslog/journald and to an optional file, because
 * crun and podman may throw stderr away.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/jsonw.h"
#include "lib/log.h"

static int max_priority = LOG_INFO;
static int stderr_priority = LOG_WARNING;
static int syslog_on;
static int log_fd = -1;
static enum log_format log_format = LOG_FORMAT_TEXT;
static char context[SH_LOG_CONTEXT_MAX];

void log_open(int use_syslog)
{
	syslog_on = use_syslog;
	/* No LOG_NDELAY: the socket is connected at the first message, and a
	 * run with nothing to say (nothing to attach) never opens it. */
	if (syslog_on)
		openlog(SH_IDENT, LOG_PID, LOG_DAEMON);
}

void log_set_level(int priority)
{
	max_priority = priority;
}

int log_level_from_name(const char *name)
{
	static const struct {
		const char *name;
		int priority;
	} levels[] = {
		{ "error", LOG_ERR },
		{ "warning", LOG_WARNING },
		{ "info", LOG_INFO },
		{ "debug", LOG_DEBUG },
	};

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (!strcmp(levels[i].name, name))
			return levels[i].priority;
	return -EINVAL;
}

/* Not through a symlink, and never a FIFO or a device that could block
 * or swallow the hook: regular files only. */
int log_set_file(const char *path)
{
	int fd = open(path,
		      O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
			      O_NONBLOCK,
		      0640);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (log_fd >= 0)
		close(log_fd);
	log_fd = fd;
	return 0;
}

void log_set_format(enum log_format format)
{
	log_format = format;
}

enum log_format log_get_format(void)
{
	return log_format;
}

int log_format_from_name(const char *name)
{
	if (!strcmp(name, "text"))
		return LOG_FORMAT_TEXT;
	if (!strcmp(name, "json"))
		return LOG_FORMAT_JSON;
	return -EINVAL;
}

const char *log_get_context(void)
{
	return context;
}

void log_syslog(int priority, const char *line)
{
	if (syslog_on)
		syslog(priority, "%s", line);
}

void log_set_context(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(context, sizeof(context), fmt, ap);
	va_end(ap);
}

/* One byte as the C source would spell it inside quotes. */
static size_t quote_byte(char *out, unsigned char c)
{
	static const char named[] = "\a\b\t\n\v\f\r";
	static const char letters[] = "abtnvfr";

	if (c == '\'' || c == '\\')
		return (size_t)sprintf(out, "\\%c", c);
	if (c >= 0x20 && c < 0x7f)
		return (size_t)sprintf(out, "%c", c);
	for (size_t i = 0; i < sizeof(letters) - 1; i++)
		if (named[i] == (char)c)
			return (size_t)sprintf(out, "\\%c", letters[i]);
	return (size_t)sprintf(out, "\\x%02x", c);
}

const char *log_quote(struct log_quoted *buf, const char *text)
{
	size_t len = strlen(text), used = 0;
	char *out = buf->text;

	out[used++] = '\'';
	for (size_t i = 0; i < len && i < SH_LOG_QUOTE_MAX; i++)
		used += quote_byte(out + used, (unsigned char)text[i]);
	out[used++] = '\'';
	out[used] = '\0';
	if (len > SH_LOG_QUOTE_MAX)
		snprintf(out + used, sizeof(buf->text) - used,
			 "... (%zu bytes)", len);
	return out;
}

static const char *priority_name(int priority)
{
	switch (priority) {
	case LOG_ERR:
		return "error";
	case LOG_WARNING:
		return "warning";
	case LOG_NOTICE:
		return "notice";
	case LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

static void time_stamp(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
}

void log_file_write(const char *line, size_t len)
{
	/* O_APPEND: one write(2) lands whole, after every other one. A
	 * short write (a full disk) is not worth failing the hook for. */
	if (log_fd >= 0 && write(log_fd, line, len) < 0)
		return;
}

/* Bytes >= 0x80 only occur inside strings: as \u00XX they stay JSON and
 * make it ASCII, whatever untrusted text carried. */
static size_t ascii_json(char *out, size_t len, const char *text)
{
	size_t used = 0;

	for (; *text && used + 8 < len; text++) {
		unsigned char c = (unsigned char)*text;

		if (c < 0x80)
			out[used++] = (char)c;
		else
			used += (size_t)snprintf(out + used, len - used,
						 "\\u%04x", c);
	}
	out[used++] = '\n';
	return used;
}

void log_file_json(int priority, struct json_object *obj)
{
	char stamp[32], line[SH_LOG_JSON_MAX];

	if (log_fd < 0)
		return;
	time_stamp(stamp, sizeof(stamp));
	jsonw_str(obj, "time", stamp);
	jsonw_str(obj, "level", priority_name(priority));
	jsonw_str(obj, "ident", SH_IDENT);
	jsonw_int(obj, "pid", getpid());
	log_file_write(
		line,
		ascii_json(line, sizeof(line),
			   json_object_to_json_string_ext(
				   obj,
				   JSON_C_TO_STRING_PLAIN |
					   JSON_C_TO_STRING_NOSLASHESCAPE)));
}

void log_file_line(int priority, const char *line)
{
	char stamp[32], text[SH_LOG_LINE_MAX + 96];
	int n;

	if (log_fd < 0)
		return;
	time_stamp(stamp, sizeof(stamp));
	n = snprintf(text, sizeof(text), "%s %s[%d] %s: %s\n", stamp, SH_IDENT,
		     getpid(), priority_name(priority), line);
	if (n >= (int)sizeof(text)) {
		n = (int)sizeof(text) - 1;
		text[n - 1] = '\n';
	}
	if (n > 0)
		log_file_write(text, (size_t)n);
}

/* line is msg after the context: JSON keeps them apart. */
static void write_log_file(int priority, const char *msg, const char *line)
{
	struct json_object *obj;

	if (log_format == LOG_FORMAT_JSON) {
		obj = json_object_new_object();
		if (!obj)
			return;
		if (*context)
			jsonw_str(obj, "context", context);
		jsonw_str(obj, "message", msg);
		log_file_json(priority, obj);
		json_object_put(obj);
		return;
	}
	log_file_line(priority, line);
}

/* A daemon (the NRI plugin) shows info lines too: journald keeps its
 * stderr. A hook shows warnings and errors, which runc passes on. */
void log_set_stderr_level(int priority)
{
	stderr_priority = priority;
}

void log_msg(int priority, const char *fmt, ...)
{
	char msg[SH_LOG_MSG_MAX], line[SH_LOG_LINE_MAX];
	va_list ap;

	if (priority > max_priority)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Keep it one line, whatever the input carried. */
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	log_line(line, sizeof(line), msg);
	if (priority <= stderr_priority)
		fprintf(stderr, "%s: %s%s\n", SH_IDENT,
			priority == LOG_WARNING ? "warning: " : "", line);
	if (syslog_on)
		syslog(priority, "%s", line);
	if (log_fd >= 0)
		write_log_file(priority, msg, line);
}

int log_detach(void)
{
	if (syslog_on)
		closelog();
	return log_fd;
}

void log_line(char *buf, size_t len, const char *msg)
{
	snprintf(buf, len, "%s%s%s", context, *context ? ": " : "", msg);
}

void log_close(void)
{
	if (syslog_on)
		closelog();
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
}

/*
 * libbpf's own messages go to our log at debug level, not to stderr:
 * stderr carries one line, the error if any (runtimes show it to users).
 */

static int libbpf_to_log(enum libbpf_print_level level, const char *fmt,
			 va_list ap) __attribute__((format(printf, 2, 0)));

static int libbpf_to_log(enum libbpf_print_level level, const char *fmt,
			 va_list ap)
{
	char buf[4096], *line, *save = NULL;

	/* libbpf's debug level is ~130 lines per load: keep its warnings
	 * (verifier logs among them) and information only. */
	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		log_debug("%s", line);
	return 0;
}

void log_libbpf_route(void)
{
	libbpf_set_print(libbpf_to_log);
}
