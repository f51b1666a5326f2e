/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Socket families that carry TCP or UDP through sockets the kernel makes
 * itself, which cgroup/sock_create never sees (no deny rule, mark or
 * priority applies): AF_SMC (SMC-R/SMC-D falls back to, and sets up over,
 * a kernel TCP socket), AF_RDS (RDS over TCP), AF_RXRPC (over a kernel UDP
 * socket) and AF_TIPC (UDP bearers, and raw Ethernet ones). What the
 * running kernel offers of them, read without making a socket: socket()
 * of an absent family asks modprobe for "net-pf-N", loading the module.
 */
#ifndef SH_FAMILIES_H
#define SH_FAMILIES_H

#include <stddef.h>

enum family_state {
	FAMILY_ABSENT, /* neither in the kernel nor under /lib/modules */
	FAMILY_MODULE, /* its module is there, but socket() does not load
			* it (no net-pf-N alias): loaded by root only */
	FAMILY_AUTOLOAD, /* socket() loads its module (modules.alias) */
	FAMILY_LOADED, /* in the kernel now (/proc/net/protocols) */
};

struct family_seen {
	const char *name; /* "AF_SMC" */
	int family;
	const char *module; /* "smc" */
	enum family_state state;
};

#define FAMILIES_MAX 4
/* "AF_SMC (loaded), AF_RDS (module rds present)" and its NUL. */
#define FAMILIES_TEXT_MAX 256

/* Fills out[FAMILIES_MAX]; returns how many are offered (not absent).
 * The modules come from $OCI_SOCKOPT_HOOK_MODULES_DIR (tests), else
 * /lib/modules/<release>. */
int families_probe(struct family_seen out[FAMILIES_MAX]);
const char *families_state_name(enum family_state state);
/* The offered ones, "" when none. */
void families_text(const struct family_seen seen[FAMILIES_MAX], char *buf,
		   size_t len);
/* The warning probe and validate print when some are offered, in one
 * line, or "" when none is. */
void families_warning(const struct family_seen seen[FAMILIES_MAX], char *buf,
		      size_t len);

#endif /* SH_FAMILIES_H */
