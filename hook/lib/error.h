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

#include "lib/reason.h"

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
	/* Why, for metrics and audit lines (lib/reason.h), or
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
