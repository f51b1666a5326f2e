// SPDX-License-Identifier: GPL-2.0-only
/*
 * One NRI session (nri_plugin.h), as containerd/nri v0.8 runs it (pkg/stub
 * stub.go for the plugin's side, pkg/adaptation/plugin.go for the
 * runtime's):
 *  1. the plugin sends Runtime.RegisterPlugin (name, two-digit index) on
 *     mux connection 2, as a ttrpc client (odd stream ids);
 *  2. the runtime calls Plugin.Configure on connection 1: the reply is the
 *     event subscription (0 would mean every event); then
 *     Plugin.Synchronize with the pods and containers it has, possibly
 *     split (more = true: answer with more = true and no updates);
 *  3. then the subscribed events: CreateContainer (the reply's adjustment
 *     is applied to the container's spec), StateChange for the pod events;
 *     Shutdown when the runtime goes down.
 * The runtime waits 2 s for each reply (request_timeout) and closes a
 * plugin that does not answer in time; a plugin that answers with an
 * error fails the container creation. So CreateContainer never fails a
 * container: whatever the pod asks, the hook decides, at createRuntime.
 * When the session attaches (p->attaches), StartContainer comes as a
 * StateChange after the runtime created the task (containerd's
 * container_start.go: NewTask, then NRI StartContainer, then task.Start),
 * and an error there fails the start: the plugin's start callback polices
 * the container as the hook would, and its refusal is the reply.
 *
 * A message that cannot be decoded, or a reply that cannot be sent, ends
 * the session with one line in p->error; the command reconnects.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/log.h"
#include "nri/nri_plugin.h"

/* google.golang.org/grpc/codes */
#define CODE_UNIMPLEMENTED 12

#define EVENTS                                                               \
	(NRI_EVENT_BIT(NRI__PKG__API__V1ALPHA1__EVENT__RUN_POD_SANDBOX) |    \
	 NRI_EVENT_BIT(NRI__PKG__API__V1ALPHA1__EVENT__REMOVE_POD_SANDBOX) | \
	 NRI_EVENT_BIT(NRI__PKG__API__V1ALPHA1__EVENT__CREATE_CONTAINER))

/* google.golang.org/grpc/codes */
#define CODE_PERMISSION_DENIED 7

/* A reply: a packed message, or a status code (and why). */
struct reply {
	uint8_t *payload;
	size_t len;
	int code;
	char why[256];
};

static int end_session(struct nri_plugin *p, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int end_session(struct nri_plugin *p, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
	return r;
}

static bool valid_name(const char *s)
{
	size_t len = strlen(s);

	return len && len < NRI_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_.-") == len;
}

int nri_plugin_init(struct nri_plugin *p, const char *name, const char *idx,
		    nri_plugin_write_fn write, nri_plugin_config_fn config)
{
	memset(p, 0, sizeof(*p));
	ttrpc_mux_init(&p->mux);
	p->write = write;
	p->config = config;
	if (!valid_name(name))
		return end_session(
			p, -EINVAL,
			"invalid NRI plugin name %s (letters, digits, '_', '.', '-', at most %d)",
			LOG_Q(name), NRI_NAME_MAX - 1);
	if (strlen(idx) != 2 || strspn(idx, "0123456789") != 2)
		return end_session(
			p, -EINVAL,
			"invalid NRI plugin index %s (two digits, 00 to 99)",
			LOG_Q(idx));
	snprintf(p->name, sizeof(p->name), "%s", name);
	memcpy(p->idx, idx, 3);
	return 0;
}

void nri_plugin_free(struct nri_plugin *p)
{
	ttrpc_mux_free(&p->mux);
}

static int pack(const ProtobufCMessage *msg, uint8_t **ret, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(msg);
	/* malloc(0) may return NULL: an empty message still has a buffer */
	*ret = malloc(*len ? *len : 1);
	if (!*ret)
		return -ENOMEM;
	protobuf_c_message_pack(msg, *ret);
	return 0;
}

static int send_msg(struct nri_plugin *p, uint32_t conn, uint32_t stream,
		    uint8_t type, const ProtobufCMessage *body)
{
	_cleanup_free_ uint8_t *payload = NULL, *wire = NULL;
	struct ttrpc_msg msg = { .conn = conn, .stream = stream, .type = type };
	size_t len, wire_len;
	int r = pack(body, &payload, &len);

	if (r)
		return end_session(p, r, "out of memory");
	msg.payload = payload;
	msg.len = len;
	r = ttrpc_mux_encode(&msg, &wire, &wire_len);
	if (r)
		return end_session(p, r, "cannot frame a %zu-byte message",
				   len);
	r = p->write(p, wire, wire_len);
	if (r)
		return end_session(p, r, "cannot write to the runtime: %s",
				   strerror(-r));
	return 0;
}

int nri_plugin_register(struct nri_plugin *p)
{
	Nri__Pkg__Api__V1alpha1__RegisterPluginRequest reg =
		NRI__PKG__API__V1ALPHA1__REGISTER_PLUGIN_REQUEST__INIT;
	Ttrpc__Request req = TTRPC__REQUEST__INIT;
	_cleanup_free_ uint8_t *payload = NULL;
	int r;

	reg.plugin_name = p->name;
	reg.plugin_idx = p->idx;
	r = pack(&reg.base, &payload, &req.payload.len);
	if (r)
		return end_session(p, r, "out of memory");
	req.payload.data = payload;
	req.service = NRI_SERVICE_RUNTIME;
	req.method = "RegisterPlugin";
	p->register_stream = 1;
	return send_msg(p, TTRPC_MUX_CONN_RUNTIME, p->register_stream,
			TTRPC_REQUEST, &req.base);
}

/* Unpacks a request's payload; -EBADMSG ends the session. */
#define UNPACK(p, type, fn, in, out)                                         \
	({                                                                   \
		(out) = fn(NULL, (in)->len, (in)->data);                     \
		(out) ? 0 :                                                  \
			end_session((p), -EBADMSG,                           \
				    "malformed %s request from the runtime", \
				    (type));                                 \
	})

static int on_configure(struct nri_plugin *p, const ProtobufCBinaryData *in,
			struct reply *ret)
{
	Nri__Pkg__Api__V1alpha1__ConfigureResponse rsp =
		NRI__PKG__API__V1ALPHA1__CONFIGURE_RESPONSE__INIT;
	Nri__Pkg__Api__V1alpha1__ConfigureRequest *req;
	int r = UNPACK(p, "Configure",
		       nri__pkg__api__v1alpha1__configure_request__unpack, in,
		       req);

	if (r)
		return r;
	snprintf(p->runtime, sizeof(p->runtime), "%s", req->runtime_name);
	snprintf(p->runtime_version, sizeof(p->runtime_version), "%s",
		 req->runtime_version);
	p->request_timeout_ms = req->request_timeout;
	nri__pkg__api__v1alpha1__configure_request__free_unpacked(req, NULL);
	p->configured = true;
	p->attaching = p->attaches && p->start && p->attaches(p);
	rsp.events = EVENTS;
	if (p->attaching)
		rsp.events |= NRI_EVENT_BIT(
			NRI__PKG__API__V1ALPHA1__EVENT__START_CONTAINER);
	return pack(&rsp.base, &ret->payload, &ret->len);
}

static int on_synchronize(struct nri_plugin *p, const ProtobufCBinaryData *in,
			  struct reply *ret)
{
	Nri__Pkg__Api__V1alpha1__SynchronizeResponse rsp =
		NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_RESPONSE__INIT;
	Nri__Pkg__Api__V1alpha1__SynchronizeRequest *req;
	int r = UNPACK(p, "Synchronize",
		       nri__pkg__api__v1alpha1__synchronize_request__unpack, in,
		       req);

	if (r)
		return r;
	/* Running containers already have their hooks, or not: nothing to
	 * update. A split request is answered part by part, as the stub
	 * does: more echoed, no updates until the last part. */
	rsp.more = req->more;
	if (!req->more)
		p->synchronized = true;
	if (p->pod_event)
		for (size_t i = 0; i < req->n_pods; i++)
			p->pod_event(p, req->pods[i], /* running= */ true);
	nri__pkg__api__v1alpha1__synchronize_request__free_unpacked(req, NULL);
	return pack(&rsp.base, &ret->payload, &ret->len);
}

static int empty_reply(struct reply *ret)
{
	Nri__Pkg__Api__V1alpha1__Empty rsp =
		NRI__PKG__API__V1ALPHA1__EMPTY__INIT;

	return pack(&rsp.base, &ret->payload, &ret->len);
}

static int on_shutdown(struct nri_plugin *p, const ProtobufCBinaryData *in,
		       struct reply *ret)
{
	(void)in;
	p->shutdown = true;
	return empty_reply(ret);
}

static int on_create(struct nri_plugin *p, const ProtobufCBinaryData *in,
		     struct reply *ret)
{
	Nri__Pkg__Api__V1alpha1__CreateContainerResponse rsp =
		NRI__PKG__API__V1ALPHA1__CREATE_CONTAINER_RESPONSE__INIT;
	Nri__Pkg__Api__V1alpha1__CreateContainerRequest *req;
	struct nri_delivery d;
	int r = UNPACK(
		p, "CreateContainer",
		nri__pkg__api__v1alpha1__create_container_request__unpack, in,
		req);

	if (r)
		return r;
	p->stats.containers++;
	if (!req->container) {
		r = end_session(p, -EBADMSG,
				"CreateContainer request without a container");
		goto ret;
	}
	r = nri_deliver_container(p->config(p), req->pod, req->container, &d);
	if (r) {
		end_session(p, r, "out of memory");
		goto ret;
	}
	p->stats.hooked += d.hooked;
	p->stats.copied += d.nr_copied;
	log_debug("container %s of pod %s: %zu keys copied, hooks %s",
		  LOG_Q(req->container->name),
		  LOG_Q(req->pod ? req->pod->name : ""), d.nr_copied,
		  d.hooked ? "added" : "not needed");
	rsp.adjust = &d.adjust;
	r = pack(&rsp.base, &ret->payload, &ret->len);
	nri_deliver_free(&d);
ret:
	nri__pkg__api__v1alpha1__create_container_request__free_unpacked(req,
									 NULL);
	return r;
}

/* A refusal is the reply's status; a StartContainer without a container
 * too (nothing to police is no reason to let it start). */
static int on_start(struct nri_plugin *p,
		    const Nri__Pkg__Api__V1alpha1__StateChangeEvent *evt,
		    struct reply *ret)
{
	int r;

	p->stats.started++;
	if (!evt->container) {
		snprintf(ret->why, sizeof(ret->why),
			 "StartContainer event without a container");
		r = -EINVAL;
	} else {
		r = p->start(p, evt->pod, evt->container, ret->why,
			     sizeof(ret->why));
	}
	if (r == -ENOMEM)
		return r;
	if (r) {
		p->stats.refused++;
		ret->code = CODE_PERMISSION_DENIED;
		return 0;
	}
	return empty_reply(ret);
}

static int on_state_change(struct nri_plugin *p, const ProtobufCBinaryData *in,
			   struct reply *ret)
{
	Nri__Pkg__Api__V1alpha1__StateChangeEvent *evt;
	int r = UNPACK(p, "StateChange",
		       nri__pkg__api__v1alpha1__state_change_event__unpack, in,
		       evt);

	if (r)
		return r;
	if (evt->event == NRI__PKG__API__V1ALPHA1__EVENT__RUN_POD_SANDBOX)
		p->stats.pods++;
	if (evt->event == NRI__PKG__API__V1ALPHA1__EVENT__START_CONTAINER &&
	    p->attaching) {
		r = on_start(p, evt, ret);
		nri__pkg__api__v1alpha1__state_change_event__free_unpacked(
			evt, NULL);
		return r;
	}
	if (p->pod_event && evt->pod &&
	    (evt->event == NRI__PKG__API__V1ALPHA1__EVENT__RUN_POD_SANDBOX ||
	     evt->event == NRI__PKG__API__V1ALPHA1__EVENT__REMOVE_POD_SANDBOX))
		p->pod_event(
			p, evt->pod,
			evt->event ==
				NRI__PKG__API__V1ALPHA1__EVENT__RUN_POD_SANDBOX);
	nri__pkg__api__v1alpha1__state_change_event__free_unpacked(evt, NULL);
	return empty_reply(ret);
}

static const struct method {
	const char *name;
	int (*fn)(struct nri_plugin *p, const ProtobufCBinaryData *in,
		  struct reply *out);
} methods[] = {
	{ "Configure", on_configure },	    { "Synchronize", on_synchronize },
	{ "Shutdown", on_shutdown },	    { "CreateContainer", on_create },
	{ "StateChange", on_state_change },
};

static const struct method *find_method(const Ttrpc__Request *req)
{
	if (!req->service || strcmp(req->service, NRI_SERVICE_PLUGIN) ||
	    !req->method)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (!strcmp(methods[i].name, req->method))
			return &methods[i];
	return NULL;
}

static int respond(struct nri_plugin *p, uint32_t stream,
		   const struct reply *rep)
{
	Ttrpc__Response rsp = TTRPC__RESPONSE__INIT;
	Status status = STATUS__INIT;
	/* google.rpc.Status's message (field 2), which the status.proto
	 * this is built from leaves out: an unknown field protobuf-c packs */
	/* protobuf-c writes an unknown field's data as it is: the length
	 * prefix (one byte: why is < 128) is part of it */
	size_t why_len = strnlen(rep->why, 127);
	uint8_t data[128];
	ProtobufCMessageUnknownField message = {
		.tag = 2,
		.wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED,
		.len = why_len + 1,
		.data = data,
	};

	data[0] = (uint8_t)why_len;
	memcpy(data + 1, rep->why, why_len);
	if (rep->code) {
		status.code = rep->code;
		if (why_len) {
			status.base.n_unknown_fields = 1;
			status.base.unknown_fields = &message;
		}
		rsp.status = &status;
	} else {
		rsp.payload.data = rep->payload;
		rsp.payload.len = rep->len;
	}
	return send_msg(p, TTRPC_MUX_CONN_PLUGIN, stream, TTRPC_RESPONSE,
			&rsp.base);
}

static int on_request(struct nri_plugin *p, const struct ttrpc_msg *msg)
{
	struct reply rep = { 0 };
	const struct method *m;
	Ttrpc__Request *req;
	int r;

	if (msg->type != TTRPC_REQUEST)
		return end_session(
			p, -EPROTO,
			"ttrpc message of type %u on the plugin's connection (a request expected)",
			msg->type);
	req = ttrpc__request__unpack(NULL, msg->len, msg->payload);
	if (!req)
		return end_session(p, -EBADMSG,
				   "malformed ttrpc request from the runtime");
	p->stats.requests++;
	m = find_method(req);
	if (m) {
		r = m->fn(p, &req->payload, &rep);
	} else {
		log_debug("unknown NRI method %s.%s: answered unimplemented",
			  LOG_Q(req->service), LOG_Q(req->method));
		rep.code = CODE_UNIMPLEMENTED;
		r = 0;
	}
	ttrpc__request__free_unpacked(req, NULL);
	if (r == -ENOMEM && !p->error[0])
		end_session(p, r, "out of memory");
	if (r)
		goto out;
	r = respond(p, msg->stream, &rep);
out:
	free(rep.payload);
	return r;
}

static int on_response(struct nri_plugin *p, const struct ttrpc_msg *msg)
{
	Ttrpc__Response *rsp;
	int code;

	if (msg->type != TTRPC_RESPONSE || msg->stream != p->register_stream ||
	    p->registered)
		return end_session(
			p, -EPROTO,
			"unexpected ttrpc message (type %u, stream %u) on the plugin's client connection",
			msg->type, msg->stream);
	rsp = ttrpc__response__unpack(NULL, msg->len, msg->payload);
	if (!rsp)
		return end_session(p, -EBADMSG,
				   "malformed ttrpc response from the runtime");
	code = rsp->status ? rsp->status->code : 0;
	ttrpc__response__free_unpacked(rsp, NULL);
	if (code)
		return end_session(
			p, -EPERM,
			"the runtime refused to register plugin %s-%s (status code %d)",
			p->idx, p->name, code);
	p->registered = true;
	return 0;
}

int nri_plugin_input(struct nri_plugin *p, const uint8_t *buf, size_t len)
{
	struct ttrpc_msg msg;
	int r = ttrpc_mux_feed(&p->mux, buf, len);

	while (!r) {
		r = ttrpc_mux_next(&p->mux, &msg);
		if (r <= 0)
			break;
		r = msg.conn == TTRPC_MUX_CONN_PLUGIN ? on_request(p, &msg) :
							on_response(p, &msg);
	}
	if (r < 0 && !p->error[0])
		end_session(p, r, "%s", p->mux.error);
	return r < 0 ? r : 0;
}
