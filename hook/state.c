// SPDX-License-Identifier: GPL-2.0-only
/*
 * One JSON record per container under /run/oci-sockopt-hook, written
 * atomically (temp file + rename), so a reader never sees half a record
 * and concurrent hooks for different containers never share a file. The
 * directory must be ours alone, and a record read back is checked before
 * it is acted on (record_invalid()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "log.h"
#include "oci.h"
#include "state.h"
#include "state_json.h"
#include "trust.h"

const char *state_dir(void)
{
	const char *env = getenv("OCI_SOCKOPT_HOOK_STATE_DIR");

	return env && *env ? env : SH_STATE_DIR;
}

int state_dir_open(bool create)
{
	const char *dir = state_dir();
	int fd, r;

	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_error("cannot create state directory %s: %s", dir,
			  strerror(errno));
		return -errno;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		/* A reader finds nothing to do when nothing ran yet. */
		if (create || errno != ENOENT)
			log_error("cannot open state directory %.128s: %s", dir,
				  strerror(errno));
		return -errno;
	}
	r = trust_check_state_dir(fd, dir);
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

int state_dir_check(void)
{
	int fd = state_dir_open(false);

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

int state_write(const struct sh_record *rec)
{
	_cleanup_close_ int dir = state_dir_open(true), fd = -1;
	_cleanup_json_ struct json_object *obj = NULL;
	char tmp[300], name[300];
	const char *text;
	int r;

	if (dir < 0)
		return dir;
	obj = record_to_json(rec);
	if (!obj)
		return -ENOMEM;
	text = json_object_to_json_string_ext(
		obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	snprintf(tmp, sizeof(tmp), ".%s.tmp", rec->id);
	snprintf(name, sizeof(name), "%s.json", rec->id);
	fd = openat(dir, tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	r = fd < 0 ? -errno : write_all(fd, text, strlen(text));
	if (!r && renameat(dir, tmp, dir, name) < 0)
		r = -errno;
	if (r) {
		unlinkat(dir, tmp, 0);
		log_error("cannot write state for %s in %s: %s", rec->id,
			  state_dir(), strerror(-r));
	}
	return r;
}

static int parse_record_at(int dir, const char *name, struct sh_record *rec)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ struct json_object *obj = NULL;
	char path[64];
	size_t len;
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), r;

	if (fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = read_file(path, 1 << 20, &text, &len);
	close(fd);
	if (r)
		return r;
	obj = json_tokener_parse(text);
	if (!obj)
		return -EBADMSG;
	return record_from_json(obj, rec);
}

/* The cgroup2 mount, looked up once and only when a record needs it. */
struct mount_cache {
	bool tried;
	int r;
	struct cg_root root;
};

static int cached_mount(struct mount_cache *m, const char **mount)
{
	if (!m->tried) {
		m->tried = true;
		m->r = cg_find_root(&m->root);
	}
	*mount = m->root.mount;
	return m->r;
}

/* A record that is not what the hook writes is never acted on. */
static int read_record_at(int dir, const char *name, struct mount_cache *m,
			  struct sh_record *rec)
{
	char stem[300];
	const char *why = "it is not a state record", *mount;
	int r = parse_record_at(dir, name, rec);

	if (r == -ENOENT)
		return r;
	if (!r && cached_mount(m, &mount))
		return -ENOENT; /* logged: no cgroup2 mount, nothing to act on */
	snprintf(stem, sizeof(stem), "%.*s", (int)(strlen(name) - 5), name);
	if (!r)
		why = record_invalid(rec, stem, mount);
	if (r == 0 && !why)
		return 0;
	log_warn("ignoring state record %s in %s: %s", LOG_Q(name), state_dir(),
		 r && r != -EBADMSG ? strerror(-r) : why);
	return r ? r : -EBADMSG;
}

int state_read(const char *id, struct sh_record *rec)
{
	_cleanup_close_ int dir = state_dir_open(false);
	struct mount_cache m = { 0 };
	char name[300];

	if (dir < 0)
		return dir;
	snprintf(name, sizeof(name), "%s.json", id);
	return read_record_at(dir, name, &m, rec);
}

int state_remove(const char *id)
{
	_cleanup_close_ int dir = state_dir_open(false);
	char name[300];

	if (dir < 0)
		return dir == -ENOENT ? 0 : dir;
	snprintf(name, sizeof(name), "%s.json", id);
	if (unlinkat(dir, name, 0) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static bool is_record_name(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && name[0] != '.' && !strcmp(name + len - 5, ".json");
}

int state_foreach(state_visit_fn fn, void *data)
{
	_cleanup_close_ int dir = state_dir_open(false);
	_cleanup_closedir_ DIR *d = NULL;
	struct mount_cache m = { 0 };
	struct dirent *de;
	int r = 0;

	if (dir == -ENOENT)
		return 0;
	if (dir < 0)
		return dir;
	d = fdopendir(take_fd(&dir));
	if (!d)
		return -errno;
	while ((de = readdir(d)) && !r) {
		struct sh_record rec;

		if (!is_record_name(de->d_name) ||
		    read_record_at(dirfd(d), de->d_name, &m, &rec))
			continue;
		r = fn(&rec, data);
	}
	return r;
}

int pid_stat(pid_t pid, char *state, uint64_t *start)
{
	_cleanup_free_ char *text = NULL;
	char path[64], *p;
	size_t len;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	r = read_file(path, 4096, &text, &len);
	if (r)
		return r;
	/* The comm field may hold spaces and ')': skip to the last ')'. */
	p = strrchr(text, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EBADMSG;
	*state = p[2];
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -EBADMSG;
	*start = strtoull(p + 1, NULL, 10);
	return 0;
}

bool pid_exiting(char state)
{
	return state == 'Z' || state == 'X';
}

/* Running, not a zombie, and the same process that was recorded. */
bool pid_running(pid_t pid, uint64_t start)
{
	uint64_t now;
	char state;

	return pid > 0 && pid_stat(pid, &state, &now) == 0 &&
	       !pid_exiting(state) && now == start;
}
