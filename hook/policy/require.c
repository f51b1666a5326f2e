// SPDX-License-Identifier: GPL-2.0-only
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
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "lib/log.h"
#include "policy/require.h"

static const char *or_unknown(const char *s)
{
	return s ? s : "?";
}

/* "container C of pod P in namespace N": who a refusal or warning is
 * about; the pod's name and namespace come from the runtime's own keys
 * (pod.c), the set that named the container. */
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

int require_check(const struct sh_config *cfg, const struct sh_container *c,
		  struct sh_error *err)
{
	const struct pod_identity *who = &c->who;
	int r;

	if (!cfg->require.nri && (!cfg->require.nr_handlers || !c->handler))
		return 0;
	r = pod_check(who, err);
	if (r || who->sandbox || !who->runtime)
		return r;
	if (cfg->require.nri && !c->nri_mark)
		return not_delivered(cfg, who, err);
	if (!c->handler || !config_require_handler(cfg, c->handler) ||
	    c->has_policy_key)
		return 0;
	return missing(cfg, who, c->handler, err);
}
