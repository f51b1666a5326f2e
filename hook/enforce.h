/* SPDX-License-Identifier: GPL-2.0-only */
/* What a policy's programs enforce, in one line each, for `status`. */
#ifndef SH_ENFORCE_H
#define SH_ENFORCE_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "kind.h"

#define SH_ENFORCE_TEXT_MAX 1024

/*
 * What the program of this kind enforces for policy p (NULL: no named
 * policy), as "deny AF_PACKET; mark 7" or "default allow: deny
 * SOL_SOCKET SO_MARK; clamp SOL_SOCKET SO_RCVBUF 4096..65536"; a text
 * that does not fit ends in "...".
 */
void enforce_rules_text(const struct sh_policy *p, enum sh_prog_kind kind,
			bool bypass_active, char *buf, size_t len);

enum enforce_bypass {
	ENFORCE_BYPASS_NOT_ASKED,
	ENFORCE_BYPASS_APPLIED,
	ENFORCE_BYPASS_FELL_BACK,
};

enum enforce_bypass enforce_bypass_state(bool asked, bool active);
/* A stable token: "not_asked", "applied", "fell_back". */
const char *enforce_bypass_token(enum enforce_bypass b);
/* For people: "applied", "fell back (...)", "not asked". */
const char *enforce_bypass_text(enum enforce_bypass b);

#endif /* SH_ENFORCE_H */
