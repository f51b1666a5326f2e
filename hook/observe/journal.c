// SPDX-License-Identifier: GPL-2.0-only
/*
 * journald's native protocol (systemd's src/libsystemd/sd-journal/
 * journal-send.c and the "Native Journal Protocol" document), by hand:
 * Debian ships no static libsystemd, and a static hook must not depend on
 * a shared one. The socket is a datagram socket; a message too large for
 * one datagram would need a memfd, which these short lines never need.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "observe/journal.h"

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

int journal_add(struct journal_msg *m, const char *key, const char *value)
{
	if (!value)
		return valid_key(key) ? 0 : -EINVAL;
	return add_field(m, key, value, strlen(value), false);
}

int journal_add_cut(struct journal_msg *m, const char *key, const char *value,
		    size_t max)
{
	size_t vlen;

	if (!value)
		return valid_key(key) ? 0 : -EINVAL;
	vlen = strnlen(value, max + 1);
	return add_field(m, key, value, vlen > max ? max : vlen, vlen > max);
}

bool journal_present(void)
{
	struct stat st;

	return stat(SH_JOURNAL_SOCKET, &st) == 0 && S_ISSOCK(st.st_mode);
}

int journal_send(const struct journal_msg *m)
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
