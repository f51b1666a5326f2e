/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An error passed up to where it is reported, once (crun's
 * libcrun_error_t): the function that knows what failed fills it in and
 * returns its code; its callers pass the code on without logging; the
 * command reports it as one line. A function that reports does not call
 * one that reports.
 */
#ifndef SH_ERROR_H
#define SH_ERROR_H

#define SH_ERROR_MSG_MAX 1024
#define SH_ERROR_PATH_MAX 256
#define SH_CAUSE_MAX 256

/*
 * What a refusal or a fallback concerns, for audit lines: the annotation
 * key (with its ".<container>" or "[<container>]" part) and its value as
 * the workload wrote it, or, for a refusal that no annotation caused, ""
 * and the operator setting that decided ("on_shared_cgroup=refuse").
 * Either may be "". Values are untrusted: quote them when showing them.
 */
struct sh_cause {
	char annotation[SH_CAUSE_MAX];
	char setting[SH_CAUSE_MAX];
};

/*
 * The reason tokens (error_reason()), stable: audit lines and metric
 * labels use them, so at most 39 characters of [a-z_].
 *  state_invalid        the OCI state on stdin or the bundle's config.json
 *  config_invalid       the operator config cannot be read or parsed
 *  config_untrusted     the operator config or a directory above it is
 *                       writable by a user other than root
 *  annotation_invalid   an annotation value that does not parse, or a
 *                       container name that is not a Kubernetes name
 *  policy_not_allowed   sockopt-hook.io/policy names a policy that
 *                       annotations.allow_policies does not list
 *  policy_unknown       sockopt-hook.io/policy names no policy
 *  bypass_not_allowed   sockopt-hook.io/bypass-prot-mem while
 *                       annotations.allow_bypass_prot_mem is false
 *  annotations_missing  require_annotations: no policy annotation
 *  nri_not_delivered    require_annotations.nri: not handled by the plugin
 *  bypass_prot_mem_unsupported  the kernel lacks SK_BPF_BYPASS_PROT_MEM
 *                       (a refusal with on_unsupported "fail", else
 *                       the fallback)
 *  program_load_failed  a BPF program does not load or verify
 *  cgroup_shared        the container's cgroup is not its own and
 *                       on_shared_cgroup is "refuse"
 *  cgroup_writable      the container could move itself out of its cgroup
 *  cgroup_unavailable   the container's cgroup cannot be found, made or
 *                       queried
 *  override_program     a BPF_F_ALLOW_OVERRIDE program above the cgroup
 *                       that ours would switch off
 *  exclusive_program    a program attached without BPF_F_ALLOW_MULTI in
 *                       the cgroup's path
 *  attach_failed        the kernel refuses the attach
 *  init_exited          the container's init exits before or during it
 *  init_escaped         the init left its cgroup during the attach
 *  record_failed        the hook's state directory or record
 *  reaper_failed        the reaper of a cgroup the hook made
 *  error                none of these (error_reason_text())
 */

struct sh_error {
	int code; /* a negative errno; 0 while nothing failed */
	char path[SH_ERROR_PATH_MAX]; /* the JSON path of a config error */
	char msg[SH_ERROR_MSG_MAX]; /* one line */
	/* Why, as a stable [a-z_]+ token for metrics and audit lines
	 * ("policy_not_allowed", ...), or NULL: see error_reason(). */
	const char *reason;
	struct sh_cause cause; /* what it concerns: see error_cause() */
};

/*
 * Fills err (unless it already holds an error: the innermost cause is the
 * one worth telling) and returns code, a negative errno.
 */
int error_set(struct sh_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, with ": <strerror(-code)>" after the message. */
int error_errno(struct sh_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same for a config error, which also names its JSON path. */
int error_at(struct sh_error *err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Adds "; <what>" to err: an undo that failed after the error it undoes. */
void error_note(struct sh_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Logs the error line for a failed call: err's message, or code's text
 * when err was left empty, so that no failure is ever silent.
 */
void error_report(const struct sh_error *err, int code);
/* Classifies the error err holds or is about to hold: the first reason
 * set stays, like the first message. reason is a static string. */
void error_reason(struct sh_error *err, const char *reason);
/* Names what the error concerns (struct sh_cause), unless a site already
 * did: either may be NULL. */
void error_cause(struct sh_error *err, const char *annotation,
		 const char *setting);
/* err's reason, or "error" when no site classified it. */
const char *error_reason_text(const struct sh_error *err);
/* err's message, or code's text. */
const char *error_text(const struct sh_error *err, int code);

#endif /* SH_ERROR_H */
