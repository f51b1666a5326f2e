/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The NRI wire: ttrpc messages carried over NRI's connection multiplexer.
 * Bytes in, messages out, and back; no I/O and no protobuf here, so that
 * the unit tests and the fuzz target drive it with any bytes.
 *
 * NRI (containerd/nri pkg/net/multiplex/mux.go) runs two logical
 * connections over the one socket: frames of a 4-byte connection id and a
 * 4-byte payload length (big endian), then the payload, at most
 * TTRPC_MUX_FRAME_MAX. Connection 1 carries the runtime's requests to the
 * plugin (the plugin is the ttrpc server there), connection 2 the plugin's
 * requests to the runtime (RegisterPlugin). Each connection is a byte
 * stream of ttrpc messages (containerd/ttrpc channel.go): a 10-byte header
 * (length, stream id: big endian 32 bits each; type; flags) and the
 * payload, at most TTRPC_MESSAGE_MAX. A message may span frames, and a
 * frame may hold several messages.
 */
#ifndef SH_TTRPC_MUX_H
#define SH_TTRPC_MUX_H

#include <stddef.h>
#include <stdint.h>

#define TTRPC_MUX_HEADER 8
#define TTRPC_HEADER 10
/* ttrpc's messageLengthMax; the mux's maxPayloadSize adds a header. */
#define TTRPC_MESSAGE_MAX (4u << 20)
#define TTRPC_MUX_FRAME_MAX (TTRPC_HEADER + TTRPC_MESSAGE_MAX)

/* Connection ids (multiplex/ttrpc.go); 0 is reserved. */
#define TTRPC_MUX_CONN_PLUGIN 1 /* the runtime's requests to us */
#define TTRPC_MUX_CONN_RUNTIME 2 /* our requests to the runtime */
#define TTRPC_MUX_NR_CONNS 3

enum ttrpc_type {
	TTRPC_REQUEST = 1,
	TTRPC_RESPONSE = 2,
	TTRPC_DATA = 3,
};

struct ttrpc_msg {
	uint32_t conn;
	uint32_t stream;
	uint8_t type;
	uint8_t flags;
	const uint8_t *payload; /* valid until the next ttrpc_mux_ call */
	uint32_t len;
};

/* One connection's bytes not yet taken as messages. */
struct ttrpc_mux_stream {
	uint8_t *buf;
	size_t start, end, cap;
};

struct ttrpc_mux {
	uint8_t hdr[TTRPC_MUX_HEADER];
	size_t hdr_len; /* header bytes of the current frame seen so far */
	uint32_t frame_conn; /* the current frame's connection */
	uint32_t frame_left; /* its payload bytes still to come */
	uint64_t dropped; /* payload bytes for connections nobody opened */
	struct ttrpc_mux_stream conns[TTRPC_MUX_NR_CONNS];
	char error[160]; /* why the last call failed */
};

void ttrpc_mux_init(struct ttrpc_mux *m);
void ttrpc_mux_free(struct ttrpc_mux *m);
/*
 * Takes bytes read from the socket. 0, or -EPROTO (a frame longer than the
 * mux allows), -EMSGSIZE (a ttrpc message longer than ttrpc allows) or
 * -ENOMEM, with m->error saying which: the connection is then unusable.
 */
int ttrpc_mux_feed(struct ttrpc_mux *m, const uint8_t *data, size_t len);
/* The next complete message: 1 with *msg set, 0 when none is complete,
 * or a negative errno as ttrpc_mux_feed. */
int ttrpc_mux_next(struct ttrpc_mux *m, struct ttrpc_msg *msg);
/*
 * A message as the bytes to write to the socket, split into frames as the
 * mux does: *ret is malloc()ed (the caller frees it). -EMSGSIZE when the
 * payload is longer than TTRPC_MESSAGE_MAX, -EINVAL for connection 0.
 */
int ttrpc_mux_encode(const struct ttrpc_msg *msg, uint8_t **ret,
		     size_t *out_len);

#endif /* SH_TTRPC_MUX_H */
