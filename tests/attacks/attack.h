/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every attack program shares. An attack runs inside a policed
 * container, tries one way around the policy, and then asserts the kernel's
 * final state (read back with getsockopt, or seen from the other end), not
 * only the return code. It prints TAP lines (tests/lib/tap.h); the shell
 * suite relays them (tap_relay in tests/lib/tap.sh) and the exit status is 0
 * only if every assertion held.
 */
#ifndef ATTACK_H
#define ATTACK_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/tap.h"
#include "probe_util.h"

/* The int the kernel holds for an option, or INT_MIN (and errno). */
static int read_int(int fd, int level, int opt)
{
	socklen_t len = sizeof(int);
	int v = 0;

	if (getsockopt(fd, level, opt, &v, &len) < 0)
		return -2147483647 - 1;
	return v;
}

/* setsockopt's result as 0 or an errno, never -1. */
static int try_set(int fd, int level, int opt, const void *val, int len)
{
	return setsockopt(fd, level, opt, val, (socklen_t)len) < 0 ? errno : 0;
}

static int try_set_int(int fd, int level, int opt, int v)
{
	return try_set(fd, level, opt, &v, sizeof(v));
}

static int new_socket(int family, int type, int protocol)
{
	int fd = socket(family, type | SOCK_CLOEXEC, protocol);

	if (fd < 0)
		tap_diag("socket(%d, %d, %d): %s", family, type, protocol,
			 errname(errno));
	return fd;
}

#endif /* ATTACK_H */
