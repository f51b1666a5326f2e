// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a bundle's config.json lets the container do to its own cgroup
 * membership. A process may move itself into any cgroup it can see through
 * a writable cgroup mount. With a cgroup namespace of its own it sees only
 * the subtree of the cgroup it was in when the namespace was made, which
 * the policy covers when that cgroup is the one we attach to. Without one,
 * or when the hook made the cgroup after the runtime made the namespace
 * (so the namespace's root is the parent), it can move itself out of the
 * policed cgroup.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/bundle.h"
#include "lib/cleanup.h"
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

/*
 * The runtime follows symlinks in a bind's source, and resolves a
 * relative one against the bundle.
 */
static void bind_source(const struct oci_state *st, const char *src, char *out,
			size_t len)
{
	char joined[SH_BUNDLE_WHY_MAX];
	_cleanup_free_ char *real = NULL;

	if (src[0] != '/' && st->bundle)
		snprintf(joined, sizeof(joined), "%s/%s", st->bundle, src);
	else
		snprintf(joined, sizeof(joined), "%s", src);
	real = realpath(joined, NULL);
	snprintf(out, len, "%s", real ? real : joined);
}

static bool bind_writable(const struct oci_state *st, struct json_object *mnt,
			  const struct mount_opts *o, const char *cg2,
			  char *why, size_t len)
{
	char src[PATH_MAX];

	bind_source(st, get_string(mnt, "source"), src, sizeof(src));
	if (path_within(src, cg2) && !o->ro && !o->rro) {
		snprintf(why, len, "a bind of %s at %s without \"ro\"", src,
			 get_string(mnt, "destination"));
		return true;
	}
	/* "ro" on a recursive bind leaves the mounts below it writable. */
	if (path_within(cg2, src) && o->rbind && !o->rro) {
		snprintf(
			why, len,
			"a recursive bind of %s (with the cgroup2 mount %s in it) at %s without \"rro\"",
			src, cg2, get_string(mnt, "destination"));
		return true;
	}
	return false;
}

static bool mount_writable(const struct oci_state *st, struct json_object *mnt,
			   const char *cg2, char *why, size_t len)
{
	const char *type = get_string(mnt, "type");
	struct mount_opts o;

	read_opts(mnt, &o);
	if (!strcmp(type, "cgroup") || !strcmp(type, "cgroup2")) {
		if (o.ro || o.rro)
			return false;
		snprintf(why, len, "a %s mount at %s without \"ro\"", type,
			 get_string(mnt, "destination"));
		return true;
	}
	if (o.bind || o.rbind || !strcmp(type, "bind"))
		return bind_writable(st, mnt, &o, cg2, why, len);
	return false;
}

bool bundle_writable_cgroup_mount(const struct oci_state *st,
				  const char *cg2_mount, char *why, size_t len)
{
	struct json_object *mounts;
	char one[SH_BUNDLE_WHY_MAX];

	if (!st->config_root ||
	    !json_object_object_get_ex(st->config_root, "mounts", &mounts) ||
	    !json_object_is_type(mounts, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(mounts); i++) {
		struct json_object *mnt = json_object_array_get_idx(mounts, i);

		if (!json_object_is_type(mnt, json_type_object) ||
		    !mount_writable(st, mnt, cg2_mount, one, sizeof(one)))
			continue;
		snprintf(why, len, "mounts[%zu], %s", i, one);
		return true;
	}
	return false;
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
	static const char *const types[] = { "pid", "ipc", "uts", "network" };
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
