// SPDX-License-Identifier: GPL-2.0-only
/*
 * One JSON attachment per container under /run/oci-sockopt-hook (the
 * attribute SH_ATTACHMENT_XATTR of an empty <id>.json, never its content:
 * a trusted.* attribute takes CAP_SYS_ADMIN to write, so a root without
 * capabilities that can write the directory (the DaemonSet's nri
 * container mounts it) cannot plant one), written atomically (temp file +
 * rename), so a reader never sees half an attachment
 * and concurrent hooks for different containers never share a file. The
 * directory must be ours alone, and an attachment read back is checked before
 * it is acted on (state_attachment_invalid()).
 *
 * The attachment's on-disk form (its JSON) follows, then what /proc says of
 * an attachment's process.
 */
#include <dirent.h>
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/oci.h"
#include "input/strictjson.h"
#include "lib/cleanup.h"
#include "lib/context.h"
#include "lib/fileio.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "lib/trust.h"
#include "state/state.h"

#define STATE_RECORD_MAX (1 << 20)

const char *state_dir(void)
{
	const char *env = context_value(context_get()->state_dir);

	return env ? env : SH_STATE_DIR;
}

int state_dir_open(bool create, struct sh_error *err)
{
	const char *dir = state_dir();
	int fd, r;

	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return error_errno(err, -errno,
				   "cannot create state directory %s", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return error_errno(err, -errno,
				   "cannot open state directory %.128s", dir);
	r = trust_check_dir(fd, "state directory", dir, err);
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

int state_dir_check(struct sh_error *err)
{
	struct sh_error absent = { 0 };
	int fd = state_dir_open(/* create= */ false, &absent);

	/* A reader finds nothing to do when nothing ran yet. */
	if (fd == -ENOENT)
		return 0;
	if (fd < 0) {
		*err = err->code ? *err : absent;
		return fd;
	}
	close(fd);
	return 0;
}

int state_lock(const char *name, int how, struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(/* create= */ true, err);
	_cleanup_close_ int fd = -1;

	if (dir < 0)
		return dir;
	fd = openat(dir, name, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return error_errno(err, -errno, "cannot open %s/%s",
				   state_dir(), name);
	while (flock(fd, how) < 0)
		if (errno != EINTR)
			return error_errno(err, -errno, "cannot lock %s/%s",
					   state_dir(), name);
	return take_fd(&fd);
}

int state_file_read(const char *name, size_t max, char **text, size_t *len,
		    struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(/* create= */ false, err);

	if (dir < 0)
		return dir;
	return fileio_read_at(dir, name, 1, max, text, len);
}

int state_file_replace(const char *name, const char *text, size_t len,
		       struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(/* create= */ true, err);

	if (dir < 0)
		return dir;
	return fileio_replace_at(dir, name, text, len);
}

int state_attr_read(const char *name, size_t max, char **text, size_t *len,
		    struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(/* create= */ false, err);

	if (dir < 0)
		return dir;
	return fileio_read_xattr_at(dir, name, SH_ATTACHMENT_XATTR, max, text,
				    len, NULL);
}

int state_attr_replace(const char *name, const char *text, size_t len,
		       struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(/* create= */ true, err);

	if (dir < 0)
		return dir;
	return fileio_replace_xattr_at(dir, name, SH_ATTACHMENT_XATTR, text,
				       len);
}

int state_stamp_renew(const char *name, int interval_sec)
{
	struct sh_error err = { 0 };
	_cleanup_close_ int dir = state_dir_open(/* create= */ false, &err),
			    fd = -1;
	struct stat st;
	time_t age;

	if (dir < 0)
		return dir;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		age = time(NULL) - st.st_mtim.tv_sec;
		/* A stamp from the future: the clock was set back. */
		if (age >= 0 && age < interval_sec)
			return 0;
	}
	fd = openat(dir, name,
		    O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		    0600);
	if (fd < 0 || futimens(fd, NULL) < 0)
		return -errno;
	return 1;
}

int state_file_unlink_at(int dir, const char *name)
{
	if (unlinkat(dir, name, 0) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int state_file_foreach(state_file_fn fn, void *data)
{
	struct sh_error err = { 0 };
	_cleanup_close_ int dir = state_dir_open(/* create= */ false, &err);
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int r = 0;

	if (dir < 0)
		return dir == -ENOENT ? 0 : dir;
	d = fdopendir(take_fd(&dir));
	if (!d)
		return -errno;
	while ((de = readdir(d)) && !r)
		if (de->d_name[0] != '.')
			r = fn(dirfd(d), de->d_name, data);
	return r;
}

/* An attachment is the attribute of an empty file where the file system takes
 * one (fileio_replace_xattr_at()): on tmpfs, where /run usually is, the
 * file's content would hold a 4 KiB page for an attachment of under 1 KiB, the
 * biggest part of what a policed container costs the kernel (bench 9). */
static int attachment_replace(const char *name, const char *text, size_t len,
			      struct sh_error *err)
{
	_cleanup_close_ int dir = state_dir_open(/* create= */ true, err);

	if (dir < 0)
		return dir;
	return fileio_replace_xattr_at(dir, name, SH_ATTACHMENT_XATTR, text,
				       len);
}

static const char *key_of(const struct sh_attachment *att)
{
	return att->key[0] ? att->key : att->id;
}

static int attachment_name(const char *id, char name[SH_STATE_NAME_MAX])
{
	if (snprintf(name, SH_STATE_NAME_MAX, "%s.json", id) >=
	    (int)SH_STATE_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

int state_write(const struct sh_attachment *att, struct sh_error *err)
{
	_cleanup_json_ struct json_object *obj = state_attachment_to_json(att);
	char name[SH_STATE_NAME_MAX];
	const char *text;
	int r;

	if (!obj)
		return error_set(err, -ENOMEM, "cannot write state for %s: %s",
				 att->id, strerror(ENOMEM));
	text = json_object_to_json_string_ext(
		obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	r = attachment_name(key_of(att), name);
	if (r)
		goto fail;
	r = attachment_replace(name, text, strlen(text), err);
	if (r == -EOPNOTSUPP || r == -EPERM)
		return error_errno(
			err, r,
			"cannot write state for %s in %s, whose file system must take trusted.* attributes (tmpfs, ext4, xfs, btrfs) from us",
			att->id, state_dir());
	if (r)
		goto fail;
	return 0;
fail:
	return error_errno(err, r, "cannot write state for %s in %s", att->id,
			   state_dir());
}

static int parse_attachment_at(int dir, const char *name,
			       struct sh_attachment *att)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ struct json_object *obj = NULL;
	struct sh_error err = { 0 };
	size_t len;
	ino_t ino = 0;
	int r = fileio_read_xattr_at(dir, name, SH_ATTACHMENT_XATTR,
				     STATE_RECORD_MAX, &text, &len, &ino);

	if (r)
		return r;
	r = strictjson_parse(name, text, len, &obj, &err);
	if (r)
		return -EBADMSG;
	r = state_attachment_from_json(obj, att);
	att->file_ino = ino;
	snprintf(att->key, sizeof(att->key), "%.*s",
		 (int)(strlen(name) - strlen(".json")), name);
	return r;
}

/* The cgroup2 mount, looked up once and only when an attachment needs it. */
struct mount_cache {
	bool tried;
	int r;
	struct cg_root root;
};

static int cached_mount(struct mount_cache *m, const struct cg_root **root)
{
	struct sh_error err = { 0 };

	if (!m->tried) {
		m->tried = true;
		m->r = cg_find_root(&m->root, &err);
		/* A warning: no attachment is acted on without it. */
		if (m->r)
			log_warn("%s", err.msg);
	}
	*root = &m->root;
	return m->r;
}

/* An attachment that is not what the hook writes is never acted on. */
static int read_attachment_at(int dir, const char *name, struct mount_cache *m,
			      struct sh_attachment *att)
{
	char stem[SH_STATE_NAME_MAX];
	const char *why = "it is not a state record";
	const struct cg_root *root;
	int r = parse_attachment_at(dir, name, att);

	if (r == -ENOENT)
		return r;
	if (r == -ENODATA)
		why = "it has no record attribute (" SH_ATTACHMENT_XATTR
		      "), which only the hook, with CAP_SYS_ADMIN, writes";
	if (r)
		goto ignore;
	if (cached_mount(m, &root))
		return -ENOENT; /* warned: no cgroup2 mount, nothing to do */
	snprintf(stem, sizeof(stem), "%.*s", (int)(strlen(name) - 5), name);
	why = state_attachment_invalid(att, stem, root);
	if (!why)
		return 0;
ignore:
	log_warn("ignoring state record %s in %s: %s", LOG_Q(name), state_dir(),
		 r && r != -EBADMSG && r != -ENODATA ? strerror(-r) : why);
	return r && r != -ENODATA ? r : -EBADMSG;
}

int state_read(const char *id, struct sh_attachment *att)
{
	struct sh_error err = { 0 };
	_cleanup_close_ int dir = state_dir_open(/* create= */ false, &err);
	struct mount_cache m = { 0 };
	char name[SH_STATE_NAME_MAX];

	if (dir < 0)
		return dir;
	if (attachment_name(id, name))
		return -ENOENT;
	return read_attachment_at(dir, name, &m, att);
}

int state_remove(const char *id)
{
	struct sh_error err = { 0 };
	_cleanup_close_ int dir = state_dir_open(/* create= */ false, &err);
	char name[SH_STATE_NAME_MAX];

	if (dir < 0)
		return dir == -ENOENT ? 0 : dir;
	if (attachment_name(id, name))
		return 0;
	return state_file_unlink_at(dir, name);
}

int state_remove_read(const struct sh_attachment *att)
{
	struct sh_error err = { 0 };
	_cleanup_close_ int dir = state_dir_open(/* create= */ false, &err);
	char name[SH_STATE_NAME_MAX];
	struct stat st;

	if (dir < 0)
		return dir == -ENOENT ? 0 : dir;
	if (attachment_name(key_of(att), name))
		return 0;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (st.st_ino != att->file_ino)
		return 0; /* a newer container's */
	return state_file_unlink_at(dir, name);
}

static bool is_attachment_name(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && !strcmp(name + len - 5, ".json");
}

struct attachment_walk {
	state_visit_fn fn;
	void *data;
	struct mount_cache mount;
};

static int visit_file(int dir, const char *name, void *data)
{
	struct attachment_walk *walk = data;
	struct sh_attachment att;

	if (!is_attachment_name(name) ||
	    read_attachment_at(dir, name, &walk->mount, &att))
		return 0;
	return walk->fn(&att, walk->data);
}

int state_foreach(state_visit_fn fn, void *data)
{
	struct attachment_walk walk = { .fn = fn, .data = data };

	return state_file_foreach(visit_file, &walk);
}

struct id_walk {
	struct attachment_walk walk;
	const char *id;
};

/* "<id>.json" or "<id>@....json", read only then. */
static int visit_id_file(int dir, const char *name, void *data)
{
	struct id_walk *w = data;
	size_t n = strlen(w->id);

	if (strncmp(name, w->id, n) || (name[n] != '.' && name[n] != '@') ||
	    (name[n] == '.' && strcmp(name + n, ".json")))
		return 0;
	return visit_file(dir, name, &w->walk);
}

int state_foreach_id(const char *id, state_visit_fn fn, void *data)
{
	struct id_walk w = { { .fn = fn, .data = data }, id };

	return state_file_foreach(visit_id_file, &w);
}

void state_key_choose(struct sh_attachment *att)
{
	_cleanup_close_ int fd = -1;
	struct sh_attachment first;

	snprintf(att->key, sizeof(att->key), "%s", att->id);
	if (state_read(att->id, &first) ||
	    (first.pid == att->pid && first.pid_start == att->pid_start))
		return;
	fd = cg_open_attached(&first.cg);
	if (fd < 0)
		return; /* an earlier container's, gone: replaced */
	snprintf(att->key, sizeof(att->key), "%s@%016llx", att->id,
		 (unsigned long long)att->cg.id);
}

/* The attachment's on-disk form. */

static struct json_object *progs_to_json(const struct sh_progs *progs)
{
	struct json_object *arr = json_object_new_array();

	for (int i = 0; arr && i < progs->nr; i++) {
		struct json_object *p = json_object_new_object();
		char hash[20];

		jsonw_int(p, "id", progs->prog[i].id);
		jsonw_str(p, "attach", kind_type_name(progs->prog[i].type));
		snprintf(hash, sizeof(hash), "%016llx",
			 (unsigned long long)progs->prog[i].hash);
		jsonw_str(p, "name", progs->prog[i].name);
		jsonw_str(p, "hash", hash);
		json_object_array_add(arr, p);
	}
	return arr;
}

struct json_object *state_attachment_to_json(const struct sh_attachment *att)
{
	struct json_object *obj = json_object_new_object();

	if (!obj)
		return NULL;
	jsonw_str(obj, "id", att->id);
	jsonw_str(obj, "namespace", att->k8s_namespace);
	jsonw_str(obj, "pod", att->pod);
	jsonw_str(obj, "container", att->container);
	jsonw_int(obj, "pid", att->pid);
	jsonw_int(obj, "pid_start", (int64_t)att->pid_start);
	jsonw_str(obj, "cgroup", att->cg.rel);
	jsonw_str(obj, "cgroup_path", att->cg.abs);
	jsonw_int(obj, "cgroup_id", (int64_t)att->cg.id);
	jsonw_bool(obj, "cgroup_created", att->cg.created);
	jsonw_str(obj, "parent_cgroup", att->cg.parent_rel);
	jsonw_str(obj, "policy", att->policy);
	jsonw_str(obj, "policy_source", att->policy_source);
	jsonw_bool(obj, "bypass_prot_mem", att->bypass);
	jsonw_bool(obj, "bypass_active", att->progs.bypass_active);
	jsonw_str(obj, "bypass_source", att->bypass_source);
	jsonw_str(obj, "mode", att->audit ? "audit" : "enforce");
	jsonw_str(obj, "mode_source", att->mode_source);
	json_object_object_add(obj, "programs", progs_to_json(&att->progs));
	if (att->footprint[0]) {
		jsonw_str(obj, "record", att->footprint);
		jsonw_str(obj, "record_dir", att->footprint_dir);
	}
	return obj;
}

/* A copy cut to len - 1 bytes, as snprintf("%s") would make it, without
 * printf's cost: poststop reads some twenty of them. */
static void get_str(struct json_object *obj, const char *key, char *buf,
		    size_t len)
{
	struct json_object *v;
	size_t n;

	buf[0] = '\0';
	if (!json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return;
	n = strnlen(json_object_get_string(v), len - 1);
	memcpy(buf, json_object_get_string(v), n);
	buf[n] = '\0';
}

static int64_t get_int(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v))
		return 0;
	return json_object_get_int64(v);
}

static bool get_bool(struct json_object *obj, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(obj, key, &v) &&
	       json_object_get_boolean(v);
}

static int progs_from_json(struct json_object *arr, struct sh_progs *progs)
{
	size_t n;
	char type[32], hash[20];
	const struct kind_info *kind;

	if (!json_object_is_type(arr, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(arr);
	if (n > SH_PROG_KINDS)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(arr, i);
		struct sh_prog *prog = &progs->prog[i];

		prog->id = (__u32)get_int(p, "id");
		get_str(p, "name", prog->name, sizeof(prog->name));
		get_str(p, "attach", type, sizeof(type));
		get_str(p, "hash", hash, sizeof(hash));
		prog->hash = strtoull(hash, NULL, 16);
		kind = kind_by_name(type);
		if (!kind)
			return -EBADMSG;
		prog->type = kind->type;
	}
	progs->nr = (int)n;
	return 0;
}

int state_attachment_from_json(struct json_object *obj,
			       struct sh_attachment *att)
{
	struct json_object *arr;
	char mode[sizeof("enforce")] = "";

	memset(att, 0, sizeof(*att));
	get_str(obj, "id", att->id, sizeof(att->id));
	get_str(obj, "namespace", att->k8s_namespace,
		sizeof(att->k8s_namespace));
	get_str(obj, "pod", att->pod, sizeof(att->pod));
	get_str(obj, "container", att->container, sizeof(att->container));
	att->pid = (pid_t)get_int(obj, "pid");
	att->pid_start = (uint64_t)get_int(obj, "pid_start");
	get_str(obj, "cgroup", att->cg.rel, sizeof(att->cg.rel));
	get_str(obj, "cgroup_path", att->cg.abs, sizeof(att->cg.abs));
	att->cg.id = (uint64_t)get_int(obj, "cgroup_id");
	att->cg.created = get_bool(obj, "cgroup_created");
	get_str(obj, "parent_cgroup", att->cg.parent_rel,
		sizeof(att->cg.parent_rel));
	get_str(obj, "policy", att->policy, sizeof(att->policy));
	get_str(obj, "policy_source", att->policy_source,
		sizeof(att->policy_source));
	att->bypass = get_bool(obj, "bypass_prot_mem");
	att->progs.bypass_active = get_bool(obj, "bypass_active");
	get_str(obj, "bypass_source", att->bypass_source,
		sizeof(att->bypass_source));
	get_str(obj, "record", att->footprint, sizeof(att->footprint));
	get_str(obj, "record_dir", att->footprint_dir,
		sizeof(att->footprint_dir));
	get_str(obj, "mode", mode, sizeof(mode));
	att->audit = !strcmp(mode, "audit");
	get_str(obj, "mode_source", att->mode_source, sizeof(att->mode_source));
	if (!att->id[0] || att->cg.abs[0] != '/' ||
	    !json_object_object_get_ex(obj, "programs", &arr))
		return -EBADMSG;
	return progs_from_json(arr, &att->progs);
}

/* Absolute, not the root, no empty, "." or ".." component. */
static bool clean_cgroup_path(const char *rel)
{
	const char *p = rel;

	if (*p != '/')
		return false;
	while (*p == '/') {
		const char *c = p + 1;
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		p = c + n;
	}
	return true;
}

/* A cgroup the hook made is <parent>/oci-sockopt-hook-..., nothing else. */
static bool made_by_hook(const struct cg_target *cg)
{
	const char *base = strrchr(cg->rel, '/') + 1;
	size_t parent_len = (size_t)(base - 1 - cg->rel);

	if (strncmp(base, SH_CGROUP_PREFIX, strlen(SH_CGROUP_PREFIX)))
		return false;
	if (!strcmp(cg->parent_rel, "/"))
		return parent_len == 0;
	return clean_cgroup_path(cg->parent_rel) &&
	       strlen(cg->parent_rel) == parent_len &&
	       !strncmp(cg->rel, cg->parent_rel, parent_len);
}

static const char *progs_invalid(const struct sh_progs *progs)
{
	for (int i = 0; i < progs->nr; i++) {
		if (progs->prog[i].id == 0)
			return "a program id is 0";
		if (strncmp(progs->prog[i].name, "sh_", 3))
			return "a program's name does not start with sh_";
	}
	return NULL;
}

bool state_attachment_stem_ok(const struct sh_attachment *att, const char *stem)
{
	size_t n = strlen(att->id);
	char cgid[18];

	if (strncmp(att->id, stem, n))
		return false;
	if (!stem[n])
		return true;
	snprintf(cgid, sizeof(cgid), "@%016llx",
		 (unsigned long long)att->cg.id);
	return !strcmp(stem + n, cgid);
}

const char *state_attachment_invalid(const struct sh_attachment *att,
				     const char *stem,
				     const struct cg_root *root)
{
	char abs[sizeof(att->cg.abs)];

	if (!oci_valid_id(att->id))
		return "its id is not a valid container id";
	if (!state_attachment_stem_ok(att, stem))
		return "its id is not its file name";
	if (att->pid <= 0)
		return "its pid is not positive";
	if (!clean_cgroup_path(att->cg.rel))
		return "its cgroup is not a clean absolute path";
	if (cg_path(root, att->cg.rel, abs, sizeof(abs)) ||
	    strcmp(abs, att->cg.abs))
		return "its cgroup_path is not its cgroup below the cgroup2 mount";
	if (att->cg.created && !made_by_hook(&att->cg))
		return "its cgroup_created is true for a cgroup the hook cannot have made";
	return progs_invalid(&att->progs);
}

/* Process identity: a pid is reused, a (pid, start time) pair is not. */

#define PROC_STAT_MAX 4096
#define STARTTIME_FIELD 22 /* of /proc/<pid>/stat, in clock ticks */

int state_proc_stat(pid_t pid, char *state, uint64_t *start)
{
	_cleanup_free_ char *text = NULL;
	char path[64], *p;
	size_t len;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	r = fileio_read_at(AT_FDCWD, path, 0, PROC_STAT_MAX, &text, &len);
	if (r)
		return r;
	/* The comm field may hold spaces and ')': skip to the last ')'. */
	p = strrchr(text, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EBADMSG;
	*state = p[2];
	/* p is on the ')' that ends field 2: one space per field on. */
	for (int field = 2; field < STARTTIME_FIELD && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -EBADMSG;
	*start = strtoull(p + 1, NULL, 10);
	return 0;
}

bool state_proc_exiting(char state)
{
	return state == 'Z' || state == 'X';
}

bool state_proc_running(pid_t pid, uint64_t start)
{
	uint64_t now;
	char state;

	return pid > 0 && state_proc_stat(pid, &state, &now) == 0 &&
	       !state_proc_exiting(state) && now == start;
}
