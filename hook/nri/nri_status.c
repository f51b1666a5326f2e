// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NRI plugin's lock and status file (nri_status.h). The lock is a
 * flock() on nri.lock, so it goes with the process however it ends (a
 * crash, SIGKILL): a stale file never blocks the next copy, and a reader
 * that can take the lock itself knows that no plugin runs, whatever
 * nri.status still says.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/jsonw.h"
#include "nri/nri_status.h"
#include "state/state.h"

#define STATUS_MAX 4096

static int open_lock(bool create, struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(create, err);
	int fd;

	if (dir < 0)
		return dir;
	fd = openat(dir, NRI_STATUS_LOCK,
		    (create ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC |
			    O_NOFOLLOW | O_NONBLOCK,
		    0600);
	if (fd < 0)
		return error_errno(err, -errno, "cannot open %s/%s",
				   state_dir(), NRI_STATUS_LOCK);
	return fd;
}

int nri_status_lock(struct nri_status *s, struct sh_error *err)
{
	_cleanup_close_ int fd = open_lock(/* create= */ true, err);
	char pid[32] = "";
	ssize_t n;

	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return error_errno(err, -errno, "cannot lock %s/%s",
					   state_dir(), NRI_STATUS_LOCK);
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		return error_set(
			err, -EBUSY,
			"another oci-sockopt-hook nri (pid %s) holds %s/%s: refusing to register a second copy, which would make the runtime fail every container both annotate",
			pid[0] ? pid : "?", state_dir(), NRI_STATUS_LOCK);
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, n, 0) != n)
		return error_errno(err, -errno, "cannot write %s/%s",
				   state_dir(), NRI_STATUS_LOCK);
	s->lock_fd = take_fd(&fd);
	return 0;
}

void nri_status_unlock(struct nri_status *s)
{
	_cleanup_close_ int dir = -1;
	struct sh_error err = { 0 };

	if (s->lock_fd < 0)
		return;
	dir = state_dir_open(/* create= */ false, &err);
	if (dir >= 0)
		state_file_unlink_at(dir, NRI_STATUS_FILE);
	close(s->lock_fd);
	s->lock_fd = -1;
}

int nri_status_write(struct nri_status *s, const struct nri_plugin *p,
		     bool registered)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	struct sh_error err = { 0 };
	char name[NRI_NAME_MAX + 4];
	const char *text;

	if (!o)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%s-%s", p->idx, p->name);
	jsonw_int(o, "pid", getpid());
	jsonw_bool(o, "registered", registered);
	jsonw_str_set(o, "name", name);
	jsonw_str_set(o, "mode", s->mode);
	jsonw_str_set(o, "socket", s->socket);
	if (registered) {
		jsonw_str_set(o, "runtime", p->runtime);
		jsonw_str_set(o, "runtime_version", p->runtime_version);
		jsonw_int(o, "since", s->since);
	}
	jsonw_int(o, "containers", p->stats.containers);
	jsonw_int(o, "hooked", p->stats.hooked);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	return state_file_replace(NRI_STATUS_FILE, text, strlen(text), &err);
}

/* 1 when some process holds the lock. */
static int lock_held(void)
{
	struct sh_error err = { 0 };
	_cleanup_close_ int fd = open_lock(/* create= */ false, &err);

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0)
		return 0;
	return errno == EWOULDBLOCK ? 1 : -errno;
}

int nri_status_registered(char *runtime, size_t len)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ struct json_object *o = NULL;
	struct json_object *v, *name, *version;
	struct sh_error err = { 0 };
	size_t n;
	int r = lock_held();

	runtime[0] = '\0';
	if (r <= 0)
		return r;
	r = state_file_read(NRI_STATUS_FILE, STATUS_MAX, &text, &n, &err);
	if (r)
		return r == -ENOENT ? 0 : r;
	o = json_tokener_parse(text);
	if (!o || !json_object_object_get_ex(o, "registered", &v) ||
	    !json_object_get_boolean(v))
		return 0;
	if (json_object_object_get_ex(o, "runtime", &name) &&
	    json_object_object_get_ex(o, "runtime_version", &version))
		snprintf(runtime, len, "%s %s", json_object_get_string(name),
			 json_object_get_string(version));
	return 1;
}
