/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Audit mode's would-have counters, read back from a container's programs
 * (bpf/audit_mode.h): what the policy would have denied, clamped or forced.
 */
#ifndef SH_WOULDHAVE_H
#define SH_WOULDHAVE_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "audit_mode.h"
#include "record.h"

/* Every slot of the three programs, at most. */
#define WOULDHAVE_MAX (3 * (SH_WH_RULES + 1) + SH_WH_MISSES + 1)

struct wouldhave_entry {
	enum sh_prog_kind kind;
	const char *action; /* "deny", "clamp", "force" */
	bool socket; /* a sock_create deny rule: family, type, protocol */
	bool miss; /* an allow-list miss */
	bool overflow; /* beyond the counted rules or options */
	int level, optname, extra;
	uint64_t n;
};

struct wouldhave {
	int nr;
	struct wouldhave_entry e[WOULDHAVE_MAX];
};

/* The non-zero counters of every program of the container, in slot order. */
int wouldhave_read(const struct sh_progs *progs, uint64_t cg_id,
		   struct wouldhave *out);
/* "would deny SOL_SOCKET SO_MARK", "would deny socket AF_INET6", ... */
void wouldhave_text(const struct wouldhave_entry *e, char *buf, size_t len);
/* Labels: level ("SOL_SOCKET", "socket" for a socket rule, "" for an
 * overflow) and option ("SO_MARK", "AF_INET6 any any", "other"). */
void wouldhave_level(const struct wouldhave_entry *e, char *buf, size_t len);
void wouldhave_option(const struct wouldhave_entry *e, char *buf, size_t len);
struct json_object *wouldhave_json(const struct wouldhave *w);
uint64_t wouldhave_total(const struct wouldhave *w);

#endif /* SH_WOULDHAVE_H */
