/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The state directory: one record per container, and the index of shared
 * program copies (share.c). Every file in it is reached here, through the
 * checked directory fd, without following a symlink.
 */
#ifndef SH_STATE_H
#define SH_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"
#include "state/state_record.h"

#define SH_STATE_DIR "/run/oci-sockopt-hook"
/* Where a record's JSON is kept: this extended attribute of its (empty)
 * file, never the file's content. trusted.*: only root with CAP_SYS_ADMIN
 * reads or writes it, so a uid 0 without capabilities cannot plant one. */
#define SH_RECORD_XATTR "trusted.oci-sockopt-hook.record"
/* A record's file name: its key (the container id, or the id, '@' and
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
 * until its record is written; `apply` takes it exclusively once, before
 * it reads the config, so every record it does not see comes from a
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
 * Container ids are unique per runtime root, not per node: a record's key
 * is its id, unless "<id>.json" holds the record of another container
 * (another pid or start time) whose cgroup is still there, when it is
 * "<id>@<its cgroup id>". Sets rec->key; before the first state_write().
 */
void state_key_choose(struct sh_record *rec);
int state_write(const struct sh_record *rec, struct sh_error *err);
/* The record of key (an id, or rec->key of one read): -ENOENT: none;
 * -EBADMSG: an invalid one, ignored with a warning. */
int state_read(const char *key, struct sh_record *rec);
int state_remove(const char *key);
/* Calls fn for each record of container id (every key it has). */
typedef int (*state_visit_fn)(const struct sh_record *rec, void *data);
int state_foreach_id(const char *id, state_visit_fn fn, void *data);
/* Removes the record rec was read from (state_read, state_foreach),
 * unless a newer one replaced it since. */
int state_remove_read(const struct sh_record *rec);
int state_foreach(state_visit_fn fn, void *data);

#endif /* SH_STATE_H */
