/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_COUNTERS_H
#define SH_COUNTERS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "audit_mode_map.h"
#include "sockopt_hook.h"
#include "state/state.h"

struct sh_counters {
	uint64_t v[SH_CNT_MAX];
};

extern const char *const counters_names[SH_CNT_MAX];

/* Sums the per-CPU counters of every program in progs for one cgroup. */
int counters_read(const struct sh_progs *progs, uint64_t cg_id,
		  struct sh_counters *ret);

/*
 * Audit mode's would-have counters, read back from a container's programs
 * (bpf/audit_mode.h): what the policy would have denied, clamped or forced.
 */

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
int counters_audit_read(const struct sh_progs *progs, uint64_t cg_id,
			struct audit_mode_counts *ret);
/* "would deny SOL_SOCKET SO_MARK", "would deny socket AF_INET6", ... */
void counters_audit_text(const struct audit_mode_entry *e, char *buf,
			 size_t len);
/* Labels: level ("SOL_SOCKET", "socket" for a socket rule, "" for an
 * overflow) and option ("SO_MARK", "AF_INET6 any any", "other"). */
void counters_audit_level(const struct audit_mode_entry *e, char *buf,
			  size_t len);
void counters_audit_option(const struct audit_mode_entry *e, char *buf,
			   size_t len);
struct json_object *counters_audit_json(const struct audit_mode_counts *w);
uint64_t counters_audit_total(const struct audit_mode_counts *w);

#endif /* SH_COUNTERS_H */
