/* SPDX-License-Identifier: GPL-2.0-only */
/* Scope-bound release of fds, memory and JSON objects, as in systemd/crun. */
#ifndef SH_CLEANUP_H
#define SH_CLEANUP_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <json-c/json.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_json_ _cleanup_(json_putp)
#define _cleanup_closedir_ _cleanup_(closedirp)

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static inline void json_putp(struct json_object **obj)
{
	if (*obj)
		json_object_put(*obj);
}

/* Hand ownership to the caller so the cleanup handler does nothing. */
#define TAKE_PTR(p)                     \
	({                              \
		typeof(p) _taken = (p); \
		(p) = NULL;             \
		_taken;                 \
	})

static inline int take_fd(int *fd)
{
	int taken = *fd;

	*fd = -1;
	return taken;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* SH_CLEANUP_H */
