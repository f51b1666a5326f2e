// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whose namespaces a container joins (bundle_joined_pid()), by the
 * /proc/<pid>/ns paths of its bundle: the pod's sandbox through its IPC
 * namespace, also for an ephemeral container that targets another
 * container's pid namespace.
 *
 * Modules: `bundle.c`
 */
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "input/bundle.h"
#include "input/oci.h"
#include "tap.h"

/* The pid bundle_joined_pid() finds in linux.namespaces (a JSON array). */
static pid_t joined(const char *namespaces)
{
	struct sh_error err = { 0 };
	struct oci_state st;
	char text[2048];
	pid_t pid;

	memset(&st, 0, sizeof(st));
	snprintf(text, sizeof(text),
		 "{\"ociVersion\":\"1.0.2\",\"linux\":{\"namespaces\":%s}}",
		 namespaces);
	if (oci_parse_bundle_config("t", text, strlen(text), &st, &err))
		return -1;
	pid = bundle_joined_pid(&st);
	oci_state_free(&st);
	return pid;
}

int main(void)
{
	/* containerd's WithPodNamespaces: network, ipc, uts at the sandbox's
	 * pid; pid at the sandbox's (shareProcessNamespace) or the target's
	 * (an ephemeral container with a target). */
	ok(joined("[{\"type\":\"network\",\"path\":\"/proc/10/ns/net\"},"
		  "{\"type\":\"ipc\",\"path\":\"/proc/10/ns/ipc\"},"
		  "{\"type\":\"uts\",\"path\":\"/proc/10/ns/uts\"},"
		  "{\"type\":\"pid\",\"path\":\"/proc/10/ns/pid\"},"
		  "{\"type\":\"mount\"}]") == 10,
	   "a pod container under shareProcessNamespace: the sandbox's pid");
	ok(joined("[{\"type\":\"pid\",\"path\":\"/proc/20/ns/pid\"},"
		  "{\"type\":\"network\",\"path\":\"/proc/10/ns/net\"},"
		  "{\"type\":\"ipc\",\"path\":\"/proc/10/ns/ipc\"},"
		  "{\"type\":\"uts\",\"path\":\"/proc/10/ns/uts\"}]") == 10,
	   "an ephemeral container targeting pid 20: the sandbox's pid (10), from its IPC namespace");
	ok(joined("[{\"type\":\"pid\",\"path\":\"/proc/20/ns/pid\"},"
		  "{\"type\":\"network\",\"path\":\"/proc/10/ns/net\"}]") == 10,
	   "host IPC and UTS: the network namespace's pid");
	ok(joined("[{\"type\":\"pid\",\"path\":\"/proc/20/ns/pid\"},"
		  "{\"type\":\"network\"}]") == 20,
	   "only the pid namespace by path: its pid");
	ok(joined("[{\"type\":\"ipc\",\"path\":\"/var/run/ipcns/x\"},"
		  "{\"type\":\"pid\"}]") == 0,
	   "CRI-O's pinned namespaces: none by pid");
	ok(joined("[]") == 0, "no namespace: 0");
	return tap_done();
}
