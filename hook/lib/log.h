/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_LOG_H
#define SH_LOG_H

#include <stddef.h>
#include <syslog.h>

#define SH_IDENT "oci-sockopt-hook"
#define SH_LOG_MSG_MAX 1024
#define SH_LOG_CONTEXT_MAX 160
#define SH_LOG_LINE_MAX (SH_LOG_CONTEXT_MAX + sizeof(": ") + SH_LOG_MSG_MAX)
/* A JSON log line: each byte of it may grow to 6 (\u00XX). */
#define SH_LOG_JSON_MAX (6 * 4096)

void log_open(int use_syslog);
void log_set_level(int priority);
/* The most verbose level written to stderr (LOG_WARNING by default). */
void log_set_stderr_level(int priority);
int log_level_from_name(const char *name);
int log_set_file(const char *path);
/* log_file lines: text (the default), or one JSON object per line. */
enum log_format {
	LOG_FORMAT_TEXT,
	LOG_FORMAT_JSON,
};
void log_set_format(enum log_format format);
enum log_format log_get_format(void);
int log_format_from_name(const char *name);
/* Appends line (with its '\n') to the log file, if any, in one write(2):
 * concurrent hooks never interleave. For events.c, whose lines are written
 * whatever the log level. */
void log_file_write(const char *line, size_t len);
/* The same for a text line: it gains the time, ident, pid and level. */
void log_file_line(int priority, const char *line);
/* The same for a JSON object: it gains time, level, ident and pid. */
struct json_object;
void log_file_json(int priority, struct json_object *obj);
/* The context (log_set_context()) and syslog, as events.c needs them. */
const char *log_get_context(void);
void log_syslog(int priority, const char *line);
void log_set_context(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void log_msg(int priority, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * For a process about to close every fd it does not know about (the
 * reaper): disconnects from syslog, and returns the log file's fd (or -1),
 * which it must keep. log_open() then reconnects.
 */
int log_detach(void);
/*
 * Untrusted text (annotation keys and values, container names, ids) for a
 * log line: in single quotes, with quotes, backslashes, control and
 * non-ASCII bytes escaped, and at most SH_LOG_QUOTE_MAX bytes of it shown
 * ("'first bytes'... (N bytes)"). LOG_Q(text) gives a buffer that lives
 * until the end of the enclosing block: use it in the log call itself.
 */
#define SH_LOG_QUOTE_MAX 64
struct log_quoted {
	char text[SH_LOG_QUOTE_MAX * 4 + 48];
};
const char *log_quote(struct log_quoted *buf, const char *text);
#define LOG_Q(text) log_quote(&(struct log_quoted){ { 0 } }, (text))
/* msg as a log line shows it: after the context, if any. For commands
 * that print an error on stdout too. */
void log_line(char *buf, size_t len, const char *msg);
void log_close(void);

#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* From now on, libbpf's warnings and information are debug lines in our
 * log, and its debug output is dropped (about 130 lines per load). */
void log_libbpf_route(void);

#endif /* SH_LOG_H */
