// SPDX-License-Identifier: GPL-2.0-only
/*
 * policy.c, what test_oci_policy.c leaves out: a policy the config does
 * not have or does not allow, record mode's annotation (refused unless record.allow, its
 * name checked, then every program kind attached), where the bypass and
 * the mode came from when a policy set them, and the source names.
 *
 * Modules: `policy.c`
 */
#include <errno.h>
#include <string.h>

#include "config/config.h"
#include "helpers.h"
#include "lib/kind.h"
#include "policy/policy.h"
#include "tap.h"

#define P_BULK "\"bulk\": {\"bypass_prot_mem\": true}"
#define P_AUDIT \
	"\"quiet\": {\"mode\": \"audit\", \"audit_by_annotation\": true, \"setsockopt\": [{\"level\": \"SOL_SOCKET\", \"option\": \"SO_MARK\", \"action\": \"deny\"}]}"

static struct sh_config cfg, cfg_rec;

/* The effective policy for these annotations; err keeps what refused. */
static int resolve(const struct sh_config *c, const char *annotations,
		   struct sh_effective *eff, struct sh_error *err,
		   struct oci_state *st)
{
	struct sh_container ct;

	memset(err, 0, sizeof(*err));
	if (state_with_annotations(annotations, st))
		return -999;
	container_read(st, &ct);
	return policy_resolve(c, &ct, eff, err);
}

static void test_unknown(void)
{
	struct sh_effective eff;
	struct oci_state st;
	struct sh_error err;

	/* allow_policies names only policies that exist (config.c), so a
	 * missing one is never allowed: its reason says it is unknown. */
	ok(resolve(&cfg, "{\"sockopt-hook.io/policy\": \"nosuch\"}", &eff, &err,
		   &st) == -EPERM &&
		   strstr(err.msg,
			  "annotation sockopt-hook.io/policy='nosuch' refused: 'nosuch' is not in annotations.allow_policies of t.json") &&
		   !strcmp(error_reason_text(&err), "policy_unknown") &&
		   !strcmp(err.cause.annotation, "sockopt-hook.io/policy") &&
		   !strcmp(err.cause.setting, "nosuch"),
	   "a policy the config lacks: -EPERM, policy_unknown, the annotation as cause");
	oci_state_free(&st);
	ok(resolve(&cfg_rec, "{\"sockopt-hook.io/policy\": \"bulk\"}", &eff,
		   &err, &st) == -EPERM &&
		   !strcmp(error_reason_text(&err), "policy_not_allowed"),
	   "one it has but does not allow: policy_not_allowed");
	oci_state_free(&st);
}

static void test_record(void)
{
	struct sh_effective eff;
	struct oci_state st;
	struct sh_error err;

	ok(resolve(&cfg, "{\"sockopt-hook.io/record\": \"web\"}", &eff, &err,
		   &st) == -EPERM &&
		   strstr(err.msg,
			  "refused: record.allow is false in t.json") &&
		   !strcmp(error_reason_text(&err), "record_not_allowed"),
	   "record mode without record.allow: -EPERM, record_not_allowed");
	oci_state_free(&st);
	ok(resolve(&cfg_rec, "{\"sockopt-hook.io/record\": \".hidden\"}", &eff,
		   &err, &st) == -EINVAL &&
		   strstr(err.msg,
			  "is invalid: expected 1 to 64 of [A-Za-z0-9._-]") &&
		   !strcmp(error_reason_text(&err), "annotation_invalid"),
	   "a record name with a leading dot: -EINVAL, annotation_invalid");
	oci_state_free(&st);
	ok(resolve(&cfg_rec, "{\"sockopt-hook.io/record\": \"../up\"}", &eff,
		   &err, &st) == -EINVAL,
	   "a record name with a '/': refused (it names a file)");
	oci_state_free(&st);
	ok(resolve(&cfg_rec, "{\"sockopt-hook.io/record\": \"web-1\"}", &eff,
		   &err, &st) == 0 &&
		   !strcmp(eff.record, "web-1"),
	   "record.allow and a good name: recorded as web-1");
	ok(policy_needs(&eff, SH_PROG_SOCK) &&
		   policy_needs(&eff, SH_PROG_SET) &&
		   policy_needs(&eff, SH_PROG_GET) && !policy_is_empty(&eff),
	   "a recorded container gets every program, to see every call");
	oci_state_free(&st);
}

static void test_sources(void)
{
	struct sh_effective eff;
	struct oci_state st;
	struct sh_error err;
	char buf[256];

	ok(resolve(&cfg, "{\"sockopt-hook.io/policy\": \"bulk\"}", &eff, &err,
		   &st) == 0 &&
		   eff.bypass,
	   "a policy with bypass_prot_mem: the bypass is on");
	policy_source_text(&eff, true, buf, sizeof(buf));
	is_str(buf, "policy bulk", "... and it came from the policy");
	policy_source_text(&eff, false, buf, sizeof(buf));
	is_str(buf, "annotation sockopt-hook.io/policy",
	       "the policy itself came from the annotation");
	policy_mode_source_text(&eff, buf, sizeof(buf));
	ok(!strcmp(policy_mode_name(&eff), "enforce") &&
		   !strcmp(buf, "default"),
	   "no mode set: enforce, by default");
	oci_state_free(&st);

	ok(resolve(&cfg, "{\"sockopt-hook.io/policy\": \"quiet\"}", &eff, &err,
		   &st) == 0,
	   "a policy in audit mode that annotations may name (audit_by_annotation)");
	policy_mode_source_text(&eff, buf, sizeof(buf));
	ok(!strcmp(policy_mode_name(&eff), "audit") &&
		   !strcmp(buf, "policy quiet"),
	   "audit, from the policy");
	oci_state_free(&st);

	is_str(policy_source_name(SRC_DEFAULTS), "defaults",
	       "source names: defaults");
	is_str(policy_source_name(SRC_POLICY), "policy", "policy");
	is_str(policy_source_name(SRC_ANNOTATION), "annotation", "annotation");
	is_str(policy_source_name(SRC_NONE), "none", "none");
}

int main(void)
{
	if (parse_config(
		    "{\"annotations\": {\"allow_policies\": [\"bulk\", \"quiet\"]}, \"policies\": {" P_BULK
		    ", " P_AUDIT "}}",
		    &cfg) ||
	    parse_config("{\"record\": {\"allow\": true}, \"policies\": {" P_BULK
			 "}}",
			 &cfg_rec))
		return tap_done();
	test_unknown();
	test_record();
	test_sources();
	config_free(&cfg);
	config_free(&cfg_rec);
	return tap_done();
}
