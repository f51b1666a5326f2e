// SPDX-License-Identifier: GPL-2.0-only
/*
 * Static keys kept on (keys.h): a cgroup of our own, no process in it,
 * and on it one two-instruction program per attach type that returns 1.
 * Attached the legacy way (BPF_PROG_ATTACH, as the containers' programs):
 * it lives as long as the cgroup, which `preload` (keep_keys off, or no
 * policy left of that type) and `preload --unpin` remove.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/magic.h>

#include "cgroup/cg.h"
#include "lib/kind.h"
#include "lib/cleanup.h"
#include "lib/context.h"
#include "prog/keys.h"

/* More programs of one type than anything attaches to our cgroup. */
#define KEYS_QUERY_MAX 64

const char *keys_cgroup(void)
{
	const char *env = context_value(context_get()->keys_cgroup);

	return env ? env : SH_KEYS_CGROUP;
}

/* Relative, and no "." or ".." component: it stays below the mount. */
static bool keys_name_ok(const char *name)
{
	const char *p = name;

	if (*name == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		p += *p == '/';
	}
	return *name != '\0';
}

static int keys_path(char *buf, size_t len, struct sh_error *err)
{
	const char *name = keys_cgroup();
	char rel[PATH_MAX];
	struct cg_root root;
	int r;

	if (!keys_name_ok(name))
		return error_set(
			err, -EINVAL,
			"keys cgroup %.128s: not a relative path below the cgroup2 mount",
			name);
	r = cg_find_root(&root, err);
	if (r)
		return r;
	snprintf(rel, sizeof(rel), "/%s", name);
	if (cg_path(&root, rel, buf, len))
		return error_set(err, -ENAMETOOLONG, "keys cgroup %.128s: %s",
				 name, strerror(ENAMETOOLONG));
	return 0;
}

/* The cgroup, opened: an fd, -ENOENT, or -errno with err set. */
static int keys_open(const char *path, struct sh_error *err)
{
	_cleanup_close_ int fd =
		open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	struct statfs fs;

	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0 || fstatfs(fd, &fs) < 0)
		return error_errno(err, -errno, "cannot open keys cgroup %s",
				   path);
	if (fs.f_type != CGROUP2_SUPER_MAGIC)
		return error_set(err, -EINVAL,
				 "keys cgroup %s is not on a cgroup2 mount",
				 path);
	return take_fd(&fd);
}

/* The id of our program of kind k on the cgroup, 0 when there is none. */
static int keys_find(int cg_fd, enum sh_prog_kind k, __u32 *found)
{
	__u32 ids[KEYS_QUERY_MAX], n = KEYS_QUERY_MAX, flags = 0;

	*found = 0;
	if (bpf_prog_query(cg_fd, kind_get(k)->type, 0, &flags, ids, &n))
		return -errno;
	for (__u32 i = 0; i < n; i++) {
		char name[SH_BPF_NAME_MAX];

		kind_prog_name(ids[i], name);
		if (!strcmp(name, SH_KEYS_PROG_NAME)) {
			*found = ids[i];
			return 0;
		}
	}
	return 0;
}

/* r0 = 1; exit: allow, and never touch the socket (it never runs). */
static int keys_load(enum sh_prog_kind k)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K,
		  .dst_reg = BPF_REG_0,
		  .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = kind_get(k)->type);
	enum bpf_prog_type type = k == SH_PROG_SOCK ?
					  BPF_PROG_TYPE_CGROUP_SOCK :
					  BPF_PROG_TYPE_CGROUP_SOCKOPT;
	int fd = bpf_prog_load(type, SH_KEYS_PROG_NAME, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), &opts);

	return fd < 0 ? -errno : fd;
}

static int keys_attach(int cg_fd, enum sh_prog_kind k, struct sh_error *err)
{
	_cleanup_close_ int fd = keys_load(k);

	if (fd < 0)
		return error_errno(err, fd, "cannot load the %s keys program",
				   kind_get(k)->name);
	if (bpf_prog_attach(fd, cg_fd, kind_get(k)->type, BPF_F_ALLOW_MULTI))
		return error_errno(err, -errno,
				   "cannot attach the %s keys program",
				   kind_get(k)->name);
	return 0;
}

static int keys_detach(int cg_fd, enum sh_prog_kind k, __u32 id,
		       struct sh_error *err)
{
	_cleanup_close_ int fd = bpf_prog_get_fd_by_id(id);

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (bpf_prog_detach2(fd, cg_fd, kind_get(k)->type) && errno != ENOENT)
		return error_errno(err, -errno,
				   "cannot detach the %s keys program %u",
				   kind_get(k)->name, id);
	return 0;
}

/* What the open cgroup at path holds. */
static int keys_state_at(int cg_fd, const char *path, struct keys_state *ret)
{
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->cgroup, sizeof(ret->cgroup), "%s", path);
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		__u32 id;
		int r = keys_find(cg_fd, k, &id);

		if (r)
			return r;
		ret->kept[k] = id != 0;
	}
	if (cg_populated_at(cg_fd, &ret->populated))
		ret->populated = false;
	return 0;
}

/* Attaches what is wanted and missing, detaches ours that are not. */
static int keys_sync(int cg_fd, const bool want[SH_PROG_KINDS],
		     struct sh_error *err)
{
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		__u32 id;
		int r = keys_find(cg_fd, k, &id);

		if (r)
			return error_errno(err, r,
					   "cannot query the keys cgroup");
		if (want[k] && !id)
			r = keys_attach(cg_fd, k, err);
		else if (!want[k] && id)
			r = keys_detach(cg_fd, k, id, err);
		if (r)
			return r;
	}
	return 0;
}

int keys_keep(const bool want[SH_PROG_KINDS], struct keys_state *ret,
	      struct sh_error *err)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	bool any = false;
	int r = keys_path(path, sizeof(path), err);

	memset(ret, 0, sizeof(*ret));
	for (int k = 0; k < SH_PROG_KINDS; k++)
		any |= want[k];
	if (r)
		return r;
	if (any && mkdir(path, 0755) < 0 && errno != EEXIST)
		return error_errno(err, -errno, "cannot create keys cgroup %s",
				   path);
	fd = keys_open(path, err);
	if (fd == -ENOENT && !any)
		return 0;
	if (fd < 0)
		return fd;
	r = keys_sync(fd, want, err);
	if (r || any)
		return r ? r : keys_state_at(fd, path, ret);
	/* Nothing wanted: the cgroup goes, and anything else on it. */
	if (rmdir(path) < 0 && errno != ENOENT)
		return error_errno(err, -errno, "cannot remove keys cgroup %s",
				   path);
	return 0;
}

int keys_query(struct keys_state *ret, struct sh_error *err)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	int r = keys_path(path, sizeof(path), err);

	memset(ret, 0, sizeof(*ret));
	if (r)
		return r;
	fd = keys_open(path, err);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	r = keys_state_at(fd, path, ret);
	return r ? error_errno(err, r, "cannot query keys cgroup %s", path) : 0;
}

void keys_text(const struct keys_state *st, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int k = 0; k < SH_PROG_KINDS && used < len; k++)
		if (st->kept[k])
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? ", " : "", kind_get(k)->name);
	if (!used)
		snprintf(buf, len, "none");
}
