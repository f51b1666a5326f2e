// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container description (container.c), read once from the state and
 * the bundle: what each runtime's annotation set reads as (containerd's,
 * CRI-O's with a pod's copy of containerd's keys, a sandbox, podman and
 * runc without type keys, the sandbox id from the type writer's keys, the
 * bundle's keys under the state's), and what a hostile pod author can
 * write: duplicate keys, a container named twice in a list, oversized
 * values, list entries and names, a look-alike of node.sockopt-hook.io/.
 *
 * Modules: `container.c`
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "input/container.h"
#include "input/oci.h"
#include "tap.h"

#define STATE(ann)                                                         \
	"{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\"," \
	"\"bundle\":\"/b\",\"pid\":7,\"annotations\":{" ann "}}"
#define CONTAINERD                                            \
	"\"io.kubernetes.cri.container-type\":\"container\"," \
	"\"io.kubernetes.cri.container-name\":\"app\","       \
	"\"io.kubernetes.cri.sandbox-name\":\"web\","         \
	"\"io.kubernetes.cri.sandbox-namespace\":\"shop\","   \
	"\"io.kubernetes.cri.sandbox-id\":\"abc123\""
#define CRIO                                                   \
	"\"io.kubernetes.cri-o.ContainerType\":\"container\"," \
	"\"io.kubernetes.container.name\":\"db\","             \
	"\"io.kubernetes.pod.name\":\"store\","                \
	"\"io.kubernetes.pod.namespace\":\"data\""

static struct oci_state st;
static struct sh_container c;

/* Parses a state and reads the container: 0, or the parser's error. */
static int read_state(const char *text)
{
	struct sh_error err = { 0 };
	int r;

	oci_state_free(&st);
	memset(&st, 0, sizeof(st));
	r = oci_parse_state(text, strlen(text), &st, &err);
	if (!r)
		container_read(&st, &c);
	return r;
}

static int pick(enum container_setting s, struct annotation_pick *p, char *said,
		size_t len)
{
	struct sh_error err = { 0 };
	int r = container_pick(&c, s, p, &err);

	snprintf(said, len, "%s", r ? error_text(&err, r) : "");
	return r;
}

static bool eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static void test_containerd(void)
{
	struct annotation_pick p;
	char said[512];

	ok(!read_state(STATE(CONTAINERD
			     ",\"sockopt-hook.io/policy\":\"web\","
			     "\"sockopt-hook.io/policy.app\":\"bulk\","
			     "\"sockopt-hook.io/containers.bypass-prot-mem\":"
			     "\"db=false, app = true\"")),
	   "containerd: state read");
	ok(eq(c.id, "c1") && eq(c.bundle, "/b") && c.pid == 7 && c.st == &st,
	   "containerd: id, bundle, pid");
	ok(!c.who.sandbox && eq(c.who.runtime, "containerd") &&
		   eq(c.who.name, "app") && eq(c.who.pod, "web") &&
		   eq(c.who.namespace, "shop") &&
		   eq(c.who.name_key, "io.kubernetes.cri.container-name"),
	   "containerd: identity from its own keys");
	ok(eq(c.sandbox_id, "abc123") &&
		   eq(c.who.sandbox_id_key, "io.kubernetes.cri.sandbox-id") &&
		   !c.handler && !c.nri_mark && c.has_policy_key,
	   "containerd: sandbox id, no node keys, a policy key");
	ok(!pick(CONTAINER_POLICY, &p, said, sizeof(said)) &&
		   eq(p.key, "sockopt-hook.io/policy.app") &&
		   eq(p.value, "bulk"),
	   "KEY.<name> over KEY");
	ok(!pick(CONTAINER_BYPASS, &p, said, sizeof(said)) &&
		   eq(p.key,
		      "sockopt-hook.io/containers.bypass-prot-mem[app]") &&
		   eq(p.value, "true"),
	   "the container's list entry, spaces trimmed");
	ok(!pick(CONTAINER_RECORD, &p, said, sizeof(said)) &&
		   eq(p.key, "sockopt-hook.io/record") && !p.value,
	   "no record key: NULL, under the pod-level key");
}

static void test_crio(void)
{
	struct annotation_pick p;
	char said[512];

	/* A pod's copy of containerd's keys, as CRI-O passes every pod
	 * annotation: CRI-O's own keys name the container. */
	ok(!read_state(STATE(
		   "\"io.kubernetes.cri.container-type\":\"container\","
		   "\"io.kubernetes.cri.container-name\":\"evil\","
		   "\"sockopt-hook.io/containers.mode\":\"evil=audit\"," CRIO)),
	   "CRI-O: state read");
	ok(eq(c.who.runtime, "CRI-O") && eq(c.who.name, "db") &&
		   eq(c.who.pod, "store") && eq(c.who.namespace, "data") &&
		   !c.sandbox_id,
	   "CRI-O: its keys win over a pod's copy of containerd's");
	ok(!pick(CONTAINER_MODE, &p, said, sizeof(said)) && !p.value &&
		   eq(p.key, "sockopt-hook.io/mode"),
	   "CRI-O: the copy's name gets nothing of the list");
	ok(!c.has_policy_key, "CRI-O: mode alone is no hooks.d policy key");
	/* CRI-O writes its SandboxID after the pod's annotations: a pod's
	 * containerd-style sandbox-id ("crio" matched every crio-<id>.scope
	 * as a substring) is not the sandbox's id. */
	ok(!read_state(
		   STATE("\"io.kubernetes.cri.sandbox-id\":\"crio\","
			 "\"io.kubernetes.cri-o.SandboxID\":\"f00d\"," CRIO)),
	   "CRI-O with a pod's sandbox-id: state read");
	ok(eq(c.sandbox_id, "f00d") &&
		   eq(c.who.sandbox_id_key, "io.kubernetes.cri-o.SandboxID"),
	   "CRI-O: the sandbox id is CRI-O's SandboxID, not the pod's copy");
	/* Under containerd a pod's copy of CRI-O's type key (globs that let
	 * it through) must not hide containerd's sandbox id. */
	ok(!read_state(STATE(CONTAINERD
			     ",\"io.kubernetes.cri-o.ContainerType\":"
			     "\"container\"")),
	   "containerd with a pod's CRI-O type key: state read");
	ok(eq(c.sandbox_id, "abc123") &&
		   eq(c.who.sandbox_id_key, "io.kubernetes.cri.sandbox-id"),
	   "... containerd's sandbox id still counts (cgroup names check it)");
	ok(!read_state(STATE("\"io.kubernetes.cri.sandbox-id\":\"abc\"")),
	   "no type key: state read");
	ok(!c.sandbox_id, "no type key: no runtime vouches for a sandbox id");
}

static void test_sandbox(void)
{
	ok(!read_state(STATE("\"io.kubernetes.cri.container-type\":\"sandbox\","
			     "\"io.kubernetes.cri.sandbox-name\":\"web\","
			     "\"io.kubernetes.cri.sandbox-namespace\":\"shop\","
			     "\"io.kubernetes.cri.container-name\":\"x\"")),
	   "sandbox: state read");
	ok(c.who.sandbox && !c.who.name && eq(c.who.pod, "web") &&
		   eq(c.who.runtime, "containerd"),
	   "containerd sandbox: no container name, the pod's names");
	/* A pod's copied "sandbox" cannot outvote the runtime's type. */
	ok(!read_state(STATE(CRIO ",\"io.kubernetes.cri.container-type\":"
				  "\"sandbox\"")),
	   "copied sandbox type: state read");
	ok(!c.who.sandbox && eq(c.who.runtime, "CRI-O") && eq(c.who.name, "db"),
	   "a copied sandbox type does not make a sandbox");
}

static void test_podman(void)
{
	struct annotation_pick p;
	char said[512];

	ok(!read_state(STATE("\"io.container.manager\":\"libpod\","
			     "\"sockopt-hook.io/policy\":\"web\"")),
	   "podman: state read");
	ok(!c.who.runtime && !c.who.name && !c.who.pod && !c.who.sandbox,
	   "podman/runc: no runtime, no names");
	ok(!pick(CONTAINER_POLICY, &p, said, sizeof(said)) &&
		   eq(p.key, "sockopt-hook.io/policy") && eq(p.value, "web"),
	   "podman: the plain key");
	/* Set by hand without a type key: the first set with a name. */
	ok(!read_state(STATE("\"io.kubernetes.container.name\":\"h\"")),
	   "hand-set name: state read");
	ok(!c.who.runtime && eq(c.who.name, "h"),
	   "hand-set name without a type key: named, no runtime");
}

/* The bundle's annotations join the state's, which win: read again. */
static void test_bundle(void)
{
	static const char cfg[] =
		"{\"annotations\":{"
		"\"node.sockopt-hook.io/runtime-handler\":\"sockopt\","
		"\"node.sockopt-hook.io/nri\":\"1\","
		"\"sockopt-hook.io/policy\":\"bulk\"}}";
	struct sh_error err = { 0 };

	ok(!read_state(STATE(CONTAINERD
			     ",\"node.sockopt-hook.io/runtime-handler\":"
			     "\"runc\"")),
	   "bundle: state read");
	ok(!oci_parse_bundle_config("config.json", cfg, strlen(cfg), &st, &err),
	   "bundle: config.json read");
	container_read(&st, &c);
	ok(eq(c.handler, "runc") && eq(c.nri_mark, "1") && c.has_policy_key &&
		   eq(c.setting[CONTAINER_POLICY].plain, "bulk"),
	   "the state's node key over the bundle's; the bundle's others");
}

static void test_hostile(void)
{
	struct annotation_pick p;
	char said[512], big[4096 + 64], name[300];
	struct sh_error err = { 0 };

	/* A duplicate key: json-c keeps the last, one value. */
	ok(!read_state(STATE("\"sockopt-hook.io/policy\":\"a\","
			     "\"sockopt-hook.io/policy\":\"b\"")) &&
		   eq(c.setting[CONTAINER_POLICY].plain, "b"),
	   "a duplicate key: one value, the last");
	ok(!read_state(STATE(CONTAINERD ",\"sockopt-hook.io/containers."
					"policy\":\"app=a, app=b\"")),
	   "a list naming the container twice: state read");
	ok(pick(CONTAINER_POLICY, &p, said, sizeof(said)) == -EINVAL &&
		   strstr(said, "a container named twice"),
	   "a container named twice in a list is refused");
	/* Oversized values: kept whole (policy.c refuses the name), an
	 * overlong list entry refused. */
	memset(big, 'x', 4096);
	big[4096] = '\0';
	snprintf(said, sizeof(said), "%s", "");
	{
		char text[16384];

		snprintf(text, sizeof(text),
			 STATE(CONTAINERD ",\"sockopt-hook.io/policy\":\"%s\","
					  "\"sockopt-hook.io/containers."
					  "bypass-prot-mem\":\"app=%s\""),
			 big, big);
		ok(!read_state(text), "oversized values: state read");
	}
	ok(!pick(CONTAINER_POLICY, &p, said, sizeof(said)) && p.value &&
		   strlen(p.value) == 4096,
	   "an oversized value is kept whole for its reader to refuse");
	ok(pick(CONTAINER_BYPASS, &p, said, sizeof(said)) == -EINVAL &&
		   strstr(said, "an empty or overlong value"),
	   "an oversized list entry is refused");
	/* An oversized name: kept (the audit line shows it), refused by
	 * container_pod_check, and its KEY.<name> cut to fit without overflow. */
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	{
		char text[1024];

		snprintf(text, sizeof(text),
			 STATE("\"io.kubernetes.cri.container-type\":"
			       "\"container\","
			       "\"io.kubernetes.cri.container-name\":\"%s\""),
			 name);
		ok(!read_state(text), "oversized name: state read");
	}
	ok(eq(c.who.name, name) &&
		   strlen(c.setting[CONTAINER_POLICY].named_key) <
			   SH_ANNOTATION_KEY_MAX,
	   "an oversized name is kept, its scoped key cut to fit");
	ok(container_pod_check(&c.who, &err) == -EINVAL &&
		   strstr(error_text(&err, -EINVAL), "container name 'nnn"),
	   "an oversized name is refused by container_pod_check");
	/* A pod author's node.sockopt-hook.io/ look-alike of our keys is
	 * none of them. */
	ok(!read_state(STATE(CONTAINERD
			     ",\"node.sockopt-hook.io/policy\":"
			     "\"open\","
			     "\"sockopt-hook.io/policyx\":\"open\"")),
	   "look-alike keys: state read");
	ok(!c.has_policy_key && !c.setting[CONTAINER_POLICY].plain &&
		   !c.setting[CONTAINER_POLICY].named,
	   "node.sockopt-hook.io/policy and policyx are not policy keys");
}

int main(void)
{
	test_containerd();
	test_crio();
	test_sandbox();
	test_podman();
	test_bundle();
	test_hostile();
	oci_state_free(&st);
	return tap_done();
}
