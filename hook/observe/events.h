/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Audit lines: one per refused container and one per fallback, with the
 * container id, its pod, namespace and name, the annotation and setting
 * involved and a stable reason token (error.h). In log_file as text or
 * JSON (log_format), and to journald with OCI_SOCKOPT_HOOK_* fields when
 * it listens, else to syslog. At notice level, written whatever log_level
 * says: the error or warning line before it carries the severity (and is
 * the one line on stderr).
 */
#ifndef SH_EVENTS_H
#define SH_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "input/container.h"
#include "lib/error.h"

/* After error_report(): the stage (command) refused the container. */
void events_refusal(const char *stage, const struct sh_container *c,
		    const struct sh_error *err, int code);
/* A prestart that started the container with less than it asked for:
 * why (SH_REASON_NONE for "error") and what asked for it. */
void events_fallback(const char *stage, const struct sh_container *c,
		     enum sh_reason reason, const struct sh_cause *cause);

/*
 * journald's native protocol, without libsystemd: one datagram of
 * KEY=value lines (KEY\n<le64 length>value\n for a value with a newline)
 * to /run/systemd/journal/socket. Best effort: never blocks, never fails
 * the hook.
 */

#define SH_JOURNAL_SOCKET "/run/systemd/journal/socket"
#define SH_JOURNAL_MSG_MAX 8192

struct journal_msg {
	size_t used;
	bool overflow; /* a field did not fit: the message is not sent */
	char buf[SH_JOURNAL_MSG_MAX];
};

/* Appends KEY=value (KEY: [A-Z0-9_], not starting with '_'); a NULL or
 * empty value adds nothing. -EINVAL for a bad key, -ENOSPC when full. */
int events_journal_add(struct journal_msg *m, const char *key,
		       const char *value);
/* events_journal_add() with at most max bytes of value, and "..." after a value
 * that was cut: an audit field never makes the message too long. */
int events_journal_add_cut(struct journal_msg *m, const char *key,
			   const char *value, size_t max);
/* Whether journald listens on this host. */
bool events_journal_present(void);
/* Sends m without blocking: 0, or a negative errno that callers may
 * ignore (journald absent, busy or too slow). */
int events_journal_send(const struct journal_msg *m);

#endif /* SH_EVENTS_H */
