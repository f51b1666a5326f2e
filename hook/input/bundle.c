// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a bundle's config.json lets the container do to its own cgroup
 * membership. A process may move itself into any cgroup it can see through
 * a writable cgroup mount. A cgroup2 mount made for the container in a
 * cgroup namespace of its own shows only the subtree of the cgroup it was
 * in when the namespace was made, which the policy covers when that cgroup
 * is the one we attach to. A bind of the host's cgroup2 tree shows what
 * its source shows, whatever the namespace; whether the kernel lets the
 * container use it (nsdelegate) is cg.c's question. The hook's own
 * cgroup2 mount is one way to the tree among many: any mount of the
 * hierarchy (Cilium keeps one at /run/cilium/cgroupv2), or a recursive
 * bind of a directory above one, is another, so a bind is judged by the
 * file system the kernel finds at its source and by the mounts below it
 * in mountinfo, not by its path.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "input/bundle.h"
#include "lib/cleanup.h"
#include "lib/mountinfo.h"
#include "lib/number.h"

struct mount_opts {
	bool ro; /* the mount itself is read-only */
	bool rro; /* and every mount below it (runc/crun "rro") */
	bool bind, rbind;
};

static const char *get_string(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

/* Later options win, as the runtimes apply them. */
static void read_opts(struct json_object *mnt, struct mount_opts *o)
{
	struct json_object *arr;

	memset(o, 0, sizeof(*o));
	if (!json_object_object_get_ex(mnt, "options", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		const char *opt = json_object_get_string(
			json_object_array_get_idx(arr, i));

		if (!opt)
			continue;
		if (!strcmp(opt, "ro") || !strcmp(opt, "rw"))
			o->ro = opt[1] == 'o';
		else if (!strcmp(opt, "rro") || !strcmp(opt, "rrw"))
			o->rro = opt[2] == 'o';
		else if (!strcmp(opt, "bind"))
			o->bind = true;
		else if (!strcmp(opt, "rbind"))
			o->rbind = true;
	}
}

/* path is dir or below it. */
static bool path_within(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len == 1 && dir[0] == '/')
		return path[0] == '/';
	return !strncmp(path, dir, len) &&
	       (path[len] == '\0' || path[len] == '/');
}

/* The bind's source on the host, as the runtime opens it: a relative one
 * is the bundle's. */
static void bind_joined(const struct oci_state *st, const char *src, char *out,
			size_t len)
{
	if (src[0] != '/' && st->bundle)
		snprintf(out, len, "%s/%s", st->bundle, src);
	else
		snprintf(out, len, "%s", src);
}

/*
 * The same with symlinks resolved, as mountinfo names mount points, and
 * whether that names the file the kernel finds: a path through /proc's
 * magic links (/proc/PID/root/...) leads into another mount namespace,
 * which realpath() cannot follow and this mountinfo does not list. A
 * source that is not there (explain with a copied bundle) is taken as
 * written.
 */
static bool bind_real(const char *joined, char *out, size_t len)
{
	_cleanup_free_ char *real = realpath(joined, NULL);
	struct stat a, b;

	snprintf(out, len, "%s", real ? real : joined);
	if (!real || stat(joined, &a) || stat(real, &b))
		return true;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

struct below {
	const char *dir;
	char found[PATH_MAX];
};

static int cgroup2_below(const struct mountinfo_entry *e, void *data)
{
	struct below *b = data;

	/* The source's own mount gets the bind's "ro"; those below do not. */
	if (strcmp(e->fstype, "cgroup2") || !path_within(e->mnt, b->dir) ||
	    path_within(b->dir, e->mnt))
		return 0;
	snprintf(b->found, sizeof(b->found), "%s", e->mnt);
	return 1;
}

/* A cgroup2 mount below dir in mountinfo (1, its mount point in b), 0 if
 * none, -errno when mountinfo cannot be read. */
static int find_cgroup2_below(struct mountinfo *mi, const char *dir,
			      struct below *b)
{
	const char *text = mountinfo_text(mi);

	b->dir = dir;
	b->found[0] = '\0';
	if (!text)
		return mi->error;
	return mountinfo_each(text, cgroup2_below, b) == 1;
}

/*
 * The kernel's answer for the source itself: statfs() follows the path
 * as the runtime does. A source that cannot be looked at (not on this
 * host: explain with a copied bundle) falls back to where the hook's
 * cgroup2 mount is.
 */
static bool source_is_cgroup2(const char *joined, const char *real,
			      const char *cg2)
{
	struct statfs fs;

	if (!statfs(joined, &fs))
		return fs.f_type == CGROUP2_SUPER_MAGIC;
	return path_within(real, cg2);
}

static bool bind_reaches(const struct oci_state *st, struct json_object *mnt,
			 const struct mount_opts *o, const char *cg2,
			 struct mountinfo *mi, char *why, size_t len)
{
	const char *dest = get_string(mnt, "destination");
	char joined[PATH_MAX], real[PATH_MAX];
	struct below b;
	bool sure;
	int r;

	bind_joined(st, get_string(mnt, "source"), joined, sizeof(joined));
	sure = bind_real(joined, real, sizeof(real));
	if (!o->ro && !o->rro && source_is_cgroup2(joined, real, cg2)) {
		snprintf(why, len,
			 "a bind of %s (cgroup2) at %s without \"ro\"", real,
			 dest);
		return true;
	}
	/* "ro" on a recursive bind leaves the mounts below it writable. */
	if (!o->rbind || o->rro)
		return false;
	if (!sure) {
		snprintf(
			why, len,
			"a recursive bind of %s at %s without \"rro\", whose mounts the hook cannot list (it leads into another mount namespace)",
			joined, dest);
		return true;
	}
	r = find_cgroup2_below(mi, real, &b);
	if (r < 0) {
		snprintf(
			why, len,
			"a recursive bind of %s at %s without \"rro\", whose mounts the hook cannot list (/proc/self/mountinfo: %s)",
			real, dest, strerror(-r));
		return true;
	}
	if (r) {
		snprintf(
			why, len,
			"a recursive bind of %s (with the cgroup2 mount %s in it) at %s without \"rro\"",
			real, b.found, dest);
		return true;
	}
	return false;
}

static void mount_reach(const struct oci_state *st, struct json_object *mnt,
			size_t i, const char *cg2, struct mountinfo *mi,
			struct bundle_cg_reach *r)
{
	const char *type = get_string(mnt, "type");
	char one[SH_BUNDLE_WHY_MAX];
	struct mount_opts o;
	bool *flag = NULL;

	read_opts(mnt, &o);
	if (!strcmp(type, "cgroup") || !strcmp(type, "cgroup2")) {
		if (o.ro || o.rro)
			return;
		snprintf(one, sizeof(one), "a %s mount at %s without \"ro\"",
			 type, get_string(mnt, "destination"));
		flag = &r->fresh;
	} else if ((o.bind || o.rbind || !strcmp(type, "bind")) &&
		   bind_reaches(st, mnt, &o, cg2, mi, one, sizeof(one))) {
		flag = &r->bound;
	}
	if (!flag)
		return;
	/* The first bind names the refusal: it is the one that matters most. */
	if (!r->why[0] || (flag == &r->bound && !r->bound))
		snprintf(r->why, sizeof(r->why), "mounts[%zu], %s", i, one);
	*flag = true;
}

void bundle_cgroup_reach(const struct oci_state *st, const char *cg2_mount,
			 struct mountinfo *mi, struct bundle_cg_reach *r)
{
	struct json_object *mounts;

	memset(r, 0, sizeof(*r));
	if (!st->config_root ||
	    !json_object_object_get_ex(st->config_root, "mounts", &mounts) ||
	    !json_object_is_type(mounts, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(mounts); i++) {
		struct json_object *mnt = json_object_array_get_idx(mounts, i);

		if (json_object_is_type(mnt, json_type_object))
			mount_reach(st, mnt, i, cg2_mount, mi, r);
	}
}

/* A namespace joined by path has a root we do not know: not our own. */
bool bundle_own_cgroupns(const struct oci_state *st)
{
	struct json_object *linux_obj, *nss;

	if (!st->config_root ||
	    !json_object_object_get_ex(st->config_root, "linux", &linux_obj) ||
	    !json_object_object_get_ex(linux_obj, "namespaces", &nss) ||
	    !json_object_is_type(nss, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(nss); i++) {
		struct json_object *ns = json_object_array_get_idx(nss, i);

		if (json_object_is_type(ns, json_type_object) &&
		    !strcmp(get_string(ns, "type"), "cgroup"))
			return !*get_string(ns, "path");
	}
	return false;
}

/* The pid in "/proc/<pid>/ns/<anything>", or 0. */
static pid_t proc_ns_pid(const char *path)
{
	const char *p = path + strlen("/proc/");
	char digits[16];
	size_t n;
	long long v;

	if (strncmp(path, "/proc/", strlen("/proc/")))
		return 0;
	n = strspn(p, "0123456789");
	if (!n || n >= sizeof(digits) || strncmp(p + n, "/ns/", 4) ||
	    !p[n + 4] || strchr(p + n + 4, '/'))
		return 0;
	snprintf(digits, sizeof(digits), "%.*s", (int)n, p);
	return number_parse(digits, 1, INT_MAX, &v) ? 0 : (pid_t)v;
}

static pid_t joined_pid_of(struct json_object *nss, const char *type)
{
	for (size_t i = 0; i < json_object_array_length(nss); i++) {
		struct json_object *ns = json_object_array_get_idx(nss, i);

		if (json_object_is_type(ns, json_type_object) &&
		    !strcmp(get_string(ns, "type"), type))
			return proc_ns_pid(get_string(ns, "path"));
	}
	return 0;
}

pid_t bundle_joined_pid(const struct oci_state *st)
{
	/* containerd joins every container to the sandbox's IPC, UTS and
	 * network namespaces, and its pid namespace to the sandbox's under
	 * shareProcessNamespace, or to the target's: an ephemeral container
	 * with a target (kubectl debug --target) names the target container's
	 * pid there (WithPodNamespaces, targetPid), not the sandbox's. */
	static const char *const types[] = { "ipc", "uts", "network", "pid" };
	struct json_object *linux_obj, *nss;
	pid_t pid = 0;

	if (!st->config_root ||
	    !json_object_object_get_ex(st->config_root, "linux", &linux_obj) ||
	    !json_object_object_get_ex(linux_obj, "namespaces", &nss) ||
	    !json_object_is_type(nss, json_type_array))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(types) && !pid; i++)
		pid = joined_pid_of(nss, types[i]);
	return pid;
}
