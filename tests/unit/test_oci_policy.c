// SPDX-License-Identifier: GPL-2.0-only
/*
 * OCI state parsing, bundle annotations, and the effective-policy merge.
 *
 * Modules: `oci.c`, `policy.c`
 */
#include <errno.h>
#include <string.h>

#include "config/config.h"
#include "helpers.h"
#include "input/oci.h"
#include "lib/log.h"
#include "policy/policy.h"
#include "state/state.h"
#include "tap.h"

static int state(const char *text, struct oci_state *st)
{
	struct sh_error err = { 0 };

	return reported(oci_parse_state(text, strlen(text), st, &err), &err);
}

static int resolve(const struct sh_config *cfg, const struct oci_state *st,
		   struct sh_effective *eff)
{
	struct sh_error err = { 0 };
	struct sh_container c;

	container_read(st, &c);
	return reported(policy_resolve(cfg, &c, eff, &err), &err);
}

static void state_refused(const char *text, const char *want)
{
	struct oci_state st;
	const char *err;
	int r;

	capture_start();
	r = state(text, &st);
	err = capture_end();
	ok(r < 0 && strstr(err, want) && count_lines(err) == 1,
	   "state refused: %s", want);
	if (!strstr(err, want))
		printf("#   got: %s", err);
	oci_state_free(&st);
}

static void test_state(void)
{
	struct oci_state st;
	int r;

	r = state(
		"{\"ociVersion\":\"1.0.2\",\"id\":\"abc\",\"status\":\"creating\","
		"\"pid\":42,\"bundle\":\"/b\",\"annotations\":{\"k\":\"v\"}}",
		&st);
	ok(r == 0 && st.pid == 42 && !strcmp(st.id, "abc") &&
		   !strcmp(st.bundle, "/b"),
	   "runc state");
	is_str(oci_annotation(&st, "k"), "v", "state annotation");
	oci_state_free(&st);
	r = state(
		"{\"ociVersion\":\"1.0.0\",\"id\":\"c1\",\"status\":\"created\","
		"\"pid\":7,\"bundle\":\"/b\",\"root\":\"/run/crun\",\"x-future\":[1]}",
		&st);
	ok(r == 0 && st.pid == 7, "crun state with extra fields");
	oci_state_free(&st);
	r = state("{\"id\":\"p\",\"status\":\"stopped\"}", &st);
	ok(r == 0 && st.pid == 0 && !st.bundle, "podman poststop: no pid");
	oci_state_free(&st);
	state_refused("", "invalid JSON");
	state_refused("{\"id\":\"x\"", "unexpected end of input");
	state_refused("{\"id\":\"x\"} trailing", "invalid JSON");
	state_refused("\"id\"", "must be a JSON object");
	state_refused("{\"pid\":1}", "lacks 'id'");
	state_refused("{\"id\":5}", "'id' must be a string");
	state_refused("{\"id\":\"../etc\"}", "invalid container id");
	state_refused("{\"id\":\"a/b\"}", "invalid container id");
	state_refused("{\"id\":\"..\"}", "invalid container id");
	state_refused("{\"id\":\"a\",\"pid\":-3}", "out of range");
	state_refused("{\"id\":\"a\",\"pid\":\"12\"}",
		      "'pid' must be an integer");
	state_refused("{\"id\":\"a\",\"bundle\":\"rel/dir\"}",
		      "not an absolute path");
	state_refused("{\"id\":\"a\",\"annotations\":{\"k\":1}}",
		      "must be a string");
}

static void test_bundle(void)
{
	struct sh_error err = { 0 };
	struct oci_state st;
	const char *cfg =
		"{\"ociVersion\":\"1.0.2\",\"annotations\":{"
		"\"sockopt-hook.io/policy\":\"restricted\",\"k\":\"cfg\"}}";
	int r = state(
		"{\"id\":\"a\",\"pid\":1,\"bundle\":\"/b\",\"annotations\":{\"k\":\"state\"}}",
		&st);

	r = r	  ?:
		    oci_parse_bundle_config("config.json", cfg, strlen(cfg),
					    &st, &err);
	ok(r == 0, "bundle config parses");
	is_str(oci_annotation(&st, SH_ANNOTATION_POLICY), "restricted",
	       "annotation from config.json");
	is_str(oci_annotation(&st, "k"), "state", "state annotations win");
	oci_state_free(&st);
}

struct merge_case {
	const char *annotations; /* JSON object body */
	int want_r;
	const char *want_policy; /* NULL: none */
	int want_bypass;
	const char *want_err;
	const char *what;
};

static const char *merge_config =
	"{\"defaults\":{\"bypass_prot_mem\":false,\"policy\":\"base\"},"
	"\"annotations\":{\"allow_bypass_prot_mem\":true,\"allow_policies\":[\"restricted\",\"bulk\",\"nobulk\"]},"
	"\"policies\":{\"base\":{\"socket\":{\"mark\":1}},\"restricted\":{\"socket\":{\"mark\":7}},"
	"\"bulk\":{\"bypass_prot_mem\":true},\"nobulk\":{\"bypass_prot_mem\":false},\"hidden\":{}}}";

/* What containerd and CRI-O write themselves: the type key and the name. */
#define CONTAINERD(type, name)                                \
	"{\"io.kubernetes.cri.container-type\":\"" type "\"," \
	"\"io.kubernetes.cri.container-name\":\"" name "\""
#define CRIO(type, name)                                       \
	"{\"io.kubernetes.cri-o.ContainerType\":\"" type "\"," \
	"\"io.kubernetes.container.name\":\"" name "\""

static const struct merge_case merge_cases[] = {
	{ "{}", 0, "base", 0, NULL, "defaults only" },
	{ "{\"sockopt-hook.io/policy\":\"restricted\"}", 0, "restricted", 0,
	  NULL, "allowed policy annotation" },
	{ "{\"sockopt-hook.io/policy\":\"bulk\"}", 0, "bulk", 1, NULL,
	  "policy sets bypass" },
	{ "{\"sockopt-hook.io/policy\":\"bulk\",\"sockopt-hook.io/bypass-prot-mem\":\"false\"}",
	  0, "bulk", 0, NULL, "annotation bypass overrides policy" },
	{ "{\"sockopt-hook.io/bypass-prot-mem\":\"true\"}", 0, "base", 1, NULL,
	  "bypass annotation" },
	{ "{\"sockopt-hook.io/policy\":\"hidden\"}", -EPERM, NULL, 0,
	  "annotation sockopt-hook.io/policy='hidden' refused: 'hidden' is not in annotations.allow_policies",
	  "policy not allowed" },
	{ "{\"sockopt-hook.io/policy\":\"nope\"}", -EPERM, NULL, 0,
	  "not in annotations.allow_policies", "unknown policy" },
	{ "{\"sockopt-hook.io/bypass-prot-mem\":\"maybe\"}", -EINVAL, NULL, 0,
	  "annotation sockopt-hook.io/bypass-prot-mem='maybe' is invalid",
	  "bad bool" },
	{ "{\"sockopt-hook.io/bypass-prot-mem\":\"TRUE\"}", -EINVAL, NULL, 0,
	  "expected 'true' or 'false'", "bools are lower case" },
	/* containerd-style pod with two containers, per-container keys */
	{ "{\"io.kubernetes.cri.container-name\":\"web\",\"sockopt-hook.io/policy\":\"bulk\",\"sockopt-hook.io/policy.web\":\"restricted\"}",
	  0, "restricted", 0, NULL, "containerd: container key wins" },
	{ "{\"io.kubernetes.cri.container-name\":\"db\",\"sockopt-hook.io/policy\":\"bulk\",\"sockopt-hook.io/policy.web\":\"restricted\"}",
	  0, "bulk", 1, NULL, "containerd: other container gets pod key" },
	{ "{\"io.kubernetes.container.name\":\"web\",\"sockopt-hook.io/bypass-prot-mem\":\"true\",\"sockopt-hook.io/bypass-prot-mem.web\":\"false\"}",
	  0, "base", 0, NULL, "CRI-O: container bypass key wins" },
	{ "{\"io.kubernetes.container.name\":\"web\",\"sockopt-hook.io/policy.web\":\"hidden\"}",
	  -EPERM, NULL, 0,
	  "annotation sockopt-hook.io/policy.web='hidden' refused",
	  "per-container refusal names the key" },
	{ "{\"io.kubernetes.cri.container-type\":\"sandbox\",\"sockopt-hook.io/policy\":\"restricted\"}",
	  0, "@deny-sockets", 0, NULL,
	  "containerd sandbox: sandbox_policy, not its copied policy annotation" },
	{ "{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\",\"sockopt-hook.io/policy\":\"nope\"}",
	  0, "@deny-sockets", 0, NULL,
	  "CRI-O sandbox: sandbox_policy, an unknown policy annotation unread" },
	/* Who is a sandbox, and whose name: the runtime's own keys win. */
	{ CONTAINERD(
		  "container",
		  "web") ",\"sockopt-hook.io/policy\":\"bulk\",\"sockopt-hook.io/policy.web\":\"restricted\"}",
	  0, "restricted", 0, NULL,
	  "containerd-style container: its own name picks policy.web" },
	{ CONTAINERD("sandbox", "") "}", 0, "@deny-sockets", 0, NULL,
	  "containerd-style sandbox: sandbox_policy, not defaults.policy" },
	{ CONTAINERD(
		  "container",
		  "web") ",\"io.kubernetes.cri-o.ContainerType\":\"sandbox\"}",
	  0, "base", 0, NULL,
	  "containerd with a passed-through CRI-O 'sandbox' key: still policed (defaults)" },
	{ CRIO("container",
	       "web") ",\"sockopt-hook.io/policy.web\":\"restricted\"}",
	  0, "restricted", 0, NULL,
	  "CRI-O-style container: io.kubernetes.container.name picks policy.web" },
	{ CRIO("sandbox", "pause") "}", 0, "@deny-sockets", 0, NULL,
	  "CRI-O-style sandbox: sandbox_policy" },
	{ CRIO("container",
	       "db") ",\"io.kubernetes.cri.container-type\":\"sandbox\"}",
	  0, "base", 0, NULL,
	  "CRI-O with a copied containerd 'sandbox' key: not a sandbox, gets defaults.policy" },
	{ CRIO("container",
	       "db") ",\"io.kubernetes.cri.container-type\":\"sandbox\",\"io.kubernetes.cri.container-name\":\"web\",\"sockopt-hook.io/policy.web\":\"restricted\"}",
	  0, "base", 0, NULL,
	  "CRI-O with copied containerd keys: the name is CRI-O's (db), not the copy's (web)" },
	{ CRIO("container",
	       "db") ",\"io.kubernetes.cri.container-type\":\"container\",\"io.kubernetes.cri.container-name\":\"web\",\"sockopt-hook.io/policy.db\":\"restricted\"}",
	  0, "restricted", 0, NULL,
	  "both type keys say container: CRI-O's name wins" },
	{ CRIO("sandbox",
	       "pause") ",\"io.kubernetes.cri.container-type\":\"sandbox\"}",
	  0, "@deny-sockets", 0, NULL,
	  "every type key says sandbox: a sandbox, sandbox_policy" },
	{ CRIO("sandbox",
	       "pause") ",\"io.kubernetes.cri.container-type\":\"container\"}",
	  0, "base", 0, NULL,
	  "a copied 'container' key on a sandbox: policed (fails safe)" },
	{ "{\"io.kubernetes.cri-o.ContainerType\":\"Sandbox\"}", 0, "base", 0,
	  NULL, "type values are exact: 'Sandbox' is not a sandbox" },
	{ CRIO("container", "a\\nb") "}", -EINVAL, NULL, 0,
	  "container name 'a\\nb' (from io.kubernetes.container.name) refused",
	  "a container name with a newline: refused, escaped" },
	{ "{\"io.kubernetes.cri.container-name\":\"../..\",\"sockopt-hook.io/policy.../..\":\"bulk\"}",
	  -EINVAL, NULL, 0,
	  "container name '../..' (from io.kubernetes.cri.container-name) refused",
	  "a container name with '/': refused" },
	/* containers.* lists: every legal container name (63 characters
	 * here, more than a scoped key's name part allows). */
	{ CONTAINERD(
		  "container",
		  "web-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx") ",\"sockopt-hook.io/containers.policy\":\"db=bulk, web-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx = restricted\"}",
	  0, "restricted", 0, NULL,
	  "a 63-character name picks its list entry" },
	{ CONTAINERD(
		  "container",
		  "web") ",\"sockopt-hook.io/containers.policy\":\"web=restricted\",\"sockopt-hook.io/policy.web\":\"bulk\"}",
	  0, "bulk", 1, NULL, "the scoped key wins over the list" },
	{ CONTAINERD(
		  "container",
		  "db") ",\"sockopt-hook.io/containers.policy\":\"web=restricted\",\"sockopt-hook.io/policy\":\"bulk\"}",
	  0, "bulk", 1, NULL, "a container not in the list gets the pod key" },
	{ CONTAINERD(
		  "container",
		  "web") ",\"sockopt-hook.io/containers.bypass-prot-mem\":\"web=true\"}",
	  0, "base", 1, NULL, "bypass from the list" },
	{ CONTAINERD(
		  "container",
		  "web") ",\"sockopt-hook.io/containers.policy\":\"web=hidden\"}",
	  -EPERM, NULL, 0,
	  "annotation sockopt-hook.io/containers.policy[web]='hidden' refused",
	  "a refusal names the list and the container" },
	{ CONTAINERD(
		  "container",
		  "web") ",\"sockopt-hook.io/containers.policy\":\"db=bulk,restricted\"}",
	  -EINVAL, NULL, 0, "an entry without a name",
	  "an entry without '=' is refused" },
	{ CONTAINERD(
		  "container",
		  "web") ",\"sockopt-hook.io/containers.policy\":\"web=bulk,web=restricted\"}",
	  -EINVAL, NULL, 0, "a container named twice",
	  "a container named twice is refused" },
	{ CONTAINERD(
		  "container",
		  "web") ",\"sockopt-hook.io/containers.policy\":\"we b=bulk\"}",
	  -EINVAL, NULL, 0, "a name with a space in it",
	  "a name with a space is refused" },
	{ CONTAINERD("container",
		     "web") ",\"sockopt-hook.io/containers.policy\":\"web=\"}",
	  -EINVAL, NULL, 0, "an empty or overlong value",
	  "an empty value is refused" },
	/* Untrusted text in log lines: quoted, escaped, bounded. */
	{ "{\"sockopt-hook.io/bypass-prot-mem\":\"true\\n\\r\\t\\u001b[31m'\\\\\\u00e9\"}",
	  -EINVAL, NULL, 0,
	  "annotation sockopt-hook.io/bypass-prot-mem='true\\n\\r\\t\\x1b[31m\\'\\\\\\xc3\\xa9' is invalid",
	  "control, quote, backslash and non-ASCII bytes are escaped" },
};

static void run_merge_case(const struct sh_config *cfg,
			   const struct merge_case *c)
{
	char text[1024];
	struct oci_state st;
	struct sh_effective eff;
	const char *err;
	int r;

	snprintf(text, sizeof(text),
		 "{\"id\":\"m\",\"pid\":1,\"annotations\":%s}", c->annotations);
	r = state(text, &st);
	capture_start();
	r = r ?: resolve(cfg, &st, &eff);
	err = capture_end();
	if (c->want_r)
		ok(r == c->want_r && strstr(err, c->want_err) &&
			   count_lines(err) == 1,
		   "%s", c->what);
	else if (!c->want_policy)
		ok(r == 0 && (eff.sandbox || !eff.policy), "%s", c->what);
	else
		ok(r == 0 && eff.policy &&
			   !strcmp(eff.policy->name, c->want_policy) &&
			   eff.bypass == c->want_bypass,
		   "%s", c->what);
	if (c->want_r && !strstr(err, c->want_err))
		printf("#   got: %s", err);
	oci_state_free(&st);
}

static void test_merge(void)
{
	struct sh_config cfg;
	int r = parse_config(merge_config, &cfg);

	ok(r == 0, "merge config parses");
	if (r)
		return;
	for (size_t i = 0; i < sizeof(merge_cases) / sizeof(merge_cases[0]);
	     i++)
		run_merge_case(&cfg, &merge_cases[i]);
	config_free(&cfg);
}

static void test_refused_bypass(void)
{
	const char *text =
		"{\"annotations\":{\"allow_bypass_prot_mem\":false}}";
	struct sh_config cfg;
	struct oci_state st;
	struct sh_effective eff;
	const char *err;
	int r = parse_config(text, &cfg);

	r = r	  ?:
		    state("{\"id\":\"m\",\"annotations\":{\"sockopt-hook.io/bypass-prot-mem\":\"true\"}}",
			  &st);
	capture_start();
	r = r ?: resolve(&cfg, &st, &eff);
	err = capture_end();
	ok(r == -EPERM &&
		   strstr(err, "annotations.allow_bypass_prot_mem is false"),
	   "bypass annotation refused when not allowed");
	oci_state_free(&st);
	r = state("{\"id\":\"m\",\"annotations\":{"
		  "\"sockopt-hook.io/bypass-prot-mem\":\"false\","
		  "\"sockopt-hook.io/mode\":\"enforce\"}}",
		  &st);
	capture_start();
	r = r ?: resolve(&cfg, &st, &eff);
	capture_end();
	ok(r == 0 && !eff.bypass && eff.bypass_source == SRC_DEFAULTS &&
		   !eff.audit && eff.mode_source == SRC_NONE,
	   "bypass-prot-mem false and mode enforce, what the defaults give: "
	   "no request, nothing refused, the defaults' (%d)",
	   r);
	oci_state_free(&st);
	config_free(&cfg);
}

/* mode_json: resolve one state's annotations against a config. */
static int resolve_mode(const char *config, const char *annotations,
			struct sh_effective *eff, const char **err)
{
	char text[512];
	struct sh_config cfg;
	struct oci_state st;
	int r = parse_config(config, &cfg);

	snprintf(text, sizeof(text), "{\"id\":\"m\",\"annotations\":%s}",
		 annotations);
	if (r)
		return r;
	r = state(text, &st);
	capture_start();
	r = r ?: resolve(&cfg, &st, eff);
	*err = capture_end();
	if (!r)
		eff->policy = NULL; /* it points into cfg */
	oci_state_free(&st);
	config_free(&cfg);
	return r;
}

/* An audit-mode policy named by an annotation is audit mode
 * asked for by the workload. */
static void test_audit_policy_by_annotation(const char *pol, const char *denied)
{
	char by_default[256], by_setting[256];
	struct sh_effective eff;
	const char *err;
	int r;

	r = resolve_mode(denied, "{\"sockopt-hook.io/policy\":\"a\"}", &eff,
			 &err);
	ok(r == -EPERM && count_lines(err) == 1 &&
		   strstr(err,
			  "annotation sockopt-hook.io/policy='a' refused: policy a is in audit mode, and neither annotations.allow_audit_mode nor policies.a.audit_by_annotation is true"),
	   "an audit policy named by an annotation is refused without allow_audit_mode, in one line");
	if (r != -EPERM)
		printf("#   got %d: %s", r, err);
	snprintf(by_default, sizeof(by_default),
		 "{\"defaults\":{\"policy\":\"a\"},%s}", pol);
	r = resolve_mode(by_default, "{}", &eff, &err);
	ok(r == 0 && eff.audit && eff.mode_source == SRC_POLICY,
	   "an audit policy in defaults.policy is the operator's word");
	snprintf(by_setting, sizeof(by_setting),
		 "{\"annotations\":{\"allow_policies\":[\"a\"]},"
		 "\"policies\":{\"a\":{\"mode\":\"audit\","
		 "\"audit_by_annotation\":true}}}");
	r = resolve_mode(by_setting, "{\"sockopt-hook.io/policy\":\"a\"}", &eff,
			 &err);
	ok(r == 0 && eff.audit && eff.mode_source == SRC_POLICY,
	   "policies.a.audit_by_annotation lets an annotation name it");
}

static void test_audit_mode(void)
{
	const char *pol = "\"policies\":{\"a\":{\"mode\":\"audit\"},"
			  "\"e\":{}}";
	char allowed[256], denied[256];
	struct sh_effective eff;
	const char *err;
	int r;

	snprintf(allowed, sizeof(allowed),
		 "{\"annotations\":{\"allow_audit_mode\":true,"
		 "\"allow_policies\":[\"a\",\"e\"]},%s}",
		 pol);
	snprintf(denied, sizeof(denied),
		 "{\"annotations\":{\"allow_policies\":[\"a\",\"e\"]},%s}",
		 pol);
	r = resolve_mode(allowed, "{\"sockopt-hook.io/policy\":\"a\"}", &eff,
			 &err);
	ok(r == 0 && eff.audit && eff.mode_source == SRC_POLICY,
	   "mode audit from the policy");
	test_audit_policy_by_annotation(pol, denied);
	r = resolve_mode(denied, "{\"sockopt-hook.io/policy\":\"e\"}", &eff,
			 &err);
	ok(r == 0 && !eff.audit && eff.mode_source == SRC_NONE,
	   "enforce by default");
	r = resolve_mode(allowed,
			 "{\"sockopt-hook.io/policy\":\"e\","
			 "\"sockopt-hook.io/mode\":\"audit\"}",
			 &eff, &err);
	ok(r == 0 && eff.audit && eff.mode_source == SRC_ANNOTATION &&
		   !strcmp(eff.mode_key, "sockopt-hook.io/mode"),
	   "mode annotation, allowed");
	r = resolve_mode(allowed,
			 "{\"sockopt-hook.io/policy\":\"a\","
			 "\"sockopt-hook.io/mode\":\"enforce\"}",
			 &eff, &err);
	ok(r == 0 && !eff.audit, "the annotation can ask for enforce");
	r = resolve_mode(denied,
			 "{\"sockopt-hook.io/policy\":\"e\","
			 "\"sockopt-hook.io/mode\":\"audit\"}",
			 &eff, &err);
	ok(r == -EPERM && count_lines(err) == 1 &&
		   strstr(err, "annotations.allow_audit_mode is false"),
	   "mode annotation refused when not allowed, in one line");
	r = resolve_mode(allowed,
			 "{\"sockopt-hook.io/policy\":\"e\","
			 "\"sockopt-hook.io/mode\":\"dry\"}",
			 &eff, &err);
	ok(r == -EINVAL && strstr(err, "expected 'audit' or 'enforce'"),
	   "a mode annotation that is neither is invalid");
}

/* What prestart keeps of an effective policy in the attachment
 * (policy_fill_attachment), and the record name record mode gives it. */
static void attachment_of(const struct sh_effective *eff,
			  struct sh_attachment *att)
{
	memset(att, 0, sizeof(*att));
	policy_fill_attachment(eff, att);
	snprintf(att->footprint, sizeof(att->footprint), "%s", eff->record);
}

/* The attachment of a container started under config `at_start` with these
 * annotations, resolved again under `now`: policy_reresolve()'s result,
 * its policy's name ("" for none) in *name, the error's reason in *why. */
static int reresolve(const char *at_start, const char *annotations,
		     const char *now, struct sh_effective *eff, char *name,
		     const char **why)
{
	struct sh_config cfg, cfg_now;
	struct sh_error err = { 0 };
	struct sh_attachment att;
	struct oci_state st;
	char text[512];
	int r;

	snprintf(text, sizeof(text), "{\"id\":\"m\",\"annotations\":%s}",
		 annotations);
	if (parse_config(at_start, &cfg) || state(text, &st))
		return -EINVAL;
	r = resolve(&cfg, &st, eff);
	if (!r)
		attachment_of(eff, &att);
	oci_state_free(&st);
	config_free(&cfg);
	if (r || parse_config(now, &cfg_now))
		return -EINVAL;
	capture_start();
	r = policy_reresolve(&cfg_now, &att, eff, &err);
	capture_end();
	snprintf(name, SH_POLICY_NAME_MAX + 1, "%s",
		 eff->policy ? eff->policy->name : "");
	*why = error_reason_text(&err);
	eff->policy = NULL; /* it points into cfg_now */
	config_free(&cfg_now);
	return r;
}

static void test_reresolve(void)
{
	const char *a = "{\"defaults\":{\"policy\":\"d\"},"
			"\"annotations\":{\"allow_audit_mode\":true,"
			"\"allow_bypass_prot_mem\":true,"
			"\"allow_policies\":[\"p\",\"d\"]},"
			"\"policies\":{\"p\":{\"mode\":\"audit\"},\"d\":{}}}";
	const char *enforce = "{\"defaults\":{\"policy\":\"d\"},"
			      "\"annotations\":{\"allow_audit_mode\":true,"
			      "\"allow_bypass_prot_mem\":true,"
			      "\"allow_policies\":[\"p\",\"d\"]},"
			      "\"policies\":{\"p\":{},\"d\":{}}}";
	const char *strict = "{\"defaults\":{\"policy\":\"\"},"
			     "\"annotations\":{\"allow_policies\":[\"d\"]},"
			     "\"policies\":{\"p\":{},\"d\":{}}}";
	const char *asked = "{\"sockopt-hook.io/policy\":\"p\"}";
	char name[SH_POLICY_NAME_MAX + 1];
	struct sh_effective eff;
	const char *why;
	int r;

	r = reresolve(a, asked, a, &eff, name, &why);
	ok(r == 0 && !strcmp(name, "p") && eff.audit &&
		   eff.policy_source == SRC_ANNOTATION &&
		   eff.mode_source == SRC_POLICY,
	   "the same config: the policy it asked for, in the policy's mode");
	r = reresolve(a, asked, enforce, &eff, name, &why);
	ok(r == 0 && !strcmp(name, "p") && !eff.audit,
	   "its policy's mode dropped: enforce now");
	r = reresolve(a,
		      "{\"sockopt-hook.io/policy\":\"d\","
		      "\"sockopt-hook.io/mode\":\"audit\","
		      "\"sockopt-hook.io/bypass-prot-mem\":\"true\"}",
		      enforce, &eff, name, &why);
	ok(r == 0 && eff.audit && eff.mode_source == SRC_ANNOTATION &&
		   eff.bypass && eff.bypass_source == SRC_ANNOTATION &&
		   !strcmp(eff.bypass_key, "sockopt-hook.io/bypass-prot-mem"),
	   "what its annotations asked for is asked again");
	r = reresolve(a, asked, strict, &eff, name, &why);
	ok(r == -EPERM && !strcmp(why, "policy_not_allowed"),
	   "its policy no longer allowed: refused (%s)", why);
	r = reresolve(a,
		      "{\"sockopt-hook.io/policy\":\"d\","
		      "\"sockopt-hook.io/mode\":\"audit\"}",
		      strict, &eff, name, &why);
	ok(r == -EPERM && !strcmp(why, "audit_mode_not_allowed"),
	   "its mode annotation no longer allowed: refused (%s)", why);
	r = reresolve(a,
		      "{\"sockopt-hook.io/bypass-prot-mem\":\"false\","
		      "\"sockopt-hook.io/mode\":\"enforce\"}",
		      strict, &eff, name, &why);
	ok(r == 0 && eff.bypass_source == SRC_DEFAULTS &&
		   eff.mode_source == SRC_NONE,
	   "bypass-prot-mem false and mode enforce, what the defaults give: "
	   "no request, not refused when no longer allowed (%s)",
	   r ? why : "0");
	r = reresolve(a,
		      "{\"sockopt-hook.io/policy\":\"p\","
		      "\"sockopt-hook.io/mode\":\"enforce\"}",
		      a, &eff, name, &why);
	ok(r == 0 && !eff.audit && eff.mode_source == SRC_ANNOTATION,
	   "mode enforce over a policy that audits: a request, asked again");
	r = reresolve(a,
		      "{\"sockopt-hook.io/policy\":\"p\","
		      "\"sockopt-hook.io/mode\":\"enforce\"}",
		      enforce, &eff, name, &why);
	ok(r == 0 && !eff.audit && eff.mode_source == SRC_NONE,
	   "and once the policy enforces: what it gives, no request");
	r = reresolve(a, "{}", strict, &eff, name, &why);
	ok(r == 0 && !eff.policy && policy_is_empty(&eff),
	   "its policy came from the defaults, which name none now: nothing");
	r = reresolve(a, "{}", enforce, &eff, name, &why);
	ok(r == 0 && !strcmp(name, "d") && eff.policy_source == SRC_DEFAULTS,
	   "from the defaults, which still name it: the same");
}

static void test_quote(void)
{
	char key[201];
	const char *q;

	memset(key, 'k', 200);
	key[0] = '\n';
	key[200] = '\0';
	q = LOG_Q(key);
	ok(!strncmp(q, "'\\nkkk", 6) && strlen(q) < 100 &&
		   strstr(q, "'... (200 bytes)") && !strchr(q, '\n'),
	   "a 200-byte key: escaped, cut at %d bytes, its length given",
	   SH_LOG_QUOTE_MAX);
	is_str(LOG_Q(""), "''", "empty text: two quotes");
	is_str(LOG_Q("\x7f\x01 ok"), "'\\x7f\\x01 ok'", "DEL and ^A as \\xNN");
}

static void test_needs(void)
{
	struct sh_policy set_only = { .name = "s", .nr_set = 1 };
	struct sh_effective eff = { .policy = &set_only };

	ok(policy_needs(&eff, SH_PROG_SET) &&
		   !policy_needs(&eff, SH_PROG_GET) &&
		   !policy_needs(&eff, SH_PROG_SOCK),
	   "setsockopt-only policy needs only the setsockopt program");
	eff.bypass = true;
	ok(policy_needs(&eff, SH_PROG_SOCK), "bypass needs sock_create");
	eff = (struct sh_effective){ 0 };
	ok(policy_is_empty(&eff), "no policy: nothing to attach");
}

int main(void)
{
	test_state();
	test_bundle();
	test_merge();
	test_refused_bypass();
	test_audit_mode();
	test_reresolve();
	test_quote();
	test_needs();
	return tap_done();
}
