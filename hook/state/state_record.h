/* SPDX-License-Identifier: GPL-2.0-only */
/* What the hook did to one container, and its on-disk (JSON) form. */
#ifndef SH_STATE_RECORD_H
#define SH_STATE_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "cgroup/cg.h"
#include "lib/bpfinfo.h"
#include "lib/kind.h"
#include "lib/sh_types.h"

struct sh_prog {
	enum bpf_attach_type type;
	__u32 id;
	char name[SH_BPF_NAME_MAX];
	__u64 hash; /* the policy hash of the copy (see share.h) */
};

struct sh_progs {
	int nr;
	struct sh_prog prog[SH_PROG_KINDS];
	bool bypass_active; /* the bypass variant was attached */
};

/* Enough to undo what the hook did, and to show it. */
struct sh_record {
	char id[SH_MAX_ID_LEN + 1];
	/* Who it is, as the runtime named it ("" when it did not): labels
	 * for status, metrics and audit lines. */
	char k8s_namespace[SH_MAX_CONTAINER_NAME + 1];
	char pod[SH_MAX_CONTAINER_NAME + 1];
	char container[SH_MAX_CONTAINER_NAME + 1];
	pid_t pid;
	uint64_t pid_start;
	struct cg_target cg;
	char policy[SH_POLICY_NAME_MAX + 1];
	char policy_source[SH_SOURCE_TEXT_MAX];
	bool bypass;
	char bypass_source[SH_SOURCE_TEXT_MAX];
	bool audit; /* audit mode: the programs count, apply nothing */
	char mode_source[SH_SOURCE_TEXT_MAX];
	struct sh_progs progs;
	/* Record mode: the record name ("" when not recording) and where its
	 * proposed policy goes (record.dir when it started). */
	char footprint[SH_POLICY_NAME_MAX + 1];
	char footprint_dir[SH_RECORD_DIR_MAX];
	/* Not in the JSON: the stem of its file name, "<id>", or
	 * "<id>@<cgroup id, 16 hex digits>" for a second container with the
	 * same id (another runtime root) while the first runs ("": its id),
	 * and the inode of the file it was read from (0 when
	 * it was not), so that dropping it can tell whether a newer record
	 * replaced it since, without reading that one. */
	uint64_t file_ino;
	char key[SH_MAX_ID_LEN + 18];
};

struct json_object *state_record_to_json(const struct sh_record *rec);
/* -EBADMSG for what is not a record. */
int state_record_from_json(struct json_object *obj, struct sh_record *rec);
/*
 * NULL when a record read back may be acted on, else why not. It is
 * checked before anything it names feeds unlinkat, rmdir or a detach:
 * stem is its file name without ".json" (its id, or its id, '@' and its
 * cgroup id in 16 hex digits), root the cgroup2 mount.
 */
const char *state_record_invalid(const struct sh_record *rec, const char *stem,
				 const struct cg_root *root);
/* stem is rec's id, or its id, '@' and its cgroup id (16 hex digits). */
bool state_record_stem_ok(const struct sh_record *rec, const char *stem);

#endif /* SH_STATE_RECORD_H */
