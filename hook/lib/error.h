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

/*
 * The reason tokens: why the hook refused a container, started it with
 * less than it asked for, or left it as it was at `apply`. One table:
 * the error object (error_reason()), the audit lines, the metrics'
 * reason label and the table in docs/cluster.md all take their tokens
 * from it (scripts/check-docs.py reads it from here), so a reason that is
 * not in it does not compile. A token is stable, at most 39 characters of
 * [a-z_]: audit lines and metric labels carry it.
 *
 * X(NAME, token, event, exit status of the stage, what it means); the
 * meaning is Markdown, as the docs show it.
 */
#define SH_REASON_TABLE(X)                                                     \
	X(STATE_INVALID, "state_invalid", "refused", "1",                      \
	  "the OCI state or the bundle's `config.json` is missing or invalid") \
	X(CONFIG_INVALID, "config_invalid", "refused", "1",                    \
	  "the operator config cannot be read or parsed")                      \
	X(CONFIG_UNTRUSTED, "config_untrusted", "refused", "1",                \
	  "the operator config or a directory above it is writable by "        \
	  "someone other than root")                                           \
	X(ANNOTATION_INVALID, "annotation_invalid", "refused", "1",            \
	  "a value that does not parse, or a name that is not a Kubernetes "   \
	  "or podman name")                                                    \
	X(POLICY_NOT_ALLOWED, "policy_not_allowed", "refused", "1",            \
	  "`sockopt-hook.io/policy` names a policy `allow_policies` does not " \
	  "list")                                                              \
	X(POLICY_UNKNOWN, "policy_unknown", "refused", "1",                    \
	  "`sockopt-hook.io/policy` names a policy the config does not have")  \
	X(BYPASS_NOT_ALLOWED, "bypass_not_allowed", "refused", "1",            \
	  "bypass-prot-mem while `allow_bypass_prot_mem` is false")            \
	X(AUDIT_MODE_NOT_ALLOWED, "audit_mode_not_allowed", "refused", "1",    \
	  "a mode annotation, or an annotation naming a policy in audit "      \
	  "mode, while neither `allow_audit_mode` nor (for a policy) its "     \
	  "`audit_by_annotation` allows it")                                   \
	X(RECORD_NOT_ALLOWED, "record_not_allowed", "refused", "1",            \
	  "a record annotation while `record.allow` is false")                 \
	X(ANNOTATIONS_MISSING, "annotations_missing", "refused", "1",          \
	  "`require_annotations`: the handler's container carries no policy "  \
	  "annotation")                                                        \
	X(NRI_NOT_DELIVERED, "nri_not_delivered", "refused", "1",              \
	  "`require_annotations.nri`: the NRI plugin did not handle the "      \
	  "container (it was down)")                                           \
	X(SYSCTL_EXCEEDS_POLICY, "sysctl_exceeds_policy", "refused", "1",      \
	  "the bundle's `linux.sysctl` sets the default of an option "         \
	  "(`net.ipv4.tcp_rmem` for `SO_RCVBUF`, ...) beyond the policy's "    \
	  "setsockopt rule on it and beyond what the node gives a new "        \
	  "network namespace")                                                 \
	X(BYPASS_PROT_MEM_UNSUPPORTED, "bypass_prot_mem_unsupported",          \
	  "refused / fallback", "1 / 0",                                       \
	  "the kernel lacks `SK_BPF_BYPASS_PROT_MEM` (`on_unsupported` "       \
	  "`fail` / `warn`)")                                                  \
	X(PROGRAM_LOAD_FAILED, "program_load_failed", "refused", "1",          \
	  "the kernel refuses to load or verify a program")                    \
	X(ATTACH_FAILED, "attach_failed", "refused", "1",                      \
	  "the kernel refuses to attach a program")                            \
	X(CGROUP_SHARED, "cgroup_shared", "refused", "1",                      \
	  "the cgroup is not the container's own and `on_shared_cgroup` is "   \
	  "`refuse`")                                                          \
	X(CGROUP_WRITABLE, "cgroup_writable", "refused", "1",                  \
	  "the cgroup is mounted writable: the container could move itself "   \
	  "out of it")                                                         \
	X(CGROUP_UNAVAILABLE, "cgroup_unavailable", "refused", "1",            \
	  "the cgroup cannot be found, made or queried")                       \
	X(OVERRIDE_PROGRAM, "override_program", "refused", "1",                \
	  "another tool's `BPF_F_ALLOW_OVERRIDE` program on the path that "    \
	  "ours would switch off")                                             \
	X(EXCLUSIVE_PROGRAM, "exclusive_program", "refused", "1",              \
	  "a program on the path attached without `BPF_F_ALLOW_MULTI`")        \
	X(INIT_EXITED, "init_exited", "refused", "1",                          \
	  "the container's init exited before or during the attach")           \
	X(INIT_ESCAPED, "init_escaped", "refused", "1",                        \
	  "the container's init left its cgroup during the attach")            \
	X(RECORD_FAILED, "record_failed", "refused", "1",                      \
	  "the state directory is untrusted or unwritable (for a recorded "    \
	  "container also `record.dir`, or the footprint pins' BPF "           \
	  "filesystem)")                                                       \
	X(REAPER_FAILED, "reaper_failed", "refused", "1",                      \
	  "the reaper of a cgroup the hook made cannot start")                 \
	X(POLICY_REMOVED, "policy_removed", "left (`apply`)", "1",             \
	  "the config gives a running container no policy any more: it "       \
	  "keeps its programs")                                                \
	X(RECORDING, "recording", "left (`apply`)", "1",                       \
	  "the container is being recorded: its own programs keep its "        \
	  "footprint until it restarts")

enum sh_reason {
	SH_REASON_NONE, /* not classified: the token "error" */
#define SH_REASON_ENUM(name, token, event, status, meaning) SH_REASON_##name,
	SH_REASON_TABLE(SH_REASON_ENUM)
#undef SH_REASON_ENUM
		SH_REASONS,
};

/* The token "error": a failure no site classified. */
#define SH_REASON_ERROR "error"

struct reason_info {
	const char *token;
	const char *event;
	const char *status;
	const char *meaning;
};

/* The reason's row; NULL for SH_REASON_NONE and anything out of range. */
const struct reason_info *error_reason_info(enum sh_reason reason);
/* Its token, or NULL for SH_REASON_NONE. */
const char *error_reason_token(enum sh_reason reason);

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

struct sh_error {
	int code; /* a negative errno; 0 while nothing failed */
	char path[SH_ERROR_PATH_MAX]; /* the JSON path of a config error */
	char msg[SH_ERROR_MSG_MAX]; /* one line */
	/* Why, for metrics and audit lines (lib/error.h), or
	 * SH_REASON_NONE: see error_reason(). */
	enum sh_reason reason;
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
 * set stays, like the first message. */
void error_reason(struct sh_error *err, enum sh_reason reason);
/* Names what the error concerns (struct sh_cause), unless a site already
 * did: either may be NULL. */
void error_cause(struct sh_error *err, const char *annotation,
		 const char *setting);
/* err's reason's token, or "error" when no site classified it. */
const char *error_reason_text(const struct sh_error *err);
/* err's message, or code's text. */
const char *error_text(const struct sh_error *err, int code);

#endif /* SH_ERROR_H */
