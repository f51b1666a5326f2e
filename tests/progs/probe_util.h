/* SPDX-License-Identifier: GPL-2.0-only */
/* What the in-container probes (sockcheck, escape) share. */
#ifndef PROBE_UTIL_H
#define PROBE_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* "EPERM" for EPERM: the probes print errno names, not messages. */
static const char *errname(int err)
{
	static char buf[16];
	const char *name = strerrorname_np(err);

	if (name)
		return name;
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

static int parse_int(const char *s, int *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || *s == '\0' || *end != '\0' || v < INT32_MIN ||
	    v > INT32_MAX)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int tcp_socket(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		printf("socket=%s\n", errname(errno));
	return fd;
}

#endif /* PROBE_UTIL_H */
