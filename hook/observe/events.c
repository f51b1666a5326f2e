// SPDX-License-Identifier: GPL-2.0-only
/*
 * Audit lines (audit.h). Most fields are untrusted: the workload wrote
 * the annotations, and with them the names. In log_file they are
 * escaped to printable ASCII (\xNN) and cut at SH_AUDIT_VALUE_MAX bytes;
 * journald gets them as they are (cut at the same length, "..." after a
 * cut), in its binary-safe form when they hold a newline; syslog gets the
 * text line when journald is absent or does not take the record.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "observe/events.h"

#define SH_AUDIT_VALUE_MAX 256
#define SH_AUDIT_FIELDS 10

enum audit_field {
	F_EVENT,
	F_REASON,
	F_CONTAINER_ID,
	F_NAMESPACE,
	F_POD,
	F_CONTAINER,
	F_ANNOTATION,
	F_SETTING,
	F_STAGE,
	F_BUNDLE,
};

/* The JSON key; the journald field is OCI_SOCKOPT_HOOK_<KEY>. */
static const char *const names[SH_AUDIT_FIELDS][2] = {
	[F_EVENT] = { "event", "OCI_SOCKOPT_HOOK_EVENT" },
	[F_REASON] = { "reason", "OCI_SOCKOPT_HOOK_REASON" },
	[F_CONTAINER_ID] = { "container_id", "OCI_SOCKOPT_HOOK_CONTAINER_ID" },
	[F_NAMESPACE] = { "namespace", "OCI_SOCKOPT_HOOK_NAMESPACE" },
	[F_POD] = { "pod", "OCI_SOCKOPT_HOOK_POD" },
	[F_CONTAINER] = { "container", "OCI_SOCKOPT_HOOK_CONTAINER" },
	[F_ANNOTATION] = { "annotation", "OCI_SOCKOPT_HOOK_ANNOTATION" },
	[F_SETTING] = { "setting", "OCI_SOCKOPT_HOOK_SETTING" },
	[F_STAGE] = { "stage", "OCI_SOCKOPT_HOOK_STAGE" },
	[F_BUNDLE] = { "bundle", "OCI_SOCKOPT_HOOK_BUNDLE" },
};

struct audit_event {
	int priority;
	const char *value[SH_AUDIT_FIELDS]; /* NULL or "": not known */
	const char *message;
};

struct audit_clean {
	char text[SH_AUDIT_VALUE_MAX * 4 + 4];
};

/* Printable ASCII as it is, any other byte as \xNN; "..." when cut. */
static const char *clean(struct audit_clean *buf, const char *text)
{
	size_t used = 0, i;

	for (i = 0; text[i] && i < SH_AUDIT_VALUE_MAX; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c >= 0x20 && c < 0x7f)
			buf->text[used++] = (char)c;
		else
			used += (size_t)sprintf(buf->text + used, "\\x%02x", c);
	}
	buf->text[used] = '\0';
	if (text[i])
		strcat(buf->text, "...");
	return buf->text;
}

static void to_json(const struct audit_event *ev)
{
	_cleanup_json_ struct json_object *obj = json_object_new_object();
	struct audit_clean buf;

	if (!obj)
		return;
	for (int f = 0; f < SH_AUDIT_FIELDS; f++)
		json_object_object_add(
			obj, names[f][0],
			json_object_new_string(
				clean(&buf, ev->value[f] ? ev->value[f] : "")));
	jsonw_str(obj, "message", ev->message);
	log_file_json(ev->priority, obj);
}

/* event=refused reason=... container_id='...' ...: the message is the
 * error or warning line just before it. */
static void to_text(const struct audit_event *ev, char *line, size_t len)
{
	size_t used = 0;

	for (int f = 0; f < SH_AUDIT_FIELDS && used < len; f++) {
		const char *v = ev->value[f] ? ev->value[f] : "";

		if (f == F_EVENT || f == F_REASON || f == F_STAGE)
			used += (size_t)snprintf(line + used, len - used,
						 "%s%s=%s", f ? " " : "",
						 names[f][0], v);
		else
			used += (size_t)snprintf(line + used, len - used,
						 " %s=%s", names[f][0],
						 LOG_Q(v));
	}
}

/*
 * Every field is cut to SH_AUDIT_VALUE_MAX bytes before it is added (the
 * message to its own bound), so that the whole record always fits one
 * datagram: one oversized field must not drop the others.
 */
static int to_journal(const struct audit_event *ev)
{
	_cleanup_free_ struct journal_msg *m = calloc(1, sizeof(*m));
	char prio[4], pid[16], message[SH_ERROR_MSG_MAX + 64];
	int r;

	if (!m)
		return -ENOMEM;
	snprintf(prio, sizeof(prio), "%d", ev->priority);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(message, sizeof(message), "%s (%s): %s", ev->value[F_EVENT],
		 ev->value[F_REASON], ev->message);
	r = events_journal_add(m, "MESSAGE", message)			 ?:
		    events_journal_add(m, "PRIORITY", prio)		 ?:
		    events_journal_add(m, "SYSLOG_IDENTIFIER", SH_IDENT) ?:
		    events_journal_add(m, "SYSLOG_PID", pid);
	for (int f = 0; f < SH_AUDIT_FIELDS && !r; f++)
		r = events_journal_add_cut(m, names[f][1], ev->value[f],
					   SH_AUDIT_VALUE_MAX);
	return r ?: events_journal_send(m);
}

/* journald when it listens and takes the record, else syslog: a record
 * that journald refused (full, gone, too slow) is not lost. */
static void audit_emit(const struct audit_event *ev)
{
	char line[SH_LOG_LINE_MAX];

	to_text(ev, line, sizeof(line));
	if (log_get_format() == LOG_FORMAT_JSON)
		to_json(ev);
	else
		log_file_line(ev->priority, line);
	if (!events_journal_present() || to_journal(ev))
		log_syslog(ev->priority, line);
}

/* Identity from the container's description; names that container.c refuses
 * are still shown (escaped): they are what the refusal is about. */
static void fill_identity(struct audit_event *ev, const char *stage,
			  const struct sh_container *c)
{
	ev->value[F_CONTAINER_ID] = c->id;
	ev->value[F_NAMESPACE] = c->who.namespace;
	ev->value[F_POD] = c->who.pod;
	ev->value[F_CONTAINER] = c->who.name;
	ev->value[F_STAGE] = stage;
	ev->value[F_BUNDLE] = c->bundle;
}

void events_refusal(const char *stage, const struct sh_container *c,
		    const struct sh_error *err, int code)
{
	struct audit_event ev = { .priority = LOG_NOTICE };

	fill_identity(&ev, stage, c);
	ev.value[F_EVENT] = "refused";
	ev.value[F_REASON] = error_reason_text(err);
	ev.value[F_ANNOTATION] = err->cause.annotation;
	ev.value[F_SETTING] = err->cause.setting;
	ev.message = error_text(err, code);
	audit_emit(&ev);
}

static const char *fallback_text(enum sh_reason reason)
{
	if (reason == SH_REASON_BYPASS_PROT_MEM_UNSUPPORTED)
		return "started without bypass-prot-mem: this kernel lacks SK_BPF_BYPASS_PROT_MEM (on_unsupported is 'warn')";
	return "started with less than its policy asks for";
}

void events_fallback(const char *stage, const struct sh_container *c,
		     enum sh_reason reason, const struct sh_cause *cause)
{
	struct audit_event ev = { .priority = LOG_NOTICE };

	fill_identity(&ev, stage, c);
	ev.value[F_EVENT] = "fallback";
	ev.value[F_REASON] = error_reason_token(reason) ?: SH_REASON_ERROR;
	ev.value[F_ANNOTATION] = cause->annotation;
	ev.value[F_SETTING] = cause->setting;
	ev.message = fallback_text(reason);
	audit_emit(&ev);
}

/*
 * journald's native protocol (systemd's src/libsystemd/sd-journal/
 * journal-send.c and the "Native Journal Protocol" document), by hand:
 * Debian ships no static libsystemd, and a static hook must not depend on
 * a shared one. The socket is a datagram socket; a message too large for
 * one datagram would need a memfd, which these short lines never need.
 */

static bool valid_key(const char *key)
{
	size_t len = strlen(key);

	if (!len || len > 64 || key[0] == '_')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(key[i] >= 'A' && key[i] <= 'Z') &&
		    !(key[i] >= '0' && key[i] <= '9') && key[i] != '_')
			return false;
	return true;
}

static int put(struct journal_msg *m, const void *data, size_t len)
{
	if (len > sizeof(m->buf) - m->used) {
		m->overflow = true;
		return -ENOSPC;
	}
	memcpy(m->buf + m->used, data, len);
	m->used += len;
	return 0;
}

/* The value's length as 64 bits, little endian. */
static int put_length(struct journal_msg *m, size_t len)
{
	unsigned char le[8];

	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)((uint64_t)len >> (8 * i));
	return put(m, le, sizeof(le));
}

#define JOURNAL_CUT_MARK "..."

/* KEY=value, or KEY\n<length>value: vlen bytes of value, then the mark
 * when it was cut. */
static int add_field(struct journal_msg *m, const char *key, const char *value,
		     size_t vlen, bool cut)
{
	size_t mlen = cut ? strlen(JOURNAL_CUT_MARK) : 0;
	size_t start = m->used;
	int r;

	if (!valid_key(key))
		return -EINVAL;
	if (!vlen)
		return 0;
	r = put(m, key, strlen(key));
	if (r)
		goto undo;
	if (!memchr(value, '\n', vlen))
		r = put(m, "=", 1);
	else
		r = put(m, "\n", 1) ?: put_length(m, vlen + mlen);
	if (r)
		goto undo;
	r = put(m, value, vlen)			   ?:
		    put(m, JOURNAL_CUT_MARK, mlen) ?:
						     put(m, "\n", 1);
	if (r)
		goto undo;
	return 0;
undo:
	m->used = start;
	return r;
}

int events_journal_add(struct journal_msg *m, const char *key,
		       const char *value)
{
	if (!value)
		return valid_key(key) ? 0 : -EINVAL;
	return add_field(m, key, value, strlen(value), /* cut= */ false);
}

int events_journal_add_cut(struct journal_msg *m, const char *key,
			   const char *value, size_t max)
{
	size_t vlen;

	if (!value)
		return valid_key(key) ? 0 : -EINVAL;
	vlen = strnlen(value, max + 1);
	return add_field(m, key, value, vlen > max ? max : vlen, vlen > max);
}

bool events_journal_present(void)
{
	struct stat st;

	return stat(SH_JOURNAL_SOCKET, &st) == 0 && S_ISSOCK(st.st_mode);
}

int events_journal_send(const struct journal_msg *m)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (m->overflow || !m->used)
		return -EINVAL;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	memcpy(sa.sun_path, SH_JOURNAL_SOCKET, sizeof(SH_JOURNAL_SOCKET));
	if (sendto(fd, m->buf, m->used, MSG_DONTWAIT | MSG_NOSIGNAL,
		   (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}
