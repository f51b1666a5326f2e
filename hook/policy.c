// SPDX-License-Identifier: GPL-2.0-only
/*
 * The effective policy: operator defaults, then the named policy, then the
 * workload's annotations, each only as far as the operator allows it.
 * Container-scoped keys (KEY.<container-name>) override pod-level ones;
 * pod.c says which container this is. Keys in log lines are ours plus a
 * checked container name; values are quoted with LOG_Q.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "pod.h"
#include "policy.h"

const char *policy_source_name(enum sh_source src)
{
	switch (src) {
	case SRC_DEFAULTS:
		return "defaults";
	case SRC_POLICY:
		return "policy";
	case SRC_ANNOTATION:
		return "annotation";
	default:
		return "none";
	}
}

void policy_source_text(const struct sh_effective *eff, bool bypass, char *buf,
			size_t len)
{
	enum sh_source src = bypass ? eff->bypass_source : eff->policy_source;

	if (src == SRC_ANNOTATION)
		snprintf(buf, len, "annotation %s",
			 bypass ? eff->bypass_key : eff->policy_key);
	else if (src == SRC_POLICY)
		snprintf(buf, len, "policy %s", eff->policy->name);
	else
		snprintf(buf, len, "defaults.%s",
			 bypass ? "bypass_prot_mem" : "policy");
}

int policy_parse_bool(const char *key, const char *value, bool *out,
		      struct sh_error *err)
{
	if (!strcmp(value, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(value, "false")) {
		*out = false;
		return 0;
	}
	return error_set(
		err, -EINVAL,
		"annotation %s=%s is invalid: expected 'true' or 'false'", key,
		LOG_Q(value));
}

/* Returns the value and sets *key_used to the key it came from. */
static const char *scoped_annotation(const struct oci_state *st,
				     const char *name, const char *base,
				     char *key_buf, size_t len,
				     const char **key_used)
{
	const char *v;

	if (name) {
		snprintf(key_buf, len, "%s.%s", base, name);
		v = oci_annotation(st, key_buf);
		if (v) {
			*key_used = key_buf;
			return v;
		}
	}
	*key_used = base;
	return oci_annotation(st, base);
}

static int choose_policy(const struct sh_config *cfg, const char *key,
			 const char *name, struct sh_effective *eff,
			 struct sh_error *err)
{
	if (!config_policy_allowed(cfg, name))
		return error_set(
			err, -EPERM,
			"annotation %s=%s refused: %s is not in annotations.allow_policies of %s",
			key, LOG_Q(name), LOG_Q(name), cfg->path);
	eff->policy = config_find_policy(cfg, name);
	if (!eff->policy)
		return error_set(
			err, -ENOENT,
			"annotation %s=%s refused: no such policy in %s", key,
			LOG_Q(name), cfg->path);
	eff->policy_source = SRC_ANNOTATION;
	snprintf(eff->policy_key, sizeof(eff->policy_key), "%s", key);
	return 0;
}

static int apply_bypass_annotation(const struct sh_config *cfg, const char *key,
				   const char *value, struct sh_effective *eff,
				   struct sh_error *err)
{
	bool bypass = false;
	int r = policy_parse_bool(key, value, &bypass, err);

	if (r)
		return r;
	if (!cfg->allow_bypass)
		return error_set(
			err, -EPERM,
			"annotation %s=%s refused: annotations.allow_bypass_prot_mem is false in %s",
			key, LOG_Q(value), cfg->path);
	eff->bypass = bypass;
	eff->bypass_source = SRC_ANNOTATION;
	snprintf(eff->bypass_key, sizeof(eff->bypass_key), "%s", key);
	return 0;
}

static void apply_defaults(const struct sh_config *cfg,
			   struct sh_effective *eff)
{
	eff->bypass = cfg->default_bypass;
	eff->bypass_source = SRC_DEFAULTS;
	if (cfg->default_policy) {
		eff->policy = config_find_policy(cfg, cfg->default_policy);
		eff->policy_source = SRC_DEFAULTS;
	}
}

int policy_resolve(const struct sh_config *cfg, const struct oci_state *st,
		   struct sh_effective *eff, struct sh_error *err)
{
	char policy_buf[SH_ANNOTATION_KEY_MAX],
		bypass_buf[SH_ANNOTATION_KEY_MAX];
	struct pod_identity who;
	const char *key, *value;
	int r;

	memset(eff, 0, sizeof(*eff));
	r = pod_identify(st, &who, err);
	if (r)
		return r;
	if (who.sandbox) {
		eff->sandbox = true;
		return 0;
	}
	apply_defaults(cfg, eff);
	value = scoped_annotation(st, who.name, SH_ANNOTATION_POLICY,
				  policy_buf, sizeof(policy_buf), &key);
	if (value) {
		r = choose_policy(cfg, key, value, eff, err);
		if (r)
			return r;
	}
	if (eff->policy && eff->policy->has_bypass) {
		eff->bypass = eff->policy->bypass;
		eff->bypass_source = SRC_POLICY;
	}
	value = scoped_annotation(st, who.name, SH_ANNOTATION_BYPASS,
				  bypass_buf, sizeof(bypass_buf), &key);
	if (value) {
		r = apply_bypass_annotation(cfg, key, value, eff, err);
		if (r)
			return r;
	}
	return 0;
}

bool policy_needs(const struct sh_effective *eff, enum sh_prog_kind kind)
{
	const struct sh_policy *p = eff->policy;

	switch (kind) {
	case SH_PROG_SOCK:
		return eff->bypass ||
		       (p && (p->nr_deny || p->has_mark || p->has_priority));
	case SH_PROG_SET:
		return p && (p->nr_set || p->default_deny);
	case SH_PROG_GET:
		return p && p->nr_get;
	default:
		return false;
	}
}

bool policy_is_empty(const struct sh_effective *eff)
{
	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (policy_needs(eff, k))
			return false;
	return true;
}
