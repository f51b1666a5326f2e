/* SPDX-License-Identifier: GPL-2.0-only */
/* Reading /proc/self/mountinfo: mount points, file system types, options. */
#ifndef SH_MOUNTINFO_H
#define SH_MOUNTINFO_H

#include <stdbool.h>

/* One line's fields, pointing into the line. */
struct mountinfo_entry {
	char *root; /* the mount's root within its file system */
	char *mnt; /* the mount point, unescaped */
	char *fstype;
	char *super_opts; /* the file system's options ("" if absent) */
};

/*
 * Splits one line of a mountinfo file in place (the kernel's octal
 * escapes in the mount point undone): 0, or -EINVAL for a line that is
 * not one.
 */
int mountinfo_parse_line(char *line, struct mountinfo_entry *e);

/* The text of /proc/self/mountinfo, read once and kept. */
struct mountinfo {
	const char *text; /* given (tests, fixed inputs), or read */
	char *owned;
	int error; /* why it could not be read: -errno, else 0 */
};

/* m's text, read from /proc/self/mountinfo unless given; NULL on error. */
const char *mountinfo_text(struct mountinfo *m);
void mountinfo_done(struct mountinfo *m);

/*
 * Calls fn on each mount of text in order, on a copy of its line; stops
 * at fn's first non-zero return and returns it, else 0 (-ENOMEM).
 */
int mountinfo_each(const char *text,
		   int (*fn)(const struct mountinfo_entry *e, void *data),
		   void *data);

/* opts, comma-separated, holds name. */
bool mountinfo_has_opt(const char *opts, const char *name);

/*
 * The cgroup2 hierarchy has nsdelegate, a flag of the whole hierarchy
 * that every cgroup2 mount shows in its super options: false when text
 * shows no cgroup2 mount.
 */
bool mountinfo_cgroup2_nsdelegate(const char *text);

#endif /* SH_MOUNTINFO_H */
