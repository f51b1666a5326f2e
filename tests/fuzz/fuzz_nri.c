// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: bytes from the runtime's end of an NRI connection, fed
 * to a plugin session (ttrpc_mux.c framing and multiplexing, the ttrpc
 * envelope and every NRI request by protobuf-c, nri_deliver.c), in pieces
 * whose sizes the input's first byte chooses, as read() may cut them. The
 * session either fails with its one line or goes on; it never crashes,
 * and its replies always frame and decode.
 *
 * Modules: `ttrpc_mux.c`, `nri_plugin.c`, `nri_deliver.c`
 */
#include "fuzz_common.h"
#include "nri/nri_plugin.h"

static struct ttrpc_mux replies;
static struct nri_deliver_config deliver = {
	.every_container = true,
	.hook_path = "/usr/local/libexec/oci/hooks.d/oci-sockopt-hook",
};

static int sink(struct nri_plugin *p, const uint8_t *buf, size_t len)
{
	struct ttrpc_msg msg;

	(void)p;
	/* every reply is one well-framed message the plugin could decode */
	if (ttrpc_mux_feed(&replies, buf, len) ||
	    ttrpc_mux_next(&replies, &msg) != 1 ||
	    ttrpc_mux_next(&replies, &msg) != 0)
		abort();
	return 0;
}

static const struct nri_deliver_config *config(struct nri_plugin *p)
{
	(void)p;
	return &deliver;
}

static void pod_event(struct nri_plugin *p, const nri_pod *pod, bool running)
{
	(void)p;
	(void)running;
	if (pod->name && strlen(pod->name) > TTRPC_MESSAGE_MAX)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nri_plugin p;
	size_t piece;
	int r = 0;

	if (size < 1)
		return 0;
	piece = (data[0] & 0x3f) + 1;
	data++;
	size--;
	ttrpc_mux_init(&replies);
	if (nri_plugin_init(&p, NRI_PLUGIN_NAME, NRI_PLUGIN_IDX, sink, config))
		abort();
	p.pod_event = pod_event;
	p.register_stream = 1;
	while (size && !r) {
		size_t n = size < piece ? size : piece;

		r = nri_plugin_input(&p, data, n);
		data += n;
		size -= n;
	}
	if (r && !p.error[0])
		abort(); /* a failure always says why */
	nri_plugin_free(&p);
	ttrpc_mux_free(&replies);
	return 0;
}
