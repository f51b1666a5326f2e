// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NRI wire (ttrpc_mux.h): frames in, ttrpc messages out, and back.
 *
 * Read from the sources: containerd/nri pkg/net/multiplex/mux.go (frame
 * header, maxPayloadSize, a writer that splits a long write into frames,
 * a reader that drops frames for connections nobody opened) and
 * containerd/ttrpc channel.go (message header, messageLengthMax). ttrpc
 * writes through a bufio.Writer, so one message reaches the mux as several
 * writes, hence several frames: the streams below are byte streams.
 *
 * Memory is bounded: a frame longer than the mux allows, or a message
 * header announcing more than ttrpc allows, fails the connection before
 * its bytes are kept. A stream keeps one incomplete message at most (the
 * caller takes the complete ones after each feed), and a buffer grown for
 * a large message is freed once it is empty again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nri/ttrpc_mux.h"

/* A buffer larger than this is freed when it empties. */
#define STREAM_KEEP (64u << 10)

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static int fail(struct ttrpc_mux *m, int r, const char *what, uint32_t conn,
		uint32_t len)
{
	snprintf(m->error, sizeof(m->error), "%s (connection %u: %u bytes)",
		 what, conn, len);
	return r;
}

void ttrpc_mux_init(struct ttrpc_mux *m)
{
	memset(m, 0, sizeof(*m));
}

void ttrpc_mux_free(struct ttrpc_mux *m)
{
	for (size_t i = 0; i < TTRPC_MUX_NR_CONNS; i++)
		free(m->conns[i].buf);
	ttrpc_mux_init(m);
}

static size_t pending(const struct ttrpc_mux_stream *s)
{
	return s->end - s->start;
}

/* Room for n more bytes: compact first, then grow. */
static int reserve(struct ttrpc_mux_stream *s, size_t n)
{
	size_t want = pending(s) + n, cap = s->cap ? s->cap : 4096;
	uint8_t *buf;

	if (s->start && s->end + n > s->cap) {
		memmove(s->buf, s->buf + s->start, pending(s));
		s->end -= s->start;
		s->start = 0;
	}
	if (s->end + n <= s->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	buf = realloc(s->buf, cap);
	if (!buf)
		return -ENOMEM;
	s->buf = buf;
	s->cap = cap;
	return 0;
}

/* A header at the stream's head that announces too long a message fails
 * the connection now, before its payload is kept. */
static int check_head(struct ttrpc_mux *m, uint32_t conn)
{
	const struct ttrpc_mux_stream *s = &m->conns[conn];
	uint32_t len;

	if (pending(s) < TTRPC_HEADER)
		return 0;
	len = get_be32(s->buf + s->start);
	if (len > TTRPC_MESSAGE_MAX)
		return fail(m, -EMSGSIZE, "ttrpc message longer than 4 MiB",
			    conn, len);
	return 0;
}

static int take_payload(struct ttrpc_mux *m, const uint8_t *data, size_t n)
{
	struct ttrpc_mux_stream *s;
	uint32_t conn = m->frame_conn;

	m->frame_left -= n;
	if (m->frame_left == 0)
		m->hdr_len = 0;
	if (conn == 0 || conn >= TTRPC_MUX_NR_CONNS) {
		/* mux.go drops frames for connections nobody opened. */
		m->dropped += n;
		return 0;
	}
	s = &m->conns[conn];
	if (reserve(s, n))
		return fail(m, -ENOMEM, "out of memory", conn, (uint32_t)n);
	memcpy(s->buf + s->end, data, n);
	s->end += n;
	return check_head(m, conn);
}

static void take_header(struct ttrpc_mux *m, const uint8_t *data, size_t n)
{
	memcpy(m->hdr + m->hdr_len, data, n);
	m->hdr_len += n;
	if (m->hdr_len < TTRPC_MUX_HEADER)
		return;
	m->frame_conn = get_be32(m->hdr);
	m->frame_left = get_be32(m->hdr + 4);
	if (m->frame_left == 0)
		m->hdr_len = 0;
}

int ttrpc_mux_feed(struct ttrpc_mux *m, const uint8_t *data, size_t len)
{
	while (len) {
		size_t n;
		int r;

		if (m->hdr_len < TTRPC_MUX_HEADER) {
			n = TTRPC_MUX_HEADER - m->hdr_len;
			n = n < len ? n : len;
			take_header(m, data, n);
			if (m->hdr_len == TTRPC_MUX_HEADER &&
			    m->frame_left > TTRPC_MUX_FRAME_MAX)
				return fail(m, -EPROTO,
					    "mux frame longer than 4 MiB",
					    m->frame_conn, m->frame_left);
		} else {
			n = m->frame_left < len ? m->frame_left : len;
			r = take_payload(m, data, n);
			if (r)
				return r;
		}
		data += n;
		len -= n;
	}
	return 0;
}

/* An emptied stream starts over at the front; a large buffer goes. */
static void rewind_stream(struct ttrpc_mux_stream *s)
{
	if (pending(s))
		return;
	s->start = s->end = 0;
	if (s->cap > STREAM_KEEP) {
		free(s->buf);
		s->buf = NULL;
		s->cap = 0;
	}
}

static int next_of(struct ttrpc_mux *m, uint32_t conn, struct ttrpc_msg *msg)
{
	struct ttrpc_mux_stream *s = &m->conns[conn];
	const uint8_t *p;
	uint32_t len;

	if (pending(s) < TTRPC_HEADER)
		return 0;
	p = s->buf + s->start;
	len = get_be32(p);
	if (len > TTRPC_MESSAGE_MAX)
		return fail(m, -EMSGSIZE, "ttrpc message longer than 4 MiB",
			    conn, len);
	if (pending(s) - TTRPC_HEADER < len)
		return 0;
	msg->conn = conn;
	msg->len = len;
	msg->stream = get_be32(p + 4);
	msg->type = p[8];
	msg->flags = p[9];
	msg->payload = p + TTRPC_HEADER;
	s->start += TTRPC_HEADER + len;
	return 1;
}

int ttrpc_mux_next(struct ttrpc_mux *m, struct ttrpc_msg *msg)
{
	for (uint32_t conn = 1; conn < TTRPC_MUX_NR_CONNS; conn++) {
		int r = next_of(m, conn, msg);

		if (r)
			return r;
		/* Nothing complete here: a buffer no message points into. */
		rewind_stream(&m->conns[conn]);
	}
	return 0;
}

int ttrpc_mux_encode(const struct ttrpc_msg *msg, uint8_t **ret,
		     size_t *out_len)
{
	size_t body = (size_t)TTRPC_HEADER + msg->len, frames, total, done = 0;
	uint8_t *buf, *p, hdr[TTRPC_HEADER];

	*ret = NULL;
	*out_len = 0;
	if (msg->conn == 0)
		return -EINVAL;
	if (msg->len > TTRPC_MESSAGE_MAX)
		return -EMSGSIZE;
	frames = (body + TTRPC_MUX_FRAME_MAX - 1) / TTRPC_MUX_FRAME_MAX;
	total = body + frames * TTRPC_MUX_HEADER;
	buf = malloc(total);
	if (!buf)
		return -ENOMEM;
	put_be32(hdr, msg->len);
	put_be32(hdr + 4, msg->stream);
	hdr[8] = msg->type;
	hdr[9] = msg->flags;
	p = buf;
	while (done < body) {
		size_t end = done + (body - done < TTRPC_MUX_FRAME_MAX ?
					     body - done :
					     TTRPC_MUX_FRAME_MAX);

		put_be32(p, msg->conn);
		put_be32(p + 4, (uint32_t)(end - done));
		p += TTRPC_MUX_HEADER;
		if (done < TTRPC_HEADER) {
			memcpy(p, hdr + done, TTRPC_HEADER - done);
			p += TTRPC_HEADER - done;
			done = TTRPC_HEADER;
		}
		if (end > done)
			memcpy(p, msg->payload + (done - TTRPC_HEADER),
			       end - done);
		p += end - done;
		done = end;
	}
	*ret = buf;
	*out_len = total;
	return 0;
}
