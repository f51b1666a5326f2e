// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NRI plugin in memory: what it adds to a container (nri_deliver.c),
 * and whole sessions against a runtime played here (nri_plugin.c), with
 * messages made by protobuf-c as containerd's would be.
 *
 * Modules: `nri_plugin.c`, `nri_deliver.c`
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "nri/nri_plugin.h"
#include "tap.h"

/* --- a runtime, played here ---------------------------------------------- */

static struct ttrpc_mux sent; /* what the plugin wrote, decoded */
static int write_error;
static struct nri_deliver_config deliver = {
	.hook_path = "/usr/local/libexec/oci/hooks.d/oci-sockopt-hook",
};

static int capture(struct nri_plugin *p, const uint8_t *buf, size_t len)
{
	(void)p;
	if (write_error)
		return write_error;
	return ttrpc_mux_feed(&sent, buf, len);
}

static const struct nri_deliver_config *config(struct nri_plugin *p)
{
	(void)p;
	return &deliver;
}

/* NRI_SEED_FILE=PATH: the session test's bytes from the runtime, as a
 * seed for tests/fuzz/fuzz_nri.c (its first byte: 64-byte pieces). */
static FILE *seed;
static void seed_write(const uint8_t *wire, size_t len)
{
	if (seed)
		fwrite(wire, 1, len, seed);
}

static int pod_events;
static void on_pod(struct nri_plugin *p, const nri_pod *pod, bool running)
{
	(void)p;
	(void)pod;
	pod_events += running ? 1 : 100;
}

static int start(struct nri_plugin *p)
{
	ttrpc_mux_free(&sent);
	ttrpc_mux_init(&sent);
	write_error = 0;
	return nri_plugin_init(p, NRI_PLUGIN_NAME, NRI_PLUGIN_IDX, capture,
			       config);
}

/* The runtime sends a request for method with body on connection 1. */
static int call(struct nri_plugin *p, uint32_t stream, const char *method,
		const ProtobufCMessage *body)
{
	Ttrpc__Request req = TTRPC__REQUEST__INIT;
	struct ttrpc_msg msg = { .conn = TTRPC_MUX_CONN_PLUGIN,
				 .stream = stream,
				 .type = TTRPC_REQUEST };
	uint8_t *payload, *inner, *wire;
	size_t len, wire_len;
	int r;

	req.service = NRI_SERVICE_PLUGIN;
	req.method = (char *)method;
	req.payload.len = protobuf_c_message_get_packed_size(body);
	inner = malloc(req.payload.len + 1);
	protobuf_c_message_pack(body, inner);
	req.payload.data = inner;
	len = protobuf_c_message_get_packed_size(&req.base);
	payload = malloc(len + 1);
	protobuf_c_message_pack(&req.base, payload);
	msg.payload = payload;
	msg.len = len;
	ttrpc_mux_encode(&msg, &wire, &wire_len);
	seed_write(wire, wire_len);
	r = nri_plugin_input(p, wire, wire_len);
	free(inner);
	free(payload);
	free(wire);
	return r;
}

/* The plugin's next reply: its payload unpacked as Response. */
static Ttrpc__Response *reply(uint32_t *stream)
{
	struct ttrpc_msg msg;

	if (ttrpc_mux_next(&sent, &msg) != 1 || msg.type != TTRPC_RESPONSE ||
	    msg.conn != TTRPC_MUX_CONN_PLUGIN)
		return NULL;
	*stream = msg.stream;
	return ttrpc__response__unpack(NULL, msg.len, msg.payload);
}

static int answer_register(struct nri_plugin *p, int code)
{
	Ttrpc__Response rsp = TTRPC__RESPONSE__INIT;
	Status st = STATUS__INIT;
	struct ttrpc_msg msg = { .conn = TTRPC_MUX_CONN_RUNTIME,
				 .stream = 1,
				 .type = TTRPC_RESPONSE };
	uint8_t buf[64], *wire;
	size_t wire_len;
	int r;

	if (code) {
		st.code = code;
		rsp.status = &st;
	}
	msg.len = protobuf_c_message_pack(&rsp.base, buf);
	msg.payload = buf;
	ttrpc_mux_encode(&msg, &wire, &wire_len);
	seed_write(wire, wire_len);
	r = nri_plugin_input(p, wire, wire_len);
	free(wire);
	return r;
}

/* --- what the plugin adds to a container --------------------------------- */

static nri_pod_annotation pod_ann[8];
static nri_pod_annotation *pod_ann_ptrs[8];
static nri_pod pod;
static nri_container ctr;

static void make_pod(const char *const *kv, const char *name)
{
	size_t n = 0;

	nri__pkg__api__v1alpha1__pod_sandbox__init(&pod);
	for (; kv[2 * n]; n++) {
		nri__pkg__api__v1alpha1__pod_sandbox__annotations_entry__init(
			&pod_ann[n]);
		pod_ann[n].key = (char *)kv[2 * n];
		pod_ann[n].value = (char *)kv[2 * n + 1];
		pod_ann_ptrs[n] = &pod_ann[n];
	}
	pod.annotations = pod_ann_ptrs;
	pod.n_annotations = n;
	pod.name = "web-0";
	nri__pkg__api__v1alpha1__container__init(&ctr);
	ctr.name = (char *)name;
	ctr.id = "c0ffee";
}

static const char *adjusted(const struct nri_delivery *d, const char *key)
{
	for (size_t i = 0; i < d->adjust.n_annotations; i++)
		if (!strcmp(d->adjust.annotations[i]->key, key))
			return d->adjust.annotations[i]->value;
	return NULL;
}

static void test_applies(void)
{
	ok(nri_deliver_applies("sockopt-hook.io/policy", "web") &&
		   nri_deliver_applies("sockopt-hook.io/bypass-prot-mem",
				       NULL) &&
		   nri_deliver_applies("sockopt-hook.io/containers.policy",
				       "web") &&
		   nri_deliver_applies("sockopt-hook.io/policy.web", "web") &&
		   nri_deliver_applies("sockopt-hook.io/mode.web", "web") &&
		   nri_deliver_applies("sockopt-hook.io/record.web", "web"),
	   "pod-wide keys, lists, and KEY.<its name> apply to a container");
	ok(!nri_deliver_applies("sockopt-hook.io/policy.db", "web") &&
		   !nri_deliver_applies("sockopt-hook.io/policy.web", NULL) &&
		   !nri_deliver_applies("sockopt-hook.io/policy.web", "we") &&
		   !nri_deliver_applies("sockopt-hook.io/bypass-prot-mem.web2",
					"web"),
	   "KEY.<another container> does not");
	ok(!nri_deliver_applies("node.sockopt-hook.io/runtime-handler",
				"web") &&
		   !nri_deliver_applies("node.sockopt-hook.io/nri", "web") &&
		   !nri_deliver_applies("io.kubernetes.cri.container-type",
					"web") &&
		   !nri_deliver_applies("xsockopt-hook.io/policy", "web"),
	   "node.sockopt-hook.io/ and every other key: never copied");
}

static void test_deliver(void)
{
	static const char *const kv[] = {
		"sockopt-hook.io/policy.web",
		"restricted",
		"sockopt-hook.io/policy.db",
		"bulk",
		"sockopt-hook.io/containers.bypass-prot-mem",
		"db=true",
		"node.sockopt-hook.io/runtime-handler",
		"forged",
		"node.sockopt-hook.io/nri",
		"forged",
		"app.kubernetes.io/name",
		"web",
		NULL,
	};
	struct nri_delivery d;
	const nri_hooks *h;

	make_pod(kv, "web");
	ok(nri_deliver_container(&deliver, &pod, &ctr, &d) == 0 &&
		   d.nr_copied == 2 && d.adjust.n_annotations == 3,
	   "web: two pod keys copied, and the mark");
	is_str(adjusted(&d, "sockopt-hook.io/policy.web"), "restricted",
	       "web gets its policy.web");
	is_str(adjusted(&d, "sockopt-hook.io/containers.bypass-prot-mem"),
	       "db=true", "and the list (the hook picks its entry)");
	ok(!adjusted(&d, "sockopt-hook.io/policy.db") &&
		   !adjusted(&d, "node.sockopt-hook.io/runtime-handler") &&
		   !adjusted(&d, "app.kubernetes.io/name"),
	   "not db's key, not the pod's node.* key, not other keys");
	is_str(adjusted(&d, "node.sockopt-hook.io/nri"), "delivered",
	       "the plugin's mark replaces the pod's forged one");
	h = d.adjust.hooks;
	ok(h && h->n_create_runtime == 1 && h->n_poststop == 1 &&
		   !strcmp(h->create_runtime[0]->path, deliver.hook_path) &&
		   h->create_runtime[0]->n_args == 2 &&
		   !strcmp(h->create_runtime[0]->args[1], "createRuntime") &&
		   !strcmp(h->poststop[0]->args[1], "poststop") &&
		   !h->n_prestart,
	   "our createRuntime and poststop hooks, the installed binary");
	nri_deliver_free(&d);
}

static void test_no_keys(void)
{
	static const char *const none[] = { "app", "x", NULL };
	static const char *const other[] = { "sockopt-hook.io/policy.db",
					     "bulk", NULL };
	struct nri_delivery d;

	make_pod(none, "web");
	ok(nri_deliver_container(&deliver, &pod, &ctr, &d) == 0 &&
		   !d.adjust.hooks && !d.hooked && d.adjust.n_annotations == 1,
	   "no key, no defaults: the mark only, no hook");
	nri_deliver_free(&d);
	make_pod(other, "web");
	ok(nri_deliver_container(&deliver, &pod, &ctr, &d) == 0 &&
		   !d.adjust.hooks && d.nr_copied == 0,
	   "a key for another container only: no hook for this one");
	nri_deliver_free(&d);
	deliver.every_container = true;
	deliver.config_arg = "/etc/alt.json";
	make_pod(none, "web");
	ok(nri_deliver_container(&deliver, &pod, &ctr, &d) == 0 &&
		   d.adjust.hooks && d.adjust.hooks->n_create_runtime == 1 &&
		   d.adjust.hooks->create_runtime[0]->n_args == 4 &&
		   !strcmp(d.adjust.hooks->create_runtime[0]->args[1],
			   "--config") &&
		   !strcmp(d.adjust.hooks->create_runtime[0]->args[2],
			   "/etc/alt.json"),
	   "defaults or require_annotations: the hook for every container, with --config");
	nri_deliver_free(&d);
	deliver.every_container = false;
	deliver.config_arg = NULL;
}

/* The plugin's own directories go to the hooks it delivers. */
static void test_hook_env(void)
{
	static const char *const kv[] = { "sockopt-hook.io/policy",
					  "restricted", NULL };
	static char *env[] = { "OCI_SOCKOPT_HOOK_STATE_DIR=/run/alt",
			       "OCI_SOCKOPT_HOOK_PIN_DIR=/sys/fs/bpf/alt" };
	struct nri_delivery d;
	const nri_hooks *h;

	make_pod(kv, "app");
	ok(nri_deliver_container(&deliver, &pod, &ctr, &d) == 0 &&
		   d.adjust.hooks &&
		   !d.adjust.hooks->create_runtime[0]->n_env &&
		   !d.adjust.hooks->poststop[0]->n_env,
	   "no directory given to the plugin: the hooks get no environment");
	nri_deliver_free(&d);
	deliver.hook_env = env;
	deliver.n_hook_env = 2;
	ok(nri_deliver_container(&deliver, &pod, &ctr, &d) == 0 &&
		   (h = d.adjust.hooks) && h->create_runtime[0]->n_env == 2 &&
		   h->poststop[0]->n_env == 2 &&
		   !strcmp(h->create_runtime[0]->env[0], env[0]) &&
		   !strcmp(h->poststop[0]->env[1], env[1]),
	   "the plugin's state and pin directories: both hooks get them");
	nri_deliver_free(&d);
	deliver.plugin_attaches = true;
	ok(nri_deliver_container(&deliver, &pod, &ctr, &d) == 0 &&
		   (h = d.adjust.hooks) && !h->n_create_runtime &&
		   h->n_poststop == 1 && h->poststop[0]->n_env == 2,
	   "the plugin attaches: poststop only, with the directories");
	nri_deliver_free(&d);
	deliver.plugin_attaches = false;
	deliver.hook_env = NULL;
	deliver.n_hook_env = 0;
}

static void test_hook_there(void)
{
	static const char *const kv[] = { "sockopt-hook.io/policy",
					  "restricted", NULL };
	nri_hook pre = NRI__PKG__API__V1ALPHA1__HOOK__INIT, *pre_ptr = &pre;
	nri_hooks have = NRI__PKG__API__V1ALPHA1__HOOKS__INIT;
	struct nri_delivery d;

	make_pod(kv, "app");
	pre.path = (char *)deliver.hook_path;
	have.prestart = &pre_ptr;
	have.n_prestart = 1;
	ctr.hooks = &have;
	ok(nri_deliver_container(&deliver, &pod, &ctr, &d) == 0 &&
		   d.adjust.hooks && !d.adjust.hooks->n_create_runtime &&
		   d.adjust.hooks->n_poststop == 1 && d.nr_copied == 1,
	   "a base spec's prestart hook already there: no createRuntime added, poststop yes");
	nri_deliver_free(&d);
	have.poststop = &pre_ptr;
	have.n_poststop = 1;
	ok(nri_deliver_container(&deliver, &pod, &ctr, &d) == 0 &&
		   !d.adjust.hooks && d.hooked,
	   "both stages there: no hook added, the keys still copied");
	nri_deliver_free(&d);
}

/* --- sessions ------------------------------------------------------------ */

static void test_session(void)
{
	Nri__Pkg__Api__V1alpha1__ConfigureRequest cfg =
		NRI__PKG__API__V1ALPHA1__CONFIGURE_REQUEST__INIT;
	Nri__Pkg__Api__V1alpha1__SynchronizeRequest sync =
		NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_REQUEST__INIT;
	Nri__Pkg__Api__V1alpha1__CreateContainerRequest create =
		NRI__PKG__API__V1ALPHA1__CREATE_CONTAINER_REQUEST__INIT;
	Nri__Pkg__Api__V1alpha1__RegisterPluginRequest *reg;
	Nri__Pkg__Api__V1alpha1__ConfigureResponse *cfg_rsp;
	Nri__Pkg__Api__V1alpha1__SynchronizeResponse *sync_rsp;
	Nri__Pkg__Api__V1alpha1__CreateContainerResponse *create_rsp;
	static const char *const kv[] = { "sockopt-hook.io/policy",
					  "restricted", NULL };
	nri_pod *pods[1] = { &pod };
	struct nri_plugin p;
	Ttrpc__Request *req;
	Ttrpc__Response *rsp;
	struct ttrpc_msg msg;
	uint32_t stream = 0;

	ok(start(&p) == 0 && nri_plugin_register(&p) == 0 &&
		   ttrpc_mux_next(&sent, &msg) == 1 &&
		   msg.conn == TTRPC_MUX_CONN_RUNTIME && msg.stream == 1 &&
		   msg.type == TTRPC_REQUEST,
	   "RegisterPlugin: a request on connection 2, stream 1");
	req = ttrpc__request__unpack(NULL, msg.len, msg.payload);
	reg = req ? nri__pkg__api__v1alpha1__register_plugin_request__unpack(
			    NULL, req->payload.len, req->payload.data) :
		    NULL;
	ok(req && reg && !strcmp(req->service, NRI_SERVICE_RUNTIME) &&
		   !strcmp(req->method, "RegisterPlugin") &&
		   !strcmp(reg->plugin_name, "oci-sockopt-hook") &&
		   !strcmp(reg->plugin_idx, "50"),
	   "Runtime.RegisterPlugin as oci-sockopt-hook, index 50");
	nri__pkg__api__v1alpha1__register_plugin_request__free_unpacked(reg,
									NULL);
	ttrpc__request__free_unpacked(req, NULL);
	ok(answer_register(&p, 0) == 0 && p.registered, "registered");

	cfg.runtime_name = "containerd";
	cfg.runtime_version = "v2.1.9";
	cfg.request_timeout = 2000;
	ok(call(&p, 1, "Configure", &cfg.base) == 0 && p.configured &&
		   !strcmp(p.runtime, "containerd"),
	   "Configure answered");
	rsp = reply(&stream);
	cfg_rsp = rsp ? nri__pkg__api__v1alpha1__configure_response__unpack(
				NULL, rsp->payload.len, rsp->payload.data) :
			NULL;
	ok(stream == 1 && cfg_rsp && !rsp->status && cfg_rsp->events == 0xd,
	   "the subscription: RunPodSandbox, RemovePodSandbox, CreateContainer (0x%x)",
	   cfg_rsp ? cfg_rsp->events : 0);
	nri__pkg__api__v1alpha1__configure_response__free_unpacked(cfg_rsp,
								   NULL);
	ttrpc__response__free_unpacked(rsp, NULL);

	make_pod(kv, "app");
	p.pod_event = on_pod;
	sync.more = true;
	sync.pods = pods;
	sync.n_pods = 1;
	ok(call(&p, 3, "Synchronize", &sync.base) == 0 && !p.synchronized,
	   "a split Synchronize, first part");
	rsp = reply(&stream);
	sync_rsp = rsp ? nri__pkg__api__v1alpha1__synchronize_response__unpack(
				 NULL, rsp->payload.len, rsp->payload.data) :
			 NULL;
	ok(sync_rsp && sync_rsp->more && !sync_rsp->n_update,
	   "answered with more = true and no update, as the stub does");
	nri__pkg__api__v1alpha1__synchronize_response__free_unpacked(sync_rsp,
								     NULL);
	ttrpc__response__free_unpacked(rsp, NULL);
	sync.more = false;
	ok(call(&p, 5, "Synchronize", &sync.base) == 0 && p.synchronized &&
		   pod_events == 2,
	   "the last part: synchronized; each pod seen as running");
	ttrpc__response__free_unpacked(reply(&stream), NULL);

	create.pod = &pod;
	create.container = &ctr;
	ctr.hooks = NULL;
	ok(call(&p, 7, "CreateContainer", &create.base) == 0,
	   "CreateContainer answered");
	rsp = reply(&stream);
	create_rsp =
		rsp ? nri__pkg__api__v1alpha1__create_container_response__unpack(
			      NULL, rsp->payload.len, rsp->payload.data) :
		      NULL;
	ok(stream == 7 && create_rsp && create_rsp->adjust &&
		   create_rsp->adjust->n_annotations == 2 &&
		   create_rsp->adjust->hooks &&
		   create_rsp->adjust->hooks->n_create_runtime == 1 &&
		   p.stats.containers == 1 && p.stats.hooked == 1,
	   "its adjustment on the wire: the key, the mark, the hooks");
	nri__pkg__api__v1alpha1__create_container_response__free_unpacked(
		create_rsp, NULL);
	ttrpc__response__free_unpacked(rsp, NULL);

	ok(call(&p, 9, "ValidateContainerAdjustment", &cfg.base) == 0 &&
		   (rsp = reply(&stream)) && rsp->status &&
		   rsp->status->code == 12,
	   "a method a newer runtime might call: answered unimplemented, the session goes on");
	ttrpc__response__free_unpacked(rsp, NULL);
	ok(call(&p, 11, "Shutdown", &cfg.base) == 0 && p.shutdown,
	   "Shutdown: the runtime is going down");
	nri_plugin_free(&p);
}

static void test_bad_session(void)
{
	Nri__Pkg__Api__V1alpha1__ConfigureRequest cfg =
		NRI__PKG__API__V1ALPHA1__CONFIGURE_REQUEST__INIT;
	uint8_t garbage[] = { 0, 0, 0, 1, 0, 0, 0, 13,	 0,    0,   0,
			      3, 0, 0, 0, 1, 1, 0, 0xff, 0xff, 0xff };
	struct nri_plugin p;
	int r;

	start(&p);
	nri_plugin_register(&p);
	r = answer_register(&p, 9);
	ok(r == -EPERM && strstr(p.error, "refused to register") &&
		   strstr(p.error, "status code 9"),
	   "a refused registration ends the session: %s", p.error);
	nri_plugin_free(&p);

	start(&p);
	r = nri_plugin_input(&p, garbage, sizeof(garbage));
	ok(r == -EBADMSG &&
		   !strcmp(p.error, "malformed ttrpc request from the runtime"),
	   "a request that is not protobuf: %s", p.error);
	nri_plugin_free(&p);

	start(&p);
	garbage[16] = TTRPC_DATA;
	r = nri_plugin_input(&p, garbage, sizeof(garbage));
	ok(r == -EPROTO && strstr(p.error, "type 3"),
	   "a stream data message: %s", p.error);
	nri_plugin_free(&p);

	start(&p);
	cfg.runtime_name = "containerd";
	write_error = -EPIPE;
	r = call(&p, 1, "Configure", &cfg.base);
	ok(r == -EPIPE && strstr(p.error, "cannot write to the runtime"),
	   "a reply that cannot be written: %s", p.error);
	nri_plugin_free(&p);

	ok(nri_plugin_init(&p, "bad name", "50", capture, config) == -EINVAL &&
		   nri_plugin_init(&p, "ok", "5", capture, config) == -EINVAL &&
		   nri_plugin_init(&p, "ok", "a1", capture, config) == -EINVAL,
	   "a name or index NRI would refuse is refused first");
}

int main(void)
{
	log_set_level(-1);
	test_applies();
	test_deliver();
	test_no_keys();
	test_hook_there();
	test_hook_env();
	if (getenv("NRI_SEED_FILE")) {
		seed = fopen(getenv("NRI_SEED_FILE"), "we");
		if (seed)
			fputc(0x3f, seed);
	}
	test_session();
	if (seed)
		fclose(seed);
	seed = NULL;
	test_bad_session();
	ttrpc_mux_free(&sent);
	return tap_done();
}
