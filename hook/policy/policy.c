// SPDX-License-Identifier: GPL-2.0-only
/*
 * The effective policy: operator defaults, then the named policy, then the
 * workload's annotations, each only as far as the operator allows it.
 * The container's values come from its description (container.c), which
 * picks KEY.<container-name>, its entry in a containers.* list, or the
 * pod-level KEY. Keys in log lines are ours plus a
 * checked container name; values are quoted with LOG_Q.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "config/names.h"
#include "config/render.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "policy/policy.h"
#include "state/state.h"

/* How a message names a request: "annotation KEY=VALUE", or a CDI
 * device's key (container.h), which holds the request whole. */
static const char *said(const char *key, const char *value, char *buf,
			size_t len)
{
	if (!strncmp(key, "CDI device ", 11))
		snprintf(buf, len, "%s", key);
	else
		snprintf(buf, len, "annotation %s=%s", key, LOG_Q(value));
	return buf;
}

#define SAID_MAX (SH_ANNOTATION_KEY_MAX + SH_LOG_QUOTE_MAX * 4 + 64)

const char *policy_source_name(enum sh_source src)
{
	switch (src) {
	case SRC_DEFAULTS:
		return "defaults";
	case SRC_POLICY:
		return "policy";
	case SRC_ANNOTATION:
		return "annotation";
	case SRC_SANDBOX:
		return "sandbox_policy";
	default:
		return "none";
	}
}

void policy_source_text(const struct sh_effective *eff, bool bypass, char *buf,
			size_t len)
{
	enum sh_source src = bypass ? eff->bypass_source : eff->policy_source;

	const char *key = bypass ? eff->bypass_key : eff->policy_key;

	if (src == SRC_ANNOTATION && !strncmp(key, "CDI device ", 11))
		snprintf(buf, len, "%s", key);
	else if (src == SRC_ANNOTATION)
		snprintf(buf, len, "annotation %s", key);
	else if (src == SRC_SANDBOX)
		snprintf(buf, len, "sandbox_policy");
	else if (src == SRC_POLICY)
		snprintf(buf, len, "policy %s", eff->policy->name);
	else
		snprintf(buf, len, "defaults.%s",
			 bypass ? "bypass_prot_mem" : "policy");
}

int policy_parse_bool(const char *key, const char *value, bool *ret,
		      struct sh_error *err)
{
	if (!strcmp(value, "true")) {
		*ret = true;
		return 0;
	}
	if (!strcmp(value, "false")) {
		*ret = false;
		return 0;
	}
	error_reason(err, SH_REASON_ANNOTATION_INVALID);
	error_cause(err, key, value);
	return error_set(
		err, -EINVAL,
		"annotation %s=%s is invalid: expected 'true' or 'false'", key,
		LOG_Q(value));
}

static int choose_policy(const struct sh_config *cfg, const char *key,
			 const char *name, struct sh_effective *eff,
			 struct sh_error *err)
{
	char buf[SAID_MAX];

	if (!config_policy_allowed(cfg, name)) {
		error_cause(err, key, name);
		/* allow_policies names only policies that exist. */
		error_reason(err, config_find_policy(cfg, name) ?
					  SH_REASON_POLICY_NOT_ALLOWED :
					  SH_REASON_POLICY_UNKNOWN);
		return error_set(
			err, -EPERM,
			"%s refused: %s is not in annotations.allow_policies of %s",
			said(key, name, buf, sizeof(buf)), LOG_Q(name),
			cfg->path);
	}
	eff->policy = config_find_policy(cfg, name);
	if (!eff->policy) {
		error_reason(err, SH_REASON_POLICY_UNKNOWN);
		error_cause(err, key, name);
		return error_set(err, -ENOENT,
				 "%s refused: no such policy in %s",
				 said(key, name, buf, sizeof(buf)), cfg->path);
	}
	eff->policy_source = SRC_ANNOTATION;
	snprintf(eff->policy_key, sizeof(eff->policy_key), "%s", key);
	return 0;
}

/* An annotation the operator's setting (a boolean that is false) does not
 * allow. */
static int refuse_annotation(const struct sh_config *cfg, const char *key,
			     const char *value, enum sh_reason reason,
			     const char *setting, struct sh_error *err)
{
	char buf[SAID_MAX];

	error_reason(err, reason);
	error_cause(err, key, value);
	return error_set(err, -EPERM, "%s refused: %s is false in %s",
			 said(key, value, buf, sizeof(buf)), setting,
			 cfg->path);
}

static int apply_bypass_annotation(const struct sh_config *cfg, const char *key,
				   const char *value, struct sh_effective *eff,
				   struct sh_error *err)
{
	bool bypass = false;
	int r = policy_parse_bool(key, value, &bypass, err);

	if (r)
		return r;
	if (bypass == eff->bypass)
		return 0; /* what the defaults give: no request at all */
	if (!cfg->allow_bypass)
		return refuse_annotation(cfg, key, value,
					 SH_REASON_BYPASS_NOT_ALLOWED,
					 "annotations.allow_bypass_prot_mem",
					 err);
	eff->bypass = bypass;
	eff->bypass_source = SRC_ANNOTATION;
	snprintf(eff->bypass_key, sizeof(eff->bypass_key), "%s", key);
	return 0;
}

static int apply_record_annotation(const struct sh_config *cfg, const char *key,
				   const char *value, struct sh_effective *eff,
				   struct sh_error *err)
{
	if (!cfg->record_allow)
		return refuse_annotation(cfg, key, value,
					 SH_REASON_RECORD_NOT_ALLOWED,
					 "record.allow", err);
	if (!names_record_ok(value)) {
		error_cause(err, key, value);
		error_reason(err, SH_REASON_ANNOTATION_INVALID);
		return error_set(
			err, -EINVAL,
			"annotation %s=%s is invalid: expected 1 to 64 of [A-Za-z0-9._-], not starting with '.'",
			key, LOG_Q(value));
	}
	snprintf(eff->record, sizeof(eff->record), "%s", value);
	return 0;
}

static int apply_mode_annotation(const struct sh_config *cfg, const char *key,
				 const char *value, struct sh_effective *eff,
				 struct sh_error *err)
{
	bool audit = !strcmp(value, "audit");

	if (!audit && strcmp(value, "enforce")) {
		error_reason(err, SH_REASON_ANNOTATION_INVALID);
		error_cause(err, key, value);
		return error_set(
			err, -EINVAL,
			"annotation %s=%s is invalid: expected 'audit' or 'enforce'",
			key, LOG_Q(value));
	}
	if (audit == eff->audit)
		return 0; /* what the policy gives: no request at all */
	if (!cfg->allow_audit_mode)
		return refuse_annotation(cfg, key, value,
					 SH_REASON_AUDIT_MODE_NOT_ALLOWED,
					 "annotations.allow_audit_mode", err);
	eff->audit = audit;
	eff->mode_source = SRC_ANNOTATION;
	snprintf(eff->mode_key, sizeof(eff->mode_key), "%s", key);
	return 0;
}

const char *policy_mode_name(const struct sh_effective *eff)
{
	return eff->audit ? "audit" : "enforce";
}

void policy_mode_source_text(const struct sh_effective *eff, char *buf,
			     size_t len)
{
	if (eff->mode_source == SRC_ANNOTATION)
		snprintf(buf, len, "annotation %s", eff->mode_key);
	else if (eff->mode_source == SRC_SANDBOX)
		snprintf(buf, len, "sandbox_policy");
	else if (eff->mode_source == SRC_POLICY)
		snprintf(buf, len, "policy %s", eff->policy->name);
	else
		snprintf(buf, len, "default");
}

/*
 * A policy in audit mode applies nothing: a workload that names it gets
 * out of the default policy as surely as with sockopt-hook.io/mode=audit.
 * So naming one takes what that annotation takes (allow_audit_mode), or
 * the policy's own audit_by_annotation.
 */
static int check_audit_policy(const struct sh_config *cfg,
			      const struct sh_effective *eff,
			      struct sh_error *err)
{
	const struct sh_policy *p = eff->policy;
	char buf[SAID_MAX];

	if (!p || !p->audit || eff->policy_source != SRC_ANNOTATION ||
	    cfg->allow_audit_mode || p->audit_by_annotation)
		return 0;
	error_reason(err, SH_REASON_AUDIT_MODE_NOT_ALLOWED);
	error_cause(err, eff->policy_key, p->name);
	return error_set(
		err, -EPERM,
		"%s refused: policy %s is in audit mode, and neither annotations.allow_audit_mode nor policies.%s.audit_by_annotation is true in %s",
		said(eff->policy_key, p->name, buf, sizeof(buf)), p->name,
		p->name, cfg->path);
}

/* The policy's own mode (audit), once check_audit_policy() allows it. */
static int take_policy_mode(const struct sh_config *cfg,
			    struct sh_effective *eff, struct sh_error *err)
{
	int r = check_audit_policy(cfg, eff, err);

	if (r)
		return r;
	if (eff->policy && eff->policy->audit) {
		eff->audit = true;
		eff->mode_source = SRC_POLICY;
	}
	return 0;
}

/* The policy's own bypass-prot-mem, before the workload's annotation. */
static void take_policy_bypass(struct sh_effective *eff)
{
	if (eff->policy && eff->policy->has_bypass) {
		eff->bypass = eff->policy->bypass;
		eff->bypass_source = SRC_POLICY;
	}
}

/* The policy's mode, then the workload's annotation if the operator
 * allows it. */
static int resolve_mode(const struct sh_config *cfg,
			const struct sh_container *c, struct sh_effective *eff,
			struct sh_error *err)
{
	struct annotation_pick pick;
	int r = take_policy_mode(cfg, eff, err);

	if (r)
		return r;
	r = container_pick(c, CONTAINER_MODE, &pick, err);
	if (r || !pick.value)
		return r;
	return apply_mode_annotation(cfg, pick.key, pick.value, eff, err);
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

void policy_sandbox(const struct sh_config *cfg, struct sh_effective *eff)
{
	const struct sh_policy *p = cfg->sandbox_policy;

	eff->sandbox = true;
	eff->policy = p;
	eff->policy_source = SRC_SANDBOX;
	eff->bypass = p && p->has_bypass && p->bypass;
	eff->bypass_source = SRC_SANDBOX;
	eff->audit = p && p->audit;
	eff->mode_source = eff->audit ? SRC_SANDBOX : SRC_NONE;
}

int policy_resolve(const struct sh_config *cfg, const struct sh_container *c,
		   struct sh_effective *eff, struct sh_error *err)
{
	struct annotation_pick pick;
	int r;

	memset(eff, 0, sizeof(*eff));
	eff->who = c->who;
	r = container_pod_check(&eff->who, err);
	if (r)
		return r;
	if (eff->who.sandbox) {
		policy_sandbox(cfg, eff);
		return 0;
	}
	apply_defaults(cfg, eff);
	r = container_pick(c, CONTAINER_POLICY, &pick, err);
	if (r)
		return r;
	if (pick.value) {
		r = choose_policy(cfg, pick.key, pick.value, eff, err);
		if (r)
			return r;
	}
	take_policy_bypass(eff);
	r = container_pick(c, CONTAINER_BYPASS, &pick, err);
	if (r)
		return r;
	if (pick.value) {
		r = apply_bypass_annotation(cfg, pick.key, pick.value, eff,
					    err);
		if (r)
			return r;
	}
	r = container_pick(c, CONTAINER_RECORD, &pick, err);
	if (r)
		return r;
	if (pick.value) {
		r = apply_record_annotation(cfg, pick.key, pick.value, eff,
					    err);
		if (r)
			return r;
	}
	return resolve_mode(cfg, c, eff, err);
}

bool policy_needs(const struct sh_effective *eff, enum sh_prog_kind kind)
{
	const struct sh_policy *p = eff->policy;

	if (eff->record[0])
		return true; /* every kind, to see every call */
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

/* The annotation key a recorded source names ("annotation KEY"), or NULL
 * when it is not an annotation. */
static const char *source_key(const char *source)
{
	static const char prefix[] = "annotation ";

	if (strncmp(source, prefix, sizeof(prefix) - 1))
		return NULL;
	return source + sizeof(prefix) - 1;
}

static int reresolve_mode(const struct sh_config *cfg,
			  const struct sh_attachment *att,
			  struct sh_effective *eff, struct sh_error *err)
{
	const char *key = source_key(att->mode_source);
	int r = take_policy_mode(cfg, eff, err);

	if (r)
		return r;
	if (!key)
		return 0;
	return apply_mode_annotation(cfg, key, att->audit ? "audit" : "enforce",
				     eff, err);
}

int policy_reresolve(const struct sh_config *cfg,
		     const struct sh_attachment *att, struct sh_effective *eff,
		     struct sh_error *err)
{
	const char *key = source_key(att->policy_source);
	int r;

	memset(eff, 0, sizeof(*eff));
	eff->who.namespace = att->k8s_namespace[0] ? att->k8s_namespace : NULL;
	eff->who.pod = att->pod[0] ? att->pod : NULL;
	eff->who.name = att->container[0] ? att->container : NULL;
	/* A pod sandbox reads no annotation: sandbox_policy, as it is now. */
	if (!strcmp(att->policy_source, policy_source_name(SRC_SANDBOX))) {
		policy_sandbox(cfg, eff);
		return 0;
	}
	apply_defaults(cfg, eff);
	if (key) {
		r = choose_policy(cfg, key, att->policy, eff, err);
		if (r)
			return r;
	}
	take_policy_bypass(eff);
	key = source_key(att->bypass_source);
	if (key) {
		r = apply_bypass_annotation(
			cfg, key, att->bypass ? "true" : "false", eff, err);
		if (r)
			return r;
	}
	if (att->footprint[0]) {
		r = apply_record_annotation(cfg, SH_ANNOTATION_RECORD,
					    att->footprint, eff, err);
		if (r)
			return r;
	}
	return reresolve_mode(cfg, att, eff, err);
}

void policy_defaults(const struct sh_config *cfg,
		     const struct sh_attachment *att, struct sh_effective *eff)
{
	memset(eff, 0, sizeof(*eff));
	eff->who.namespace = att->k8s_namespace[0] ? att->k8s_namespace : NULL;
	eff->who.pod = att->pod[0] ? att->pod : NULL;
	eff->who.name = att->container[0] ? att->container : NULL;
	apply_defaults(cfg, eff);
	take_policy_bypass(eff);
	/* No annotation chose the policy: its audit mode is the operator's. */
	if (eff->policy && eff->policy->audit) {
		eff->audit = true;
		eff->mode_source = SRC_POLICY;
	}
}

void policy_fill_attachment(const struct sh_effective *eff,
			    struct sh_attachment *att)
{
	snprintf(att->policy, sizeof(att->policy), "%s",
		 eff->policy ? eff->policy->name : "");
	policy_source_text(eff, /* bypass= */ false, att->policy_source,
			   sizeof(att->policy_source));
	att->bypass = eff->bypass;
	policy_source_text(eff, /* bypass= */ true, att->bypass_source,
			   sizeof(att->bypass_source));
	att->audit = eff->audit;
	policy_mode_source_text(eff, att->mode_source,
				sizeof(att->mode_source));
}

/*
 * require_annotations at prestart: make a pod whose policy annotations
 * never reached the spec loud. The hook cannot see a pod annotation that
 * the runtime dropped, nor, from the spec, the runtime handler:
 *  - containerd (1.6 pkg/cri/server/container_create_linux.go:301-307,
 *    1.7.34 pkg/cri/annotations/annotations.go:97-125, 2.x
 *    internal/cri/annotations/annotations.go:103-135 DefaultCRIAnnotations)
 *    writes the sandbox id, name, namespace, uid, container type and name
 *    and image into a container's spec, never the handler; its
 *    io.containerd.cri.runtime-handler (1.7+) is a *pod* annotation it
 *    reads for image pulls (internal/cri/server/images/image_pull.go:878).
 *    A handler's base_runtime_spec is the spec every container of the
 *    handler starts from (internal/cri/server/container_create.go:509-532)
 *    and its annotations stay: WithAnnotation only adds keys
 *    (internal/cri/opts/spec_opts.go:112-119), the pod annotations that
 *    pod_annotations lets through after them (container_create.go:864).
 *  - CRI-O writes io.kubernetes.cri-o.RuntimeHandler into the pause
 *    container's spec only (server/sandbox_run_linux.go:1049); a
 *    container gets the pod's annotations (internal/factory/container/
 *    container.go:203-232), which start from the handler's
 *    default_annotations (server/sandbox_run_linux.go:787-810, CRI-O
 *    1.32+), overridable by the pod.
 * So the operator names the handler in SH_ANNOTATION_HANDLER, in that
 * handler's config. (containerd at 301026e5, CRI-O at f954a17e.)
 */

static const char *or_unknown(const char *s)
{
	return s ? s : "?";
}

/* "container C of pod P in namespace N": who a refusal or warning is
 * about; the pod's name and namespace come from the runtime's own keys
 * (container.c), the set that named the container. */
static void who_text(const struct pod_identity *who, char *buf, size_t len)
{
	snprintf(buf, len, "container %s of pod %s in namespace %s",
		 LOG_Q(or_unknown(who->name)), LOG_Q(or_unknown(who->pod)),
		 LOG_Q(or_unknown(who->namespace)));
}

static bool refuses(const struct sh_config *cfg)
{
	return cfg->require.on_missing == ON_MISSING_REFUSE;
}

/* What on_missing makes of it, the end of the line. */
static const char *outcome(const struct sh_config *cfg, const char *refused)
{
	return refuses(cfg) ?
		       refused :
		       "started anyway: require_annotations.on_missing is 'warn'";
}

/* The container refused with reason (err's cause already set), or msg
 * logged as a warning, as on_missing says. */
static int refuse_or_warn(const struct sh_config *cfg, const char *msg,
			  enum sh_reason reason, struct sh_error *err)
{
	if (refuses(cfg)) {
		error_reason(err, reason);
		return error_set(err, -EPERM, "%s", msg);
	}
	log_warn("%s", msg);
	return 0;
}

static int missing(const struct sh_config *cfg, const struct pod_identity *who,
		   const char *handler, struct sh_error *err)
{
	char msg[SH_ERROR_MSG_MAX], whom[SH_ERROR_MSG_MAX];

	who_text(who, whom, sizeof(whom));
	snprintf(
		msg, sizeof(msg),
		"%s runs under runtime handler %s but carries no sockopt-hook.io/ policy annotation: the pod sets none (give it sockopt-hook.io/policy or bypass-prot-mem), or the runtime dropped them (containerd: the handler's pod_annotations must include \"sockopt-hook.io/*\"); %s in %s",
		whom, LOG_Q(handler),
		outcome(cfg, "refused by require_annotations"), cfg->path);
	if (refuses(cfg))
		error_cause(err, SH_ANNOTATION_HANDLER, handler);
	return refuse_or_warn(cfg, msg, SH_REASON_ANNOTATIONS_MISSING, err);
}

/* The NRI plugin marks every container it handles: without the mark, the
 * pod's keys may never have reached this one (the plugin was down, or
 * not installed), and NRI starts containers anyway. */
static int not_delivered(const struct sh_config *cfg,
			 const struct pod_identity *who, struct sh_error *err)
{
	char msg[SH_ERROR_MSG_MAX], whom[SH_ERROR_MSG_MAX];

	who_text(who, whom, sizeof(whom));
	snprintf(
		msg, sizeof(msg),
		"%s was not handled by the NRI plugin (no %s annotation), so its pod's sockopt-hook.io/ annotations may not have reached it: is `oci-sockopt-hook nri` running and registered with the runtime (systemctl status oci-sockopt-hook-nri)?; %s in %s",
		whom, SH_ANNOTATION_NRI,
		outcome(cfg, "refused by require_annotations.nri"), cfg->path);
	return refuse_or_warn(cfg, msg, SH_REASON_NRI_NOT_DELIVERED, err);
}

int policy_require_check(const struct sh_config *cfg,
			 const struct sh_container *c, struct sh_error *err)
{
	const struct pod_identity *who = &c->who;
	int r;

	if (!cfg->require.nri && (!cfg->require.nr_handlers || !c->handler))
		return 0;
	r = container_pod_check(who, err);
	if (r || who->sandbox || !who->runtime)
		return r;
	if (cfg->require.nri && !c->nri_mark)
		return not_delivered(cfg, who, err);
	if (!c->handler || !config_require_handler(cfg, c->handler) ||
	    c->has_policy_key)
		return 0;
	return missing(cfg, who, c->handler, err);
}

/* Rendering an effective policy for `explain`, in JSON and as text. */

static struct json_object *socket_json(const struct sh_policy *p)
{
	struct json_object *o = json_object_new_object();
	struct json_object *deny = json_object_new_array();

	for (__u32 i = 0; i < p->nr_deny; i++)
		json_object_array_add(deny, render_sock_json(&p->deny[i]));
	json_object_object_add(o, "deny", deny);
	if (p->has_mark)
		jsonw_int(o, "mark", p->mark);
	if (p->has_priority)
		jsonw_int(o, "priority", p->priority);
	return o;
}

static struct json_object *alias_json(const struct sh_rule_entry *e)
{
	const char *level = names_level_name(e->key.level);
	char text[96];

	if (e->option_name)
		snprintf(text, sizeof(text), "%s %s", level ? level : "?",
			 e->option_name);
	else
		snprintf(text, sizeof(text), "%s %d", level ? level : "?",
			 e->key.optname);
	return json_object_new_string(text);
}

static struct json_object *opt_rule_json(const struct sh_rule_entry *rules,
					 size_t n, size_t i)
{
	struct json_object *o = render_rule_json(&rules[i]), *also;

	also = json_object_new_array();
	for (size_t a = i + 1; a < n; a++)
		if (rules[a].alias_of == (int)i)
			json_object_array_add(also, alias_json(&rules[a]));
	if (json_object_array_length(also))
		json_object_object_add(o, "also", also);
	else
		json_object_put(also);
	return o;
}

/* Aliases are shown with the rule they carry over ("also"). */
static struct json_object *rules_json(const struct sh_rule_entry *rules,
				      size_t n)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		if (rules[i].alias_of < 0)
			json_object_array_add(arr, opt_rule_json(rules, n, i));
	return arr;
}

static struct json_object *programs_json(const struct sh_effective *eff)
{
	struct json_object *arr = json_object_new_array();

	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (policy_needs(eff, k))
			json_object_array_add(
				arr, json_object_new_string(kind_get(k)->name));
	return arr;
}

static void add_policy_parts(struct json_object *o,
			     const struct sh_effective *eff)
{
	const struct sh_policy *p = eff->policy;
	char src[SH_SOURCE_TEXT_MAX];
	struct json_object *pol = json_object_new_object();

	policy_source_text(eff, /* bypass= */ false, src, sizeof(src));
	jsonw_str(pol, "name", p->name);
	jsonw_str(pol, "source", src);
	json_object_object_add(o, "policy", pol);
	if (p->nr_deny || p->has_mark || p->has_priority)
		json_object_object_add(o, "socket", socket_json(p));
	if (p->nr_set || p->default_deny) {
		jsonw_str(o, "setsockopt_default",
			  p->default_deny ? "deny" : "allow");
		json_object_object_add(o, "setsockopt",
				       rules_json(p->set_rules, p->nr_set));
	}
	if (p->nr_get)
		json_object_object_add(o, "getsockopt",
				       rules_json(p->get_rules, p->nr_get));
}

/* Audit mode, when a policy or an annotation set the mode. */
static void add_mode(struct json_object *o, const struct sh_effective *eff)
{
	struct json_object *mode = json_object_new_object();
	char src[SH_SOURCE_TEXT_MAX];

	policy_mode_source_text(eff, src, sizeof(src));
	jsonw_str(mode, "value", policy_mode_name(eff));
	jsonw_str(mode, "source", src);
	json_object_object_add(o, "mode", mode);
}

struct json_object *policy_describe(const struct sh_effective *eff)
{
	struct json_object *o = json_object_new_object();
	struct json_object *bypass = json_object_new_object();
	char src[SH_SOURCE_TEXT_MAX];

	jsonw_bool(o, "sandbox", eff->sandbox);
	if (eff->policy)
		add_policy_parts(o, eff);
	policy_source_text(eff, /* bypass= */ true, src, sizeof(src));
	jsonw_bool(bypass, "value", eff->bypass);
	jsonw_str(bypass, "source", src);
	json_object_object_add(o, "bypass_prot_mem", bypass);
	if (eff->mode_source != SRC_NONE)
		add_mode(o, eff);
	json_object_object_add(o, "programs", programs_json(eff));
	return o;
}

static void print_rules(const char *title, struct json_object *rules)
{
	size_t n = json_object_array_length(rules);

	printf("%s\n", title);
	for (size_t i = 0; i < n; i++)
		printf("  %s\n",
		       json_object_to_json_string_ext(
			       json_object_array_get_idx(rules, i),
			       JSON_C_TO_STRING_SPACED |
				       JSON_C_TO_STRING_NOSLASHESCAPE));
}

void policy_describe_text(struct json_object *desc)
{
	struct json_object *v, *name, *src;

	if (json_object_object_get_ex(desc, "policy", &v) &&
	    json_object_object_get_ex(v, "name", &name) &&
	    json_object_object_get_ex(v, "source", &src))
		printf("policy: %s (from %s)\n", json_object_get_string(name),
		       json_object_get_string(src));
	else
		printf("policy: none\n");
	json_object_object_get_ex(desc, "bypass_prot_mem", &v);
	json_object_object_get_ex(v, "value", &name);
	json_object_object_get_ex(v, "source", &src);
	printf("bypass-prot-mem: %s (from %s)\n", json_object_get_string(name),
	       json_object_get_string(src));
	if (json_object_object_get_ex(desc, "mode", &v) &&
	    json_object_object_get_ex(v, "value", &name) &&
	    json_object_object_get_ex(v, "source", &src))
		printf("mode: %s (from %s)%s\n", json_object_get_string(name),
		       json_object_get_string(src),
		       strcmp(json_object_get_string(name), "audit") ?
			       "" :
			       ": the programs count what they would do and apply nothing");
	if (json_object_object_get_ex(desc, "socket", &v))
		printf("socket: %s\n",
		       json_object_to_json_string_ext(
			       v, JSON_C_TO_STRING_SPACED |
					  JSON_C_TO_STRING_NOSLASHESCAPE));
	if (json_object_object_get_ex(desc, "setsockopt", &v))
		print_rules("setsockopt rules:", v);
	if (json_object_object_get_ex(desc, "getsockopt", &v))
		print_rules("getsockopt rules:", v);
	if (json_object_object_get_ex(desc, "cgroup", &v) &&
	    json_object_object_get_ex(v, "text", &name))
		printf("cgroup: %s\n", json_object_get_string(name));
	json_object_object_get_ex(desc, "programs", &v);
	printf("programs that would attach: %s\n",
	       json_object_array_length(v) ? json_object_to_json_string(v) :
					     "none");
}
