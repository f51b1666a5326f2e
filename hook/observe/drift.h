/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What is really attached to a container's cgroup, against what its
 * record says: `status` shows the kernel's view and calls a difference
 * drift ("record says program 42, the cgroup has none").
 */
#ifndef SH_DRIFT_H
#define SH_DRIFT_H

#include <limits.h>
#include <stdbool.h>

#include "state/state.h"

#define SH_DRIFT_OURS_MAX 8
#define SH_DRIFT_OTHER_MAX 512
#define SH_DRIFT_TEXT_MAX (PATH_MAX + 160)

/* One attach type of ours on the container's cgroup. */
struct drift_kind {
	enum bpf_attach_type type;
	__u32 recorded; /* the record's program of this type, or 0 */
	int nr_ours; /* programs named sh_* attached to the cgroup itself */
	__u32 ours[SH_DRIFT_OURS_MAX];
};

enum drift_state {
	DRIFT_NONE, /* neither recorded nor attached */
	DRIFT_ATTACHED, /* the recorded program is attached, alone */
	DRIFT_MISSING, /* recorded, none attached */
	DRIFT_REPLACED, /* recorded, another one attached */
	DRIFT_EXTRA, /* attached besides the recorded one */
	DRIFT_UNRECORDED, /* attached, the record names none */
};

struct drift_report {
	struct drift_kind kind[SH_PROG_KINDS];
	/* Other programs that run for the cgroup: "setsockopt 17 (name)". */
	char other[SH_DRIFT_OTHER_MAX];
};

/* The record's side only, before asking the kernel. */
void drift_init(const struct sh_record *rec, struct drift_report *out);
/* Asks the kernel about the cgroup cg_fd: 0 or a negative errno. */
int drift_query(int cg_fd, struct drift_report *out);

enum drift_state drift_state_of(const struct drift_kind *k);
/* "attached", "missing", ...: stable tokens. */
const char *drift_state_name(enum drift_state s);
/* 1 and a line for a kind that drifted ("record says ..."), else 0. */
int drift_text(const struct drift_kind *k, const char *cg_rel, char *buf,
	       size_t len);

#endif /* SH_DRIFT_H */
