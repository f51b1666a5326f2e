/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The state directory: one attachment per container (what the hook did to
 * it, and its on-disk form), and the index of shared program copies
 * (share.c). Every file in it is reached here, through the checked
 * directory fd, without following a symlink.
 */
#ifndef SH_STATE_H
#define SH_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "cgroup/cg.h"
#include "lib/error.h"
#include "lib/kind.h"
#include "lib/sh_types.h"

/* What the hook did to one container, and its on-disk (JSON) form. */
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
struct sh_attachment {
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
	 * it was not), so that dropping it can tell whether a newer attachment
	 * replaced it since, without reading that one. */
	uint64_t file_ino;
	char key[SH_MAX_ID_LEN + 18];
};

struct json_object *state_attachment_to_json(const struct sh_attachment *att);
/* -EBADMSG for what is not an attachment. */
int state_attachment_from_json(struct json_object *obj,
			       struct sh_attachment *att);
/*
 * NULL when an attachment read back may be acted on, else why not. It is
 * checked before anything it names feeds unlinkat, rmdir or a detach:
 * stem is its file name without ".json" (its id, or its id, '@' and its
 * cgroup id in 16 hex digits), root the cgroup2 mount.
 */
const char *state_attachment_invalid(const struct sh_attachment *att,
				     const char *stem,
				     const struct cg_root *root);
/* stem is att's id, or its id, '@' and its cgroup id (16 hex digits). */
bool state_attachment_stem_ok(const struct sh_attachment *att,
			      const char *stem);

#define SH_STATE_DIR "/run/oci-sockopt-hook"
/* Where an attachment's JSON is kept: this extended attribute of its (empty)
 * file, never the file's content. trusted.*: only root with CAP_SYS_ADMIN
 * reads or writes it, so a uid 0 without capabilities cannot plant one. */
#define SH_ATTACHMENT_XATTR "trusted.oci-sockopt-hook.record"
/* An attachment's file name: its key (the container id, or the id, '@' and
 * its cgroup id in 16 hex digits: state_key_choose()) and ".json". */
#define SH_STATE_NAME_MAX (SH_MAX_ID_LEN + 17 + sizeof(".json"))

const char *state_dir(void);
/* The state directory, opened and checked (trust.h): an fd, or a negative
 * errno; -ENOENT when a reader (!create) finds no directory. */
int state_dir_open(bool create, struct sh_error *err);
/* 0 when the state directory is safe to use or absent. */
int state_dir_check(struct sh_error *err);

/*
 * The lock files in the state directory. SH_STATE_APPLY_LOCK: one `apply`
 * at a time. SH_STATE_CONFIG_LOCK: a prestart that attaches holds it
 * shared from before it checks that the config it read is still the file's
 * until its attachment is written; `apply` takes it exclusively once, before
 * it reads the config, so every attachment it does not see comes from a
 * prestart that read the config after it.
 */
#define SH_STATE_APPLY_LOCK "apply.lock"
#define SH_STATE_CONFIG_LOCK "config.lock"
/* Takes flock(how) on the lock file name (made on first use): an fd to
 * close to release it, or a negative errno. */
int state_lock(const char *name, int how, struct sh_error *err);
/* A regular file of at most max bytes; -ENOENT when it or the directory
 * is missing. */
int state_file_read(const char *name, size_t max, char **text, size_t *len,
		    struct sh_error *err);
/* Replaces a file atomically (fileio_replace_at()). */
/* Like state_file_read()/state_file_replace(), but in the trusted
 * attribute attachments use, never the file's content: for what a root
 * without CAP_SYS_ADMIN in the container must not be able to plant. */
int state_attr_read(const char *name, size_t max, char **text, size_t *len,
		    struct sh_error *err);
int state_attr_replace(const char *name, const char *text, size_t len,
		       struct sh_error *err);
int state_file_replace(const char *name, const char *text, size_t len,
		       struct sh_error *err);
/* Calls fn for each file name (temp files left out) until it returns
 * non-zero; the directory fd is for state_file_unlink_at(). */
typedef int (*state_file_fn)(int dir, const char *name, void *data);
int state_file_foreach(state_file_fn fn, void *data);
int state_file_unlink_at(int dir, const char *name);
/* 1 when the stamp file is missing or at least interval_sec old, and it
 * is renewed now; 0 when it is younger; or a negative errno. */
int state_stamp_renew(const char *name, int interval_sec);

/*
 * Container ids are unique per runtime root, not per node: an attachment's key
 * is its id, unless "<id>.json" holds the attachment of another container
 * (another pid or start time) whose cgroup is still there, when it is
 * "<id>@<its cgroup id>". Sets att->key; before the first state_write().
 */
void state_key_choose(struct sh_attachment *att);
int state_write(const struct sh_attachment *att, struct sh_error *err);
/* The attachment of key (an id, or att->key of one read): -ENOENT: none;
 * -EBADMSG: an invalid one, ignored with a warning. */
int state_read(const char *key, struct sh_attachment *att);
int state_remove(const char *key);
/* Calls fn for each attachment of container id (every key it has). */
typedef int (*state_visit_fn)(const struct sh_attachment *att, void *data);
int state_foreach_id(const char *id, state_visit_fn fn, void *data);
/* Removes the attachment att was read from (state_read, state_foreach),
 * unless a newer one replaced it since. */
int state_remove_read(const struct sh_attachment *att);
int state_foreach(state_visit_fn fn, void *data);

/* What /proc says about a process. */
/* A process's state letter and start time, from one read of its stat. */
int state_proc_stat(pid_t pid, char *state, uint64_t *start);
/* The kernel silently skips such tasks when they are moved. */
bool state_proc_exiting(char state);
/* Running, not a zombie, and the process that started at start. */
bool state_proc_running(pid_t pid, uint64_t start);

#endif /* SH_STATE_H */
