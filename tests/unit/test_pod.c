// SPDX-License-Identifier: GPL-2.0-only
/*
 * container.c: who a container is, from the keys containerd and CRI-O write: a
 * sandbox only when every type key says so, the name from the key set of
 * the runtime that wrote the type key, names that are not Kubernetes or
 * podman names refused with one line.
 *
 * Modules: `container.c`
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "input/container.h"
#include "helpers.h"
#include "input/oci.h"
#include "tap.h"

#define CD_TYPE "io.kubernetes.cri.container-type"
#define CD_NAME "io.kubernetes.cri.container-name"
#define CD_NS "io.kubernetes.cri.sandbox-namespace"
#define CD_POD "io.kubernetes.cri.sandbox-name"
#define CO_TYPE "io.kubernetes.cri-o.ContainerType"
#define CO_NAME "io.kubernetes.container.name"
#define CO_NS "io.kubernetes.pod.namespace"
#define CO_POD "io.kubernetes.pod.name"

/* An OCI state whose annotations are the key/value pairs given (NULL
 * ends them), as the runtime passes it on stdin. */
static int state_with(struct oci_state *st, const char *const *kv)
{
	char text[4096];
	size_t used;
	struct sh_error err = { 0 };

	used = (size_t)snprintf(
		text, sizeof(text),
		"{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"created\",\"pid\":1,\"bundle\":\"/nonexistent\",\"annotations\":{");
	for (int i = 0; kv[i]; i += 2)
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "%s\"%s\":\"%s\"", i ? "," : "", kv[i],
					 kv[i + 1]);
	used += (size_t)snprintf(text + used, sizeof(text) - used, "}}");
	return reported(oci_parse_state(text, used, st, &err), &err);
}

/* Who the container read from those annotations is, and container_pod_check on
 * it; *said holds what it said. */
static int identify(const char *const *kv, struct pod_identity *id,
		    struct oci_state *st, const char **said)
{
	struct sh_error err = { 0 };
	struct sh_container c;
	int r;

	if (state_with(st, kv))
		return -999;
	container_read(st, &c);
	*id = c.who;
	capture_start();
	r = reported(container_pod_check(id, &err), &err);
	*said = capture_end();
	return r;
}

#define KV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_valid_name(void)
{
	char longest[SH_MAX_CONTAINER_NAME + 2];

	ok(container_pod_valid_name("web"), "a DNS label is a name");
	ok(container_pod_valid_name("Web_1.x-y"),
	   "podman's [A-Za-z0-9_.-] is a name");
	ok(container_pod_valid_name("0abc"), "a leading digit is allowed");
	ok(!container_pod_valid_name(""), "the empty string is not a name");
	ok(!container_pod_valid_name("-web"), "a leading '-' is not");
	ok(!container_pod_valid_name(".web"), "a leading '.' is not");
	ok(!container_pod_valid_name("_web"), "a leading '_' is not");
	ok(!container_pod_valid_name("we b"), "a space is not");
	ok(!container_pod_valid_name("web/x"), "a '/' is not");
	ok(!container_pod_valid_name("w\xc3\xa9"), "a non-ASCII byte is not");
	memset(longest, 'a', SH_MAX_CONTAINER_NAME);
	longest[SH_MAX_CONTAINER_NAME] = '\0';
	ok(container_pod_valid_name(longest), "%d bytes is a name",
	   SH_MAX_CONTAINER_NAME);
	longest[SH_MAX_CONTAINER_NAME] = 'a';
	longest[SH_MAX_CONTAINER_NAME + 1] = '\0';
	ok(!container_pod_valid_name(longest), "%d bytes is not",
	   SH_MAX_CONTAINER_NAME + 1);
}

static void test_identify(void)
{
	struct pod_identity id;
	struct oci_state st;
	const char *said;
	int r;

	r = identify(KV("x", "y"), &id, &st, &said);
	ok(r == 0 && !id.sandbox && !id.runtime && !id.name && !id.pod,
	   "no runtime key: no sandbox, no runtime, no name");
	oci_state_free(&st);

	r = identify(KV(CD_TYPE, "container", CD_NAME, "web", CD_NS, "prod",
			CD_POD, "shop-1"),
		     &id, &st, &said);
	ok(r == 0 && !id.sandbox && id.runtime &&
		   !strcmp(id.runtime, "containerd"),
	   "containerd's type key: a containerd container");
	is_str(id.name, "web", "... named by io.kubernetes.cri.container-name");
	is_str(id.name_key, CD_NAME, "... and the key it came from is said");
	is_str(id.namespace, "prod", "... its pod's namespace");
	is_str(id.pod, "shop-1", "... and pod name");
	oci_state_free(&st);

	r = identify(KV(CD_TYPE, "sandbox", CD_NAME, "x"), &id, &st, &said);
	ok(r == 0 && id.sandbox && !id.name,
	   "containerd's \"sandbox\": the pause container, no name taken");
	oci_state_free(&st);

	r = identify(KV(CO_TYPE, "container", CO_NAME, "db", CO_NS, "ns",
			CO_POD, "p", CD_NAME, "forged"),
		     &id, &st, &said);
	ok(r == 0 && id.runtime && !strcmp(id.runtime, "CRI-O"),
	   "CRI-O's type key: a CRI-O container");
	is_str(id.name, "db",
	       "... named by CRI-O's key, not a copied containerd key");
	oci_state_free(&st);

	/* CRI-O copies every pod annotation: a pod author's containerd
	 * "sandbox" must not make a CRI-O container unpoliced. */
	r = identify(KV(CO_TYPE, "container", CO_NAME, "db", CD_TYPE,
			"sandbox"),
		     &id, &st, &said);
	ok(r == 0 && !id.sandbox && !strcmp(id.runtime, "CRI-O"),
	   "a copied \"sandbox\" cannot outvote the runtime's \"container\"");
	oci_state_free(&st);

	r = identify(KV(CO_TYPE, "sandbox", CD_TYPE, "sandbox"), &id, &st,
		     &said);
	ok(r == 0 && id.sandbox, "every type key says sandbox: a sandbox");
	oci_state_free(&st);

	r = identify(KV(CO_TYPE, "container", CO_NAME, "a", CD_TYPE,
			"container", CD_NAME, "b"),
		     &id, &st, &said);
	is_str(id.name, "a", "both runtimes claim it: CRI-O's key set wins");
	oci_state_free(&st);

	r = identify(KV(CO_NAME, "byhand"), &id, &st, &said);
	ok(r == 0 && !id.runtime && id.name && !strcmp(id.name, "byhand") &&
		   !strcmp(id.name_key, CO_NAME),
	   "no type key: the name a runc user set by hand, no runtime");
	oci_state_free(&st);

	r = identify(KV(CD_TYPE, "container", CD_NAME, "bad name"), &id, &st,
		     &said);
	ok(r == -EINVAL && count_lines(said) == 1 &&
		   strstr(said, "container name 'bad name' (from " CD_NAME
				") refused"),
	   "a container name with a space: -EINVAL, one line naming value and key");
	oci_state_free(&st);

	r = identify(KV(CO_TYPE, "container", CO_NAME, "ok", CO_NS, "n\\ns"),
		     &id, &st, &said);
	ok(r == -EINVAL && strstr(said, "pod namespace 'n\\ns' (from " CO_NS) &&
		   count_lines(said) == 1,
	   "a namespace with a newline: refused, the newline quoted (%s)",
	   said);
	oci_state_free(&st);

	r = identify(KV(CD_TYPE, "container", CD_NAME, "ok", CD_POD, "-p"), &id,
		     &st, &said);
	ok(r == -EINVAL && strstr(said, "pod name '-p'"),
	   "a pod name starting with '-': refused");
	oci_state_free(&st);

	r = identify(KV(CD_TYPE, "sandbox", CD_NAME, "bad name"), &id, &st,
		     &said);
	ok(r == 0 && id.sandbox,
	   "a sandbox's names are never read, so never refused");
	oci_state_free(&st);
}

/* The owner a pod's name says, as the controllers name their pods. */
static void test_owner(void)
{
	static const struct {
		const char *pod, *owner, *what;
	} cases[] = {
		{ "web-7d4b9c8f6d-x2k9p", "web", "a Deployment's replica" },
		{ "web-5c9f8d7b4-q8r4t", "web",
		  "the same Deployment's replica after a rollout" },
		{ "api-v2-7d4b9c8f6d-x2k9p", "api-v2",
		  "a Deployment whose name has a '-'" },
		{ "log-agent-zx4kq", "log-agent", "a DaemonSet's pod" },
		{ "web-db-zx4kq", "web-db",
		  "a 2-byte last part is a name, not a template hash" },
		{ "web-0", "web", "a StatefulSet's pod 0" },
		{ "web-12", "web", "a StatefulSet's pod 12" },
		{ "redis", "redis", "a bare pod is its own owner" },
		{ "web-abcde", "web-abcde",
		  "5 bytes with vowels are no generated suffix" },
		{ "-", "-", "no name" },
		{ "x2k9p", "x2k9p",
		  "a suffix with nothing before it is a name" },
		{ "web-", "web-", "an empty last part is kept" },
	};
	char owner[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		container_pod_owner(cases[i].pod, owner, sizeof(owner));
		is_str(owner, cases[i].owner, "owner of %s: %s", cases[i].pod,
		       cases[i].what);
	}
	container_pod_owner(NULL, owner, sizeof(owner));
	is_str(owner, "-", "owner of no pod: -");
	container_pod_owner("web-7d4b9c8f6d-x2k9p", owner, 3);
	is_str(owner, "we", "cut to the buffer");
}

int main(void)
{
	test_valid_name();
	test_owner();
	test_identify();
	return tap_done();
}
