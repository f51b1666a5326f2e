/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Audit lines: one per refused container and one per fallback, with the
 * container id, its pod, namespace and name, the annotation and setting
 * involved and a stable reason token (error.h). In log_file as text or
 * JSON (log_format), and to journald with OCI_SOCKOPT_HOOK_* fields when
 * it listens, else to syslog. At notice level, written whatever log_level
 * says: the error or warning line before it carries the severity (and is
 * the one line on stderr).
 */
#ifndef SH_EVENTS_H
#define SH_EVENTS_H

#include "input/container.h"
#include "lib/error.h"

/* After error_report(): the stage (command) refused the container. */
void events_refusal(const char *stage, const struct sh_container *c,
		    const struct sh_error *err, int code);
/* A prestart that started the container with less than it asked for:
 * why (SH_REASON_NONE for "error") and what asked for it. */
void events_fallback(const char *stage, const struct sh_container *c,
		     enum sh_reason reason, const struct sh_cause *cause);

#endif /* SH_EVENTS_H */
