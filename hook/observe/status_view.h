/* SPDX-License-Identifier: GPL-2.0-only */
/* What a policy's programs enforce, in one line each, for `status`. */
#ifndef SH_STATUS_VIEW_H
#define SH_STATUS_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>
#include <limits.h>

#include "config/config.h"
#include "config/families.h"
#include "lib/kind.h"
/*
 * What a container's policy does not hold against, for `status`: the
 * known gaps of the security model (docs/security.md) that apply to this
 * container, each with a stable id and a line of text.
 */

enum caveats_id {
	CAVEATS_STALE_ATTACHMENT,
	CAVEATS_HOOK_MADE_CGROUP,
	CAVEATS_COMPAT_SYSCALLS,
	CAVEATS_PACKET_SOCKETS,
	CAVEATS_MPTCP_SUBFLOWS,
	CAVEATS_BYPASS_FELL_BACK,
	CAVEATS_OTHER_PROGRAMS,
	CAVEATS_SOCK_DIAG,
	CAVEATS_KERNEL_SOCKETS,
	CAVEATS_ROUTE_METRICS,
	CAVEATS_MAX,
};

#define SH_CAVEAT_TEXT_MAX (PATH_MAX + 512)

struct caveats_input {
	const struct sh_attachment *att;
	bool live; /* the attachment's cgroup is still there */
	/* The policy from the operator config, or NULL when unknown (no
	 * named policy, or no readable config). */
	const struct sh_policy *policy;
	/* Programs of other tools that run for the cgroup ("setsockopt 17
	 * (name), ..."), or "" when there are none. */
	const char *other_programs;
	/* Families this kernel offers whose TCP/UDP goes through kernel
	 * sockets (families_text()), "" or NULL for none. */
	const char *families;
};

struct caveat {
	const char *id; /* stable: "hook_made_cgroup", ... */
	char text[SH_CAVEAT_TEXT_MAX];
};

struct caveats {
	int nr;
	struct caveat c[CAVEATS_MAX];
};

/* The stable id of a caveat. */
const char *status_view_caveat_name(enum caveats_id id);
void status_view_caveats(const struct caveats_input *in, struct caveats *ret);

/*
 * What is really attached to a container's cgroup, against what its
 * attachment says: `status` shows the kernel's view and calls a difference
 * drift ("record says program 42, the cgroup has none").
 */

#define SH_DRIFT_OURS_MAX 8
#define SH_DRIFT_OTHER_MAX 512
#define SH_DRIFT_TEXT_MAX (PATH_MAX + 160)

/* One attach type of ours on the container's cgroup. */
struct drift_kind {
	enum bpf_attach_type type;
	__u32 recorded; /* the attachment's program of this type, or 0 */
	int nr_ours; /* programs named sh_* attached to the cgroup itself */
	__u32 ours[SH_DRIFT_OURS_MAX];
};

enum drift_state {
	DRIFT_NONE, /* neither recorded nor attached */
	DRIFT_ATTACHED, /* the recorded program is attached, alone */
	DRIFT_MISSING, /* recorded, none attached */
	DRIFT_REPLACED, /* recorded, another one attached */
	DRIFT_EXTRA, /* attached besides the recorded one */
	DRIFT_UNRECORDED, /* attached, the record names none */
};

struct drift_report {
	struct drift_kind kind[SH_PROG_KINDS];
	/* Other programs that run for the cgroup: "setsockopt 17 (name)". */
	char other[SH_DRIFT_OTHER_MAX];
};

/* The attachment's side only, before asking the kernel. */
void status_view_drift_init(const struct sh_attachment *att,
			    struct drift_report *ret);
/* Asks the kernel about the cgroup cg_fd: 0 or a negative errno. */
int status_view_drift_query(int cg_fd, struct drift_report *ret);

enum drift_state status_view_drift_state_of(const struct drift_kind *k);
/* "attached", "missing", ...: stable tokens. */
const char *status_view_drift_state_name(enum drift_state s);
/* 1 and a line for a kind that drifted ("record says ..."), else 0. */
int status_view_drift_text(const struct drift_kind *k, const char *cg_rel,
			   char *buf, size_t len);

#include "observe/counters.h"
#include "stage/apply.h"
#include "state/state.h"

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

/* One container: its attachment, and the kernel's view of its cgroup now. */
struct status_view_row {
	struct sh_attachment att;
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

/* The rules of the attachment's policy, what bypass did, the caveats. */
void status_view_of(const struct status_view_rules *rules,
		    const struct status_view_row *row, struct status_view *v);
/* Whether the attachment or the cgroup has a program of this kind. */
bool status_view_kind_shown(const struct status_view_row *row, int k);
/* "attached", "missing", ... (status_view.h), "cgroup_gone" or "unknown". */
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
