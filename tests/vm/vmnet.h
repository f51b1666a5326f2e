/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the VM suite's static test programs (memacct, neighbour) share:
 * messages, clocks, small /proc readers and loopback TCP plumbing.
 * Errors are said once on stderr, prefixed with the program's name.
 */
#ifndef VMNET_H
#define VMNET_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>

/* the program's name for messages, defined by each program */
extern const char *prog;

void err_msg(const char *what, int err);
/* a /proc file opened for reading, or NULL (said on stderr) */
FILE *open_proc(const char *path);
void msleep(int ms);
/* CLOCK_MONOTONIC in seconds */
double now(void);
/* 0 or -errno; buf holds the file's first len - 1 bytes */
int read_file(const char *path, char *buf, size_t len);
int write_file(const char *path, const char *val);

/*
 * A counter of this network namespace from a /proc/net file made of
 * header/value line pairs ("TcpExt:" in netstat, "Tcp:" in snmp), or -1
 * (said on stderr).
 */
long proc_counter(const char *path, const char *section, const char *name);
/* "mem" of the "TCP:" or "UDP:" line of /proc/net/sockstat, in pages */
long sockstat_mem(bool tcp);

/* a socket bound to an ephemeral loopback port; its address in *ss */
int bound_socket(int family, int type, struct sockaddr_storage *ss,
		 socklen_t *len);
int tcp_listener(int family, struct sockaddr_storage *ss, socklen_t *len,
		 int backlog);
/* connect one TCP client to the listener; *cli connected, *child accepted */
int tcp_pair(int lfd, const struct sockaddr_storage *ss, socklen_t len,
	     int *cli, int *child);
void raise_nofile(int n);

/*
 * Send up to bytes on each of the n sockets fds[] without blocking, until
 * every one is capped or stalled (no progress in three 200 ms polls) or
 * secs pass. Returns the bytes sent, or -1.
 */
long fill_sockets(const int *fds, int n, long bytes, int secs);

#endif
