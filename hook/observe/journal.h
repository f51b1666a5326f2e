/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * journald's native protocol, without libsystemd: one datagram of
 * KEY=value lines (KEY\n<le64 length>value\n for a value with a newline)
 * to /run/systemd/journal/socket. Best effort: never blocks, never fails
 * the hook.
 */
#ifndef SH_JOURNAL_H
#define SH_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

#define SH_JOURNAL_SOCKET "/run/systemd/journal/socket"
#define SH_JOURNAL_MSG_MAX 8192

struct journal_msg {
	size_t used;
	bool overflow; /* a field did not fit: the message is not sent */
	char buf[SH_JOURNAL_MSG_MAX];
};

/* Appends KEY=value (KEY: [A-Z0-9_], not starting with '_'); a NULL or
 * empty value adds nothing. -EINVAL for a bad key, -ENOSPC when full. */
int journal_add(struct journal_msg *m, const char *key, const char *value);
/* journal_add() with at most max bytes of value, and "..." after a value
 * that was cut: an audit field never makes the message too long. */
int journal_add_cut(struct journal_msg *m, const char *key, const char *value,
		    size_t max);
/* Whether journald listens on this host. */
bool journal_present(void);
/* Sends m without blocking: 0, or a negative errno that callers may
 * ignore (journald absent, busy or too slow). */
int journal_send(const struct journal_msg *m);

#endif /* SH_JOURNAL_H */
