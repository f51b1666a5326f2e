// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NRI wire (ttrpc_mux.c): frames in, messages out, and back.
 *
 * Modules: `ttrpc_mux.c`
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "nri/ttrpc_mux.h"

static uint8_t *frame(uint32_t conn, const uint8_t *payload, uint32_t len,
		      size_t *out_len)
{
	uint8_t *buf = malloc(TTRPC_MUX_HEADER + len);

	buf[0] = conn >> 24;
	buf[1] = conn >> 16;
	buf[2] = conn >> 8;
	buf[3] = conn;
	buf[4] = len >> 24;
	buf[5] = len >> 16;
	buf[6] = len >> 8;
	buf[7] = len;
	if (len)
		memcpy(buf + TTRPC_MUX_HEADER, payload, len);
	*out_len = TTRPC_MUX_HEADER + len;
	return buf;
}

static uint8_t *encode(uint32_t conn, uint32_t stream, const char *text,
		       size_t *len)
{
	struct ttrpc_msg msg = { .conn = conn,
				 .stream = stream,
				 .type = TTRPC_REQUEST,
				 .payload = (const uint8_t *)text,
				 .len = strlen(text) };
	uint8_t *out;

	if (ttrpc_mux_encode(&msg, &out, len))
		return NULL;
	return out;
}

static bool is_msg(const struct ttrpc_msg *m, uint32_t conn, uint32_t stream,
		   const char *text)
{
	return m->conn == conn && m->stream == stream &&
	       m->type == TTRPC_REQUEST && m->len == strlen(text) &&
	       !memcmp(m->payload, text, m->len);
}

static void test_roundtrip(void)
{
	struct ttrpc_mux m;
	struct ttrpc_msg msg;
	size_t len;
	uint8_t *wire = encode(1, 7, "hello", &len);

	ok(wire && len == TTRPC_MUX_HEADER + TTRPC_HEADER + 5 && wire[3] == 1 &&
		   wire[7] == TTRPC_HEADER + 5,
	   "encode: one frame on connection 1, its length the message's");
	ttrpc_mux_init(&m);
	ok(ttrpc_mux_feed(&m, wire, len) == 0 &&
		   ttrpc_mux_next(&m, &msg) == 1 && is_msg(&msg, 1, 7, "hello"),
	   "feed + next: the same message back");
	ok(ttrpc_mux_next(&m, &msg) == 0, "then nothing more");
	ttrpc_mux_free(&m);
	free(wire);
}

/* ttrpc writes through a bufio.Writer, so one message may come in many
 * frames, and any read may end anywhere. */
static void test_split(void)
{
	const char *text = "a message cut into single-byte frames";
	uint8_t body[64], *f;
	struct ttrpc_mux m;
	struct ttrpc_msg msg;
	size_t len, n = TTRPC_HEADER + strlen(text), got = 0;
	int bad = 0;

	body[0] = body[1] = body[2] = 0;
	body[3] = strlen(text);
	memset(body + 4, 0, 4);
	body[7] = 3;
	body[8] = TTRPC_REQUEST;
	body[9] = 0;
	memcpy(body + TTRPC_HEADER, text, strlen(text));
	ttrpc_mux_init(&m);
	for (size_t i = 0; i < n; i++) {
		f = frame(2, body + i, 1, &len);
		/* and each frame fed a byte at a time */
		for (size_t j = 0; j < len; j++)
			bad |= ttrpc_mux_feed(&m, f + j, 1);
		free(f);
		if (ttrpc_mux_next(&m, &msg) == 1) {
			got++;
			bad |= i != n - 1 || !is_msg(&msg, 2, 3, text);
		}
	}
	ok(!bad && got == 1,
	   "a message in one-byte frames, fed a byte at a time: whole, once");
	ttrpc_mux_free(&m);
}

static void test_many_in_one(void)
{
	size_t l1, l2, len;
	uint8_t *a = encode(1, 1, "first", &l1),
		*b = encode(1, 3, "second", &l2);
	uint8_t body[64], *f;
	struct ttrpc_mux m;
	struct ttrpc_msg x, y;

	/* both messages' bodies in one frame */
	memcpy(body, a + TTRPC_MUX_HEADER, l1 - TTRPC_MUX_HEADER);
	memcpy(body + l1 - TTRPC_MUX_HEADER, b + TTRPC_MUX_HEADER,
	       l2 - TTRPC_MUX_HEADER);
	f = frame(1, body, l1 + l2 - 2 * TTRPC_MUX_HEADER, &len);
	ttrpc_mux_init(&m);
	ok(ttrpc_mux_feed(&m, f, len) == 0 && ttrpc_mux_next(&m, &x) == 1 &&
		   ttrpc_mux_next(&m, &y) == 1 && is_msg(&x, 1, 1, "first") &&
		   is_msg(&y, 1, 3, "second"),
	   "two messages in one frame: both, in order, both still readable");
	ttrpc_mux_free(&m);
	free(a);
	free(b);
	free(f);
}

static void test_interleaved(void)
{
	size_t l1, l2, f1, f2;
	uint8_t *a = encode(1, 1, "plugin side", &l1);
	uint8_t *b = encode(2, 1, "runtime side", &l2);
	/* a's body in two frames, b's frame between them */
	uint8_t *a1 = frame(1, a + TTRPC_MUX_HEADER, 4, &f1);
	uint8_t *a2 = frame(1, a + TTRPC_MUX_HEADER + 4,
			    l1 - TTRPC_MUX_HEADER - 4, &f2);
	struct ttrpc_mux m;
	struct ttrpc_msg x, y;

	ttrpc_mux_init(&m);
	ok(ttrpc_mux_feed(&m, a1, f1) == 0 && ttrpc_mux_feed(&m, b, l2) == 0 &&
		   ttrpc_mux_next(&m, &x) == 1 &&
		   is_msg(&x, 2, 1, "runtime side") &&
		   ttrpc_mux_feed(&m, a2, f2) == 0 &&
		   ttrpc_mux_next(&m, &y) == 1 &&
		   is_msg(&y, 1, 1, "plugin side"),
	   "connections 1 and 2 interleaved frame by frame: each stream its own");
	ttrpc_mux_free(&m);
	free(a);
	free(b);
	free(a1);
	free(a2);
}

static void test_dropped(void)
{
	size_t l0, l9, lz, l1;
	uint8_t *zero = encode(1, 1, "reserved", &l0);
	uint8_t *nine = encode(1, 1, "nobody", &l9);
	uint8_t *empty = frame(1, NULL, 0, &lz);
	uint8_t *good = encode(1, 5, "kept", &l1);
	struct ttrpc_mux m;
	struct ttrpc_msg msg;

	zero[3] = 0; /* connection 0 */
	nine[3] = 9; /* a connection nobody opened */
	ttrpc_mux_init(&m);
	ok(ttrpc_mux_feed(&m, zero, l0) == 0 &&
		   ttrpc_mux_feed(&m, nine, l9) == 0 &&
		   ttrpc_mux_feed(&m, empty, lz) == 0 &&
		   ttrpc_mux_feed(&m, good, l1) == 0 &&
		   ttrpc_mux_next(&m, &msg) == 1 &&
		   is_msg(&msg, 1, 5, "kept") &&
		   m.dropped == l0 + l9 - 2 * TTRPC_MUX_HEADER,
	   "frames for connections 0 and 9 dropped, an empty frame ignored, as mux.go does");
	ttrpc_mux_free(&m);
	free(zero);
	free(nine);
	free(empty);
	free(good);
}

static void test_oversized(void)
{
	uint8_t hdr[TTRPC_MUX_HEADER] = { 0, 0, 0, 1, 0x00, 0x40, 0x00, 0x0b };
	uint8_t msg_hdr[TTRPC_MUX_HEADER + TTRPC_HEADER] = {
		0,    0,    0, 1, 0, 0, 0, TTRPC_HEADER, /* frame */
		0x00, 0x40, 0, 1, 0, 0, 0, 1,
		1,    0 /* 4 MiB + 1 */
	};
	struct ttrpc_mux m;
	struct ttrpc_msg msg;
	int r;

	ttrpc_mux_init(&m);
	r = ttrpc_mux_feed(&m, hdr, sizeof(hdr));
	ok(r == -EPROTO && strstr(m.error, "mux frame longer than 4 MiB"),
	   "a frame of 4 MiB + 11 bytes: -EPROTO before any payload (%s)",
	   m.error);
	ttrpc_mux_free(&m);
	ttrpc_mux_init(&m);
	r = ttrpc_mux_feed(&m, msg_hdr, sizeof(msg_hdr));
	ok(r == -EMSGSIZE && strstr(m.error, "ttrpc message longer than 4 MiB"),
	   "a ttrpc header announcing 4 MiB + 1: -EMSGSIZE at the header (%s)",
	   m.error);
	ok(ttrpc_mux_next(&m, &msg) == -EMSGSIZE,
	   "and next() says so too, never a message");
	ok(m.conns[1].cap <= 4096,
	   "no room was made for the announced payload (%zu bytes kept)",
	   m.conns[1].cap);
	ttrpc_mux_free(&m);
}

static void test_large_freed(void)
{
	size_t n = 1u << 20, len;
	char *text = malloc(n + 1);
	uint8_t *wire;
	struct ttrpc_mux m;
	struct ttrpc_msg msg;

	memset(text, 'x', n);
	text[n] = '\0';
	wire = encode(1, 1, text, &len);
	ttrpc_mux_init(&m);
	ok(ttrpc_mux_feed(&m, wire, len) == 0 &&
		   ttrpc_mux_next(&m, &msg) == 1 && msg.len == n,
	   "a 1 MiB message");
	ok(ttrpc_mux_next(&m, &msg) == 0 && m.conns[1].cap == 0,
	   "its buffer is freed once taken: memory does not stay at the peak");
	ttrpc_mux_free(&m);
	free(wire);
	free(text);
}

static void test_encode_limits(void)
{
	struct ttrpc_msg msg = { .conn = 1, .len = TTRPC_MESSAGE_MAX + 1 };
	uint8_t *out = (uint8_t *)&msg;
	size_t len = 1;

	ok(ttrpc_mux_encode(&msg, &out, &len) == -EMSGSIZE && !out && !len,
	   "encode refuses a payload over 4 MiB");
	msg.conn = 0;
	msg.len = 0;
	ok(ttrpc_mux_encode(&msg, &out, &len) == -EINVAL,
	   "encode refuses connection 0");
	msg.conn = 2;
	ok(ttrpc_mux_encode(&msg, &out, &len) == 0 &&
		   len == TTRPC_MUX_HEADER + TTRPC_HEADER,
	   "an empty payload: headers only");
	free(out);
}

int main(void)
{
	test_roundtrip();
	test_split();
	test_many_in_one();
	test_interleaved();
	test_dropped();
	test_oversized();
	test_large_freed();
	test_encode_limits();
	return tap_done();
}
