// SPDX-License-Identifier: GPL-2.0-only
/*
 * require_annotations: its parser, and which containers it refuses.
 *
 * Modules: `policy.c`, `config.c`
 */
#include <errno.h>
#include <string.h>

#include "config/config.h"
#include "helpers.h"
#include "input/oci.h"
#include "policy/policy.h"
#include "tap.h"

#define CFG(req) "{\"require_annotations\":" req "}"
#define HANDLER "\"node.sockopt-hook.io/runtime-handler\":"
#define CONTAINERD                                            \
	"\"io.kubernetes.cri.container-type\":\"container\"," \
	"\"io.kubernetes.cri.container-name\":\"app\","       \
	"\"io.kubernetes.cri.sandbox-name\":\"web\","         \
	"\"io.kubernetes.cri.sandbox-namespace\":\"shop\""
#define CRIO                                                   \
	"\"io.kubernetes.cri-o.ContainerType\":\"container\"," \
	"\"io.kubernetes.container.name\":\"db\","             \
	"\"io.kubernetes.pod.name\":\"store\","                \
	"\"io.kubernetes.pod.namespace\":\"data\""

static void test_parse(void)
{
	struct sh_config cfg;
	int r = parse_config(
		CFG("{\"runtime_handlers\":[\"sockopt\",\"b-2\"]}"), &cfg);

	ok(r == 0 && cfg.require.nr_handlers == 2 &&
		   !strcmp(cfg.require.handlers[1], "b-2") &&
		   cfg.require.on_missing == ON_MISSING_REFUSE,
	   "two handlers, on_missing refuse by default");
	if (!r)
		config_free(&cfg);
	r = parse_config(CFG("{\"runtime_handlers\":[\"x\"],"
			     "\"on_missing\":\"warn\"}"),
			 &cfg);
	ok(r == 0 && cfg.require.on_missing == ON_MISSING_WARN,
	   "on_missing warn");
	if (!r)
		config_free(&cfg);
	r = parse_config("{}", &cfg);
	ok(r == 0 && cfg.require.nr_handlers == 0, "absent: off");
	if (!r)
		config_free(&cfg);
}

static void test_refusals(void)
{
	config_refused(CFG("[]"), "require_annotations: must be an object",
		       "a list");
	config_refused(
		CFG("{}"),
		"require_annotations.runtime_handlers: needs at least one",
		"no handlers");
	config_refused(CFG("{\"runtime_handlers\":[]}"),
		       "runtime_handlers: needs at least one", "an empty list");
	config_refused(CFG("{\"runtime_handlers\":\"sockopt\"}"),
		       "runtime_handlers: must be an array", "a string");
	config_refused(CFG("{\"runtime_handlers\":[7]}"),
		       "runtime_handlers[0]: must be a string", "a number");
	config_refused(
		CFG("{\"runtime_handlers\":[\"Sockopt\"]}"),
		"runtime_handlers[0]: 'Sockopt' is not a runtime handler name",
		"an upper-case handler");
	config_refused(CFG("{\"runtime_handlers\":[\"-a\"]}"),
		       "'-a' is not a runtime handler name", "a leading '-'");
	config_refused(CFG("{\"runtime_handlers\":[\"\"]}"),
		       "'' is not a runtime handler name", "an empty name");
	config_refused(CFG("{\"runtime_handlers\":[\"a\",\"a\"]}"),
		       "runtime_handlers[1]: 'a' is listed twice",
		       "a duplicate");
	config_refused(
		CFG("{\"runtime_handlers\":[\"a\"],"
		    "\"on_missing\":\"deny\"}"),
		"on_missing: unknown value 'deny' (expected 'refuse' or 'warn')",
		"an unknown on_missing");
	config_refused(
		CFG("{\"runtime_handlers\":[\"a\"],\"action\":\"warn\"}"),
		"require_annotations.action: unknown key", "a typo");
}

/* policy_require_check on a state with these annotations: its code, and what it
 * said on stderr (the refusal reported as prestart does, or a warning). */
static int check(const char *cfg_text, const char *annotations,
		 const char **said)
{
	char text[2048];
	struct sh_error err = { 0 };
	struct sh_container c;
	struct oci_state st;
	struct sh_config cfg;
	int r;

	snprintf(
		text, sizeof(text),
		"{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\","
		"\"pid\":1,\"annotations\":{%s}}",
		annotations);
	if (parse_config(cfg_text, &cfg))
		return -100;
	if (oci_parse_state(text, strlen(text), &st, &err)) {
		config_free(&cfg);
		return -101;
	}
	capture_start();
	container_read(&st, &c);
	r = reported(policy_require_check(&cfg, &c, &err), &err);
	*said = capture_end();
	oci_state_free(&st);
	config_free(&cfg);
	return r;
}

static const char *const refuse_cfg =
	CFG("{\"runtime_handlers\":[\"sockopt\"]}");

static void passes(const char *annotations, const char *what)
{
	const char *said;
	int r = check(refuse_cfg, annotations, &said);

	ok(r == 0 && !*said, "passes: %s", what);
	if (r || *said)
		printf("#   got %d: %s", r, said);
}

static void test_refused(void)
{
	const char *said;
	int r = check(refuse_cfg, HANDLER "\"sockopt\"," CONTAINERD, &said);

	ok(r == -EPERM && count_lines(said) == 1 &&
		   strstr(said,
			  "container 'app' of pod 'web' in namespace 'shop' runs under runtime handler 'sockopt'") &&
		   strstr(said,
			  "pod_annotations must include \"sockopt-hook.io/*\"") &&
		   strstr(said, "refused by require_annotations in t.json"),
	   "containerd container under 'sockopt' without a key: refused, one line naming container, pod, namespace, handler and the fix");
	printf("#   %s", said);
	r = check(refuse_cfg, HANDLER "\"sockopt\"," CRIO, &said);
	ok(r == -EPERM &&
		   strstr(said,
			  "container 'db' of pod 'store' in namespace 'data'"),
	   "CRI-O container: named by the kubelet's labels");
	r = check(refuse_cfg,
		  HANDLER "\"sockopt\"," CONTAINERD
			  ",\"sockopt-hook.io/polcy\":\"restricted\"",
		  &said);
	ok(r == -EPERM, "a misspelt key is no policy key: refused");
	r = check(CFG("{\"runtime_handlers\":[\"sockopt\"],"
		      "\"on_missing\":\"warn\"}"),
		  HANDLER "\"sockopt\"," CONTAINERD, &said);
	ok(r == 0 && count_lines(said) == 1 && strstr(said, "warning: ") &&
		   strstr(said, "on_missing is 'warn'"),
	   "on_missing warn: passes, one warning line");
}

static void test_passes(void)
{
	passes(HANDLER "\"sockopt\"," CONTAINERD
		       ",\"sockopt-hook.io/policy\":\"restricted\"",
	       "the pod-level policy key");
	passes(HANDLER "\"sockopt\"," CONTAINERD
		       ",\"sockopt-hook.io/bypass-prot-mem\":\"false\"",
	       "the bypass key, even false");
	passes(HANDLER "\"sockopt\"," CONTAINERD
		       ",\"sockopt-hook.io/policy.other\":\"restricted\"",
	       "another container's key: the pod's keys reached the spec");
	passes(HANDLER "\"sockopt\"," CONTAINERD
		       ",\"sockopt-hook.io/containers.policy\":\"x=y\"",
	       "a containers.* list");
	passes(HANDLER "\"sockopt\","
		       "\"io.kubernetes.cri.container-type\":\"sandbox\"",
	       "the containerd pod sandbox");
	passes(HANDLER "\"sockopt\","
		       "\"io.kubernetes.cri-o.ContainerType\":\"sandbox\"",
	       "the CRI-O pause container");
	passes(HANDLER "\"runc\"," CONTAINERD, "another handler");
	passes(CONTAINERD, "no handler annotation");
	passes(HANDLER "\"sockopt\"", "no runtime type key (plain runc)");
}

#define NRI_MARK "\"node.sockopt-hook.io/nri\":\"delivered\""

/* require_annotations.nri: the NRI plugin's mark on every Kubernetes
 * workload container, whatever its handler. */
static void test_nri(void)
{
	static const char *const nri_cfg = CFG("{\"nri\":true}");
	struct sh_config cfg;
	const char *said;
	int r = parse_config(nri_cfg, &cfg);

	ok(r == 0 && cfg.require.nri && !cfg.require.nr_handlers,
	   "nri: true alone is a complete setting");
	if (!r)
		config_free(&cfg);
	config_refused(CFG("{\"nri\":false}"),
		       "runtime_handlers: needs at least one runtime handler",
		       "nri: false and no handler");
	config_refused(CFG("{\"nri\":\"yes\"}"), "nri: must be true or false",
		       "nri not a boolean");
	r = check(nri_cfg, CONTAINERD, &said);
	ok(r == -EPERM && count_lines(said) == 1 &&
		   strstr(said,
			  "container 'app' of pod 'web' in namespace 'shop' was not handled by the NRI plugin (no node.sockopt-hook.io/nri annotation)") &&
		   strstr(said, "refused by require_annotations.nri in t.json"),
	   "containerd workload container without the mark: refused, one line");
	printf("#   %s", said);
	r = check(nri_cfg, CRIO "," NRI_MARK, &said);
	ok(r == 0 && !*said, "CRI-O container with the mark: passes");
	r = check(nri_cfg, "\"io.kubernetes.cri.container-type\":\"sandbox\"",
		  &said);
	ok(r == 0 && !*said,
	   "a pod sandbox (no hook under NRI anyway): passes");
	r = check(nri_cfg, "\"x\":\"y\"", &said);
	ok(r == 0 && !*said, "no runtime's type key (plain runc): passes");
	r = check(CFG("{\"nri\":true,\"on_missing\":\"warn\"}"), CONTAINERD,
		  &said);
	ok(r == 0 && count_lines(said) == 1 && strstr(said, "warning: ") &&
		   strstr(said, "started anyway"),
	   "on_missing warn: one warning, started");
	r = check(CFG("{\"nri\":true,\"runtime_handlers\":[\"sockopt\"]}"),
		  HANDLER "\"sockopt\"," CONTAINERD "," NRI_MARK, &said);
	ok(r == -EPERM && strstr(said, "runs under runtime handler 'sockopt'"),
	   "with the mark, runtime_handlers still applies: no key under 'sockopt'");
}

static void test_off(void)
{
	const char *said;
	int r = check("{}", HANDLER "\"sockopt\"," CONTAINERD, &said);

	ok(r == 0 && !*said, "no require_annotations: nothing refused");
}

int main(void)
{
	test_parse();
	test_refusals();
	test_refused();
	test_passes();
	test_nri();
	test_off();
	return tap_done();
}
