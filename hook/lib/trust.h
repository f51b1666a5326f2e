/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_TRUST_H
#define SH_TRUST_H

/*
 * What root trusts. The operator config decides every policy: it must be a
 * regular file owned by root (or the caller) that neither group nor others
 * can write, in a directory they cannot write either (unless it is sticky
 * and root's, as /tmp). The state directory decides what poststop
 * detaches and removes: it must be ours alone. Each refusal is one logged
 * error that names the path, its owner and its mode.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "lib/error.h"

/* Opens the operator config for reading (O_NOFOLLOW, in its checked
 * directory) and stores the fd, or returns a negative errno. */
int trust_open_config(const char *path, int *fd, struct sh_error *err);
/* 0 when the open directory fd (what, at path: the state directory, the
 * pin directory) is owned by the effective uid and not writable by group
 * or others; else -EPERM. */
int trust_check_dir(int fd, const char *what, const char *path,
		    struct sh_error *err);

/* 0 when every symbolic link on the way to path is one root trusts: owned
 * by root or the caller, in a directory only they may write (or sticky and
 * root's); else -EPERM naming the link. */
int trust_check_links(const char *path, const char *what, struct sh_error *err);

/*
 * A directory root writes into (record.dir): opened from "/" one component
 * at a time, each with O_NOFOLLOW, so no symbolic link is followed; the
 * missing ones made when create (0755, the last one mode). Each must be
 * owned by root or the caller and not writable by group or others (on the
 * way, a sticky one of root's, as /tmp, is fine). An fd, or -errno with
 * one line naming the component (what names the setting).
 */
int trust_open_dir_path(const char *what, const char *path, bool create,
			mode_t mode, struct sh_error *err);
/* One more component below a directory so opened, checked the same way;
 * path names it in the error. */
int trust_open_dir_at(int dir, const char *name, const char *what,
		      const char *path, bool create, mode_t mode,
		      struct sh_error *err);

#endif /* SH_TRUST_H */
