/* SPDX-License-Identifier: GPL-2.0-only */
/* What a policy's programs enforce, in one line each, for `status`. */
#ifndef SH_STATUS_VIEW_H
#define SH_STATUS_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "config/config.h"
#include "config/families.h"
#include "lib/kind.h"
#include "observe/caveats.h"
#include "observe/drift.h"
#include "prog/counters.h"
#include "stage/apply.h"

#define SH_STATUS_VIEW_TEXT_MAX 1024

/*
 * What the program of this kind enforces for policy p (NULL: no named
 * policy), as "deny AF_PACKET; mark 7" or "default allow: deny
 * SOL_SOCKET SO_MARK; clamp SOL_SOCKET SO_RCVBUF 4096..65536"; a text
 * that does not fit ends in "...".
 */
void status_view_rules_text(const struct sh_policy *p, enum sh_prog_kind kind,
			    bool bypass_active, char *buf, size_t len);

enum status_view_bypass {
	STATUS_VIEW_BYPASS_NOT_ASKED,
	STATUS_VIEW_BYPASS_APPLIED,
	STATUS_VIEW_BYPASS_FELL_BACK,
};

enum status_view_bypass status_view_bypass_state(bool asked, bool active);
/* A stable token: "not_asked", "applied", "fell_back". */
const char *status_view_bypass_token(enum status_view_bypass b);
/* For people: "applied", "fell back (...)", "not asked". */
const char *status_view_bypass_text(enum status_view_bypass b);

struct audit_mode_counts;

/* One container: its record, and the kernel's view of its cgroup now. */
struct status_view_row {
	struct sh_record rec;
	bool live;
	struct sh_counters c;
	struct drift_report drift;
	int drift_err; /* the cgroup could not be queried */
	struct audit_mode_counts
		*wh; /* audit mode: would-have counters, or NULL */
	/* Its policy hash against the config's (when the config is read). */
	bool checked;
	struct apply_check check;
};

/* The operator config the rules come from, as it is now. */
struct status_view_rules {
	bool cfg_ok;
	struct sh_config cfg;
	char cfg_error[SH_ERROR_MSG_MAX];
	/* What this kernel offers of the families no program of ours sees
	 * (families_text()), "" for none: asked once per run. */
	char families[FAMILIES_TEXT_MAX];
};

/* What enforces what for one container. */
struct status_view {
	const struct sh_policy *policy;
	bool rules_known;
	char rules_why[SH_ERROR_MSG_MAX + 64];
	enum status_view_bypass bypass;
	struct caveats cav;
};

/* The rules of the record's policy, what bypass did, the caveats. */
void status_view_of(const struct status_view_rules *rules,
		    const struct status_view_row *row, struct status_view *v);
/* Whether the record or the cgroup has a program of this kind. */
bool status_view_kind_shown(const struct status_view_row *row, int k);
/* "attached", "missing", ... (drift.h), "cgroup_gone" or "unknown". */
const char *status_view_prog_state(const struct status_view_row *row,
				   const struct drift_kind *k);
/* What the program of kind k enforces, or why that is unknown. */
void status_view_prog_rules(const struct status_view_row *row,
			    const struct status_view *v, int k, char *buf,
			    size_t len);
/* The drift lines: an array of strings, [] when none. */
struct json_object *status_view_drift_json(const struct status_view_row *row);
/* "policy hash 1234...: as the config has it", or what differs. */
void status_view_policy_hash_text(const struct status_view_row *row, char *buf,
				  size_t len);
/* status --json's "enforcement" object. */
struct json_object *status_view_json(const struct status_view_rules *rules,
				     const struct status_view_row *row);

#endif /* SH_STATUS_VIEW_H */
