/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Audit mode's would-have counters, read back from a container's programs
 * (bpf/audit_mode.h): what the policy would have denied, clamped or forced.
 */
#ifndef SH_AUDIT_MODE_H
#define SH_AUDIT_MODE_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "audit_mode_map.h"
#include "state/state.h"

/* Every slot of the three programs, at most. */
#define AUDIT_MODE_MAX (3 * (SH_WH_RULES + 1) + SH_WH_MISSES + 1)

struct audit_mode_entry {
	enum sh_prog_kind kind;
	const char *action; /* "deny", "clamp", "force" */
	bool socket; /* a sock_create deny rule: family, type, protocol */
	bool miss; /* an allow-list miss */
	bool overflow; /* beyond the counted rules or options */
	int level, optname, extra;
	uint64_t n;
};

struct audit_mode_counts {
	int nr;
	struct audit_mode_entry e[AUDIT_MODE_MAX];
};

/* The non-zero counters of every program of the container, in slot order. */
int audit_mode_read(const struct sh_progs *progs, uint64_t cg_id,
		    struct audit_mode_counts *out);
/* "would deny SOL_SOCKET SO_MARK", "would deny socket AF_INET6", ... */
void audit_mode_text(const struct audit_mode_entry *e, char *buf, size_t len);
/* Labels: level ("SOL_SOCKET", "socket" for a socket rule, "" for an
 * overflow) and option ("SO_MARK", "AF_INET6 any any", "other"). */
void audit_mode_level(const struct audit_mode_entry *e, char *buf, size_t len);
void audit_mode_option(const struct audit_mode_entry *e, char *buf, size_t len);
struct json_object *audit_mode_json(const struct audit_mode_counts *w);
uint64_t audit_mode_total(const struct audit_mode_counts *w);

#endif /* SH_AUDIT_MODE_H */
