// SPDX-License-Identifier: GPL-2.0-only
/*
 * CDI devices (container.c, wiring_cdi.c): which devices a spec's hooks
 * ask for (our entries' --cdi-device DEVICE and --cdi-device=DEVICE,
 * another binary's ignored, each once), a policy device, the bypass device
 * or both as a request; refused in one line: two policies, another kind's
 * device, a name no policy has, an empty one, too many, an annotation that
 * asks otherwise; which policy names can be devices; the spec's kind,
 * cdiVersion and devices, and a config that offers none.
 *
 * Modules: `container.c`, `wiring_cdi.c`
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "config/config.h"
#include "input/container.h"
#include "input/oci.h"
#include "tap.h"
#include "wiring/wiring_cdi.h"
#include "wiring/wiring_spec.h"

#define STATE                                                              \
	"{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\"," \
	"\"bundle\":\"/b\",\"pid\":7}"
#define HOOK(path, args) "{\"path\":\"" path "\",\"args\":[" args "]}"
#define OURS(dev)                                                             \
	HOOK("/usr/local/bin/oci-sockopt-hook",                               \
	     "\"oci-sockopt-hook\",\"createRuntime\",\"--cdi-device\",\"" dev \
	     "\"")

static struct oci_state st;
static struct sh_container c;

/* The container whose config.json has hooks (createRuntime) and
 * annotations, and own as the hook's own --cdi-device. */
static void read_bundle(const char *hooks, const char *ann, const char *own)
{
	struct sh_error err = { 0 };
	char cfg[4096];

	oci_state_free(&st);
	memset(&st, 0, sizeof(st));
	snprintf(cfg, sizeof(cfg),
		 "{\"hooks\":{\"createRuntime\":[%s]},\"annotations\":{%s}}",
		 hooks, ann);
	if (oci_parse_state(STATE, strlen(STATE), &st, &err) ||
	    oci_parse_bundle_config("config.json", cfg, strlen(cfg), &st, &err))
		tap_diag("cannot read the test's state: %s", err.msg);
	st.cdi_device = own;
	container_read(&st, &c);
}

/* The pick for s: its value (or "" for none) and key, or the error. */
static const char *pick(enum container_setting s, char *buf, size_t len)
{
	struct sh_error err = { 0 };
	struct annotation_pick p;
	int r = container_pick(&c, s, &p, &err);

	if (r)
		snprintf(buf, len, "error: %s", error_text(&err, r));
	else
		snprintf(buf, len, "%s|%s", p.value ?: "",
			 p.value ? p.key : "");
	return buf;
}

static void test_requests(void)
{
	char b[512];

	read_bundle(OURS("sockopt-hook.io/policy=restricted"), "", NULL);
	is_str(pick(CONTAINER_POLICY, b, sizeof(b)),
	       "restricted|CDI device sockopt-hook.io/policy=restricted",
	       "a device of ours in createRuntime: its policy, keyed by the device");
	ok(c.has_policy_key,
	   "a device counts as a policy key (require_annotations)");
	is_str(pick(CONTAINER_BYPASS, b, sizeof(b)), "|",
	       "a policy device asks no bypass");

	read_bundle(HOOK("/usr/local/bin/oci-sockopt-hook",
			 "\"oci-sockopt-hook\",\"createRuntime\","
			 "\"--cdi-device=sockopt-hook.io/policy=bulk\""),
		    "", NULL);
	is_str(pick(CONTAINER_POLICY, b, sizeof(b)),
	       "bulk|CDI device sockopt-hook.io/policy=bulk",
	       "--cdi-device=DEVICE reads the same");

	read_bundle(HOOK("/usr/bin/other-hook",
			 "\"other\",\"--cdi-device\","
			 "\"sockopt-hook.io/policy=bulk\""),
		    "", NULL);
	ok(c.nr_cdi == 0 && !c.has_policy_key,
	   "another binary's --cdi-device is not a request");

	read_bundle(OURS("sockopt-hook.io/policy=bypass-prot-mem"), "", NULL);
	is_str(pick(CONTAINER_BYPASS, b, sizeof(b)),
	       "true|CDI device sockopt-hook.io/policy=bypass-prot-mem",
	       "the bypass device asks bypass-prot-mem true");
	is_str(pick(CONTAINER_POLICY, b, sizeof(b)), "|", "and no policy");

	read_bundle("", "", "sockopt-hook.io/policy=setonly");
	is_str(pick(CONTAINER_POLICY, b, sizeof(b)),
	       "setonly|CDI device sockopt-hook.io/policy=setonly",
	       "the hook's own --cdi-device counts without a config.json entry");

	read_bundle(OURS("sockopt-hook.io/policy=bulk") "," OURS(
			    "sockopt-hook.io/policy=bypass-prot-mem"),
		    "\"sockopt-hook.io/policy\":\"bulk\"",
		    "sockopt-hook.io/policy=bulk");
	ok(c.nr_cdi == 2,
	   "each device once, from the entries and the hook's own");
	is_str(pick(CONTAINER_POLICY, b, sizeof(b)),
	       "bulk|CDI device sockopt-hook.io/policy=bulk",
	       "an annotation that agrees with the device");
	is_str(pick(CONTAINER_BYPASS, b, sizeof(b)),
	       "true|CDI device sockopt-hook.io/policy=bypass-prot-mem",
	       "a policy and the bypass device together");
}

static void test_refusals(void)
{
	char b[512], hooks[2048] = "";

	read_bundle(OURS("sockopt-hook.io/policy=bulk") "," OURS(
			    "sockopt-hook.io/policy=setonly"),
		    "", NULL);
	is_str(pick(CONTAINER_POLICY, b, sizeof(b)),
	       "error: CDI devices sockopt-hook.io/policy=bulk and sockopt-hook.io/policy=setonly refused: a container takes one policy",
	       "two policy devices: refused in one line");

	read_bundle(OURS("sockopt-hook.io/policy=bulk"),
		    "\"sockopt-hook.io/policy\":\"open\"", NULL);
	is_str(pick(CONTAINER_POLICY, b, sizeof(b)),
	       "error: CDI device sockopt-hook.io/policy=bulk refused: annotation sockopt-hook.io/policy='open' asks otherwise",
	       "an annotation asking another policy: refused");

	read_bundle(OURS("sockopt-hook.io/policy=bypass-prot-mem"),
		    "\"sockopt-hook.io/bypass-prot-mem\":\"false\"", NULL);
	ok(!strncmp(pick(CONTAINER_BYPASS, b, sizeof(b)), "error: CDI device",
		    17),
	   "bypass-prot-mem false beside the bypass device: refused");

	read_bundle(OURS("nvidia.com/gpu=0"), "", NULL);
	is_str(pick(CONTAINER_POLICY, b, sizeof(b)),
	       "error: CDI device 'nvidia.com/gpu=0' refused: not a device of kind sockopt-hook.io/policy (a policy's name, or bypass-prot-mem)",
	       "another kind's device named to our hook: refused");
	read_bundle(OURS("sockopt-hook.io/policy=a b"), "", NULL);
	ok(!strncmp(pick(CONTAINER_POLICY, b, sizeof(b)),
		    "error: CDI device 'sockopt-hook.io/policy=a b' refused",
		    54),
	   "a name no policy can have: refused, quoted");
	read_bundle(OURS("sockopt-hook.io/policy="), "", NULL);
	ok(!strncmp(pick(CONTAINER_POLICY, b, sizeof(b)), "error: ", 7),
	   "an empty name: refused");

	for (int i = 0; i <= SH_CDI_MAX; i++) {
		char one[256];

		snprintf(one, sizeof(one),
			 "%s" OURS("sockopt-hook.io/policy=p%d"), i ? "," : "",
			 i);
		strncat(hooks, one, sizeof(hooks) - strlen(hooks) - 1);
	}
	read_bundle(hooks, "", NULL);
	ok(c.nr_cdi < 0 &&
		   !strncmp(pick(CONTAINER_POLICY, b, sizeof(b)),
			    "error: CDI devices refused: more than", 37),
	   "more than %d devices: refused", SH_CDI_MAX);
}

static void test_names(void)
{
	ok(!container_cdi_policy_problem("restricted") &&
		   !container_cdi_policy_problem("9lives") &&
		   !container_cdi_policy_problem("a.b_c-d"),
	   "policy names CDI takes as device names");
	ok(container_cdi_policy_problem("bad-") &&
		   container_cdi_policy_problem(".x") &&
		   container_cdi_policy_problem("bypass-prot-mem"),
	   "a name ending or starting in punctuation, and the bypass device's, are not");
}

static void test_spec(void)
{
	const char *env[] = { "OCI_SOCKOPT_HOOK_CONFIG=/etc/x.json" };
	struct wiring_hook hook = { .path = "/usr/local/bin/oci-sockopt-hook",
				    .env = env,
				    .nr_env = 1 };
	struct sh_error err = { 0 };
	struct json_object *spec;
	struct sh_config cfg;
	char *text = NULL;
	int r = config_load(EXAMPLES "/config.json", &cfg, &err);

	ok(!r, "example config loads");
	if (r)
		return;
	ok(!wiring_cdi_text(&cfg, &hook, &text, &err), "the spec");
	spec = json_tokener_parse(text);
	is_str(json_object_get_string(json_object_object_get(spec, "kind")),
	       "sockopt-hook.io/policy", "its kind");
	is_str(json_object_get_string(
		       json_object_object_get(spec, "cdiVersion")),
	       "0.3.0", "cdiVersion 0.3.0: no name starts with a digit");
	ok(wiring_cdi_is_ours(text) && wiring_cdi_same_devices(text, &cfg),
	   "ours, and the devices the config gives");
	cfg.allow_bypass = false;
	ok(!wiring_cdi_same_devices(text, &cfg),
	   "no longer the devices once the bypass is not allowed");
	cfg.nr_allowed = 0;
	free(text);
	ok(wiring_cdi_text(&cfg, &hook, &text, &err) == -ENOENT &&
		   strstr(err.msg, "offers no CDI device"),
	   "a config with nothing a workload may ask: no spec, one line");
	json_object_put(spec);
	config_free(&cfg);
	ok(!wiring_cdi_is_ours("{\"kind\":\"nvidia.com/gpu\"}") &&
		   !wiring_cdi_is_ours("not json"),
	   "another kind's spec, or no JSON, is not ours");
}

int main(void)
{
	test_requests();
	test_refusals();
	test_names();
	test_spec();
	oci_state_free(&st);
	return tap_done();
}
