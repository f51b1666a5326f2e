/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One NRI session, from registration to the connection's end: the
 * plugin's side of containerd/nri pkg/stub, on the wire of ttrpc_mux.h,
 * with protobuf-c for every message. No sockets here: bytes come in
 * through nri_plugin_input() and replies leave through the write callback,
 * so the unit tests and the fuzz target run whole sessions in memory.
 */
#ifndef SH_NRI_PLUGIN_H
#define SH_NRI_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nri/nri_deliver.h"
#include "nri/ttrpc_mux.h"

#define NRI_PLUGIN_NAME "oci-sockopt-hook"
/* Plugins are called in index order; ours only adds keys and hooks. */
#define NRI_PLUGIN_IDX "50"
#define NRI_NAME_MAX 64

struct nri_plugin;
/* Writes all of buf to the runtime: 0 or a negative errno. */
typedef int (*nri_plugin_write_fn)(struct nri_plugin *p, const uint8_t *buf,
				   size_t len);
/* The delivery settings for the next container (the operator config as
 * it is now). */
typedef const struct nri_deliver_config *(*nri_plugin_config_fn)(
	struct nri_plugin *p);
/* A pod sandbox started (RunPodSandbox) or went (RemovePodSandbox). */
typedef void (*nri_plugin_pod_fn)(struct nri_plugin *p, const nri_pod *pod,
				  bool running);

/* Whether this session attaches at StartContainer (p->runtime is known):
 * asked once, at Configure, which subscribes to StartContainer then. */
typedef bool (*nri_plugin_attaches_fn)(struct nri_plugin *p);
/* StartContainer: 0, or a negative errno that fails the start, with
 * why (one line) for the runtime's error. */
typedef int (*nri_plugin_start_fn)(struct nri_plugin *p, const nri_pod *pod,
				   const nri_container *ctr, char *why,
				   size_t why_len);

struct nri_plugin_stats {
	uint64_t requests;
	uint64_t containers; /* CreateContainer requests */
	uint64_t hooked; /* containers given the hook */
	uint64_t copied; /* pod keys copied */
	uint64_t pods; /* RunPodSandbox events */
	uint64_t started; /* StartContainer events */
	uint64_t refused; /* starts refused */
};

struct nri_plugin {
	char name[NRI_NAME_MAX], idx[3];
	struct ttrpc_mux mux;
	nri_plugin_write_fn write;
	nri_plugin_config_fn config;
	nri_plugin_pod_fn pod_event; /* NULL: no pod events */
	nri_plugin_attaches_fn attaches; /* NULL: never */
	nri_plugin_start_fn start; /* called when attaching */
	bool attaching; /* subscribed to StartContainer */
	void *data; /* the caller's */
	uint32_t register_stream; /* our RegisterPlugin request */
	bool registered; /* the runtime accepted it */
	bool configured; /* Configure answered */
	bool synchronized; /* the last Synchronize part answered */
	bool shutdown; /* the runtime said it is going down */
	char runtime[64], runtime_version[64];
	int64_t request_timeout_ms; /* the runtime's, from Configure */
	struct nri_plugin_stats stats;
	char error[256]; /* why the session must end */
};

/* name: [A-Za-z0-9_.-]+ of at most NRI_NAME_MAX - 1; idx: two digits.
 * -EINVAL (with p->error) for anything else. */
int nri_plugin_init(struct nri_plugin *p, const char *name, const char *idx,
		    nri_plugin_write_fn write, nri_plugin_config_fn config);
void nri_plugin_free(struct nri_plugin *p);
/* Sends RegisterPlugin. */
int nri_plugin_register(struct nri_plugin *p);
/*
 * Bytes read from the runtime: every complete request is answered. 0 to
 * go on; a negative errno ends the session, with p->error saying why in
 * one line (a malformed or oversized message, a refused registration, a
 * write that failed).
 */
int nri_plugin_input(struct nri_plugin *p, const uint8_t *buf, size_t len);

#endif /* SH_NRI_PLUGIN_H */
