/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One container, as the OCI state and its bundle describe it: read once
 * (container_read()), then what policy, require, sandbox and the audit
 * lines read instead of the annotations. Only this module looks
 * annotations up; what a value means (a list's entry, a policy name, a
 * boolean) is decided by whoever reads it, in the order it always was,
 * so that the first refusal stays the same.
 */
#ifndef SH_CONTAINER_H
#define SH_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "input/cdi.h"
#include "input/oci.h"
#include "input/pod.h"
#include "lib/error.h"
#include "lib/sh_types.h"

/* The per-container settings a workload may write: KEY, KEY.<name>, and
 * its entry in the list containers.KEY. */
enum container_setting {
	CONTAINER_POLICY,
	CONTAINER_BYPASS,
	CONTAINER_RECORD,
	CONTAINER_MODE,
	CONTAINER_NR_SETTINGS,
};

struct container_setting_values {
	char named_key[SH_ANNOTATION_KEY_MAX]; /* KEY.<name>, "" unnamed */
	const char *named; /* KEY.<name>'s value, or NULL */
	const char *list; /* containers.KEY, unparsed, or NULL */
	const char *plain; /* KEY, or NULL */
};

struct sh_container {
	/* The state, for what is not an annotation: its bundle's
	 * namespaces and mounts (bundle.c), the pid and cgroup. */
	const struct oci_state *st;
	const char *id;
	const char *bundle; /* NULL when absent */
	pid_t pid;
	/* Who it is in its pod; names unchecked (pod_check()). */
	struct pod_identity who;
	struct container_setting_values setting[CONTAINER_NR_SETTINGS];
	/* The operator's node.sockopt-hook.io/ keys and the runtime's. */
	const char *handler; /* SH_ANNOTATION_HANDLER */
	const char *nri_mark; /* SH_ANNOTATION_NRI */
	const char *sandbox_id; /* who.sandbox_id */
	/* The CDI devices of ours the spec's hooks ask for (cdi.h): each
	 * one a request as an annotation would be. nr_cdi < 0: too many. */
	const char *cdi[SH_CDI_MAX];
	int nr_cdi;
	/* A key the hooks.d file's regex reacts to is present, or a CDI
	 * device of ours is asked for. */
	bool has_policy_key;
};

/* A setting's value for this container, and the key it came from. */
struct annotation_pick {
	char key[SH_ANNOTATION_KEY_MAX]; /* where the value came from */
	char entry[SH_ANNOTATION_ENTRY_MAX]; /* a value from a list */
	const char *value; /* NULL: no annotation for this container */
};

/* Fills c from st (its annotations as they are now: the state's, or
 * merged with the bundle's). c points into st: read it again after
 * oci_load_bundle(). Never fails: a name pod_check() refuses is kept. */
void container_read(const struct oci_state *st, struct sh_container *c);
/* KEY.<name>, else <name>'s entry in containers.KEY, else KEY: 0 (value
 * NULL when none), or -EINVAL for a containers.KEY that is no list. For
 * the policy and the bypass, a CDI device asking for one is the pick
 * (its key "CDI device sockopt-hook.io/policy=NAME"); one that is not a
 * device of ours, two policies, or an annotation saying otherwise is
 * refused. */
int container_pick(const struct sh_container *c, enum container_setting s,
		   struct annotation_pick *pick, struct sh_error *err);

#endif /* SH_CONTAINER_H */
