/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The network sysctls a bundle sets (linux.sysctl) against the policy's
 * setsockopt rules. A sysctl such as net.ipv4.tcp_rmem sets the default
 * of an option (SO_RCVBUF) for every socket of the network namespace, and
 * a socket that never calls setsockopt keeps that default: no program of
 * ours runs for it. So a container whose sysctls would set a default
 * beyond what a rule lets a setsockopt reach, and beyond what the node
 * gives a new network namespace anyway, is refused (sysctl_exceeds_policy).
 * docs/security.md says per rule what holds.
 */
#ifndef SH_SYSCTL_H
#define SH_SYSCTL_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config_types.h"
#include "lib/error.h"
#include "input/oci.h"

/* The longest key of the table, joined by '.', and its NUL. */
#define SH_SYSCTL_KEY_MAX 64
/* A value longer than this is refused where a rule needs to read it. */
#define SH_SYSCTL_VALUE_MAX 256

/*
 * Writes the key as the runtimes write it under /proc/sys (runc and crun
 * turn each '.' into '/'; empty components vanish in the path) into out,
 * its components joined by '.': "net/ipv4//tcp_rmem" is
 * "net.ipv4.tcp_rmem". false when it does not fit (no table key is that
 * long).
 */
bool sysctl_normalize(const char *key, char *out, size_t len);
/*
 * Reads up to max integers as the kernel's proc_dointvec reads them
 * (leading whitespace, an optional '-', base 0, separated by whitespace):
 * the number read, or -EINVAL for anything else (the kernel would refuse
 * it, or read it otherwise).
 */
int sysctl_parse_ints(const char *text, long long *vals, int max);
/*
 * 0 when the bundle's linux.sysctl sets no default past the policy's
 * setsockopt rules (or the policy has none it could), else a negative
 * errno with err filled in: reason sysctl_exceeds_policy, or state_invalid
 * for a value a rule needs that is not what the kernel reads.
 */
int sysctl_check(const struct sh_policy *policy, const struct oci_state *st,
		 struct sh_error *err);
/*
 * The same for the sysctls a network namespace the container joins by a
 * path already holds (a pod's: containerd and CRI-O apply the pod's
 * sysctls to its sandbox, whose namespace the containers join), read in
 * a child process that joins it; nothing for the node's own namespace.
 */
int sysctl_check_netns(const struct sh_policy *policy,
		       const struct oci_state *st, struct sh_error *err);
/*
 * The node's own value of a table sysctl (this process's network
 * namespace): its integers (as sysctl_parse_ints()), or -errno.
 */
int sysctl_node_ints(const char *key, long long *vals, int max);

#endif /* SH_SYSCTL_H */
