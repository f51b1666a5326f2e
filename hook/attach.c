// SPDX-License-Identifier: GPL-2.0-only
/*
 * Attaching with the legacy BPF_PROG_ATTACH and BPF_F_ALLOW_MULTI: the
 * attachment lives exactly as long as the cgroup, so when the runtime
 * removes the cgroup the programs and maps go with it, even if our
 * poststop never runs. ALLOW_MULTI lets other tools' programs and programs
 * in nested cgroups coexist, and keeps nested cgroups covered.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attach.h"
#include "cleanup.h"
#include "load.h"
#include "log.h"
#include "share.h"

static const enum bpf_attach_type our_types[] = {
	BPF_CGROUP_INET_SOCK_CREATE,
	BPF_CGROUP_SETSOCKOPT,
	BPF_CGROUP_GETSOCKOPT,
};

const char *attach_type_name(enum bpf_attach_type type)
{
	switch (type) {
	case BPF_CGROUP_INET_SOCK_CREATE:
		return "sock_create";
	case BPF_CGROUP_SETSOCKOPT:
		return "setsockopt";
	case BPF_CGROUP_GETSOCKOPT:
		return "getsockopt";
	default:
		return "unknown";
	}
}

static int libbpf_to_log(enum libbpf_print_level level, const char *fmt,
			 va_list ap)
{
	char buf[4096], *line, *save = NULL;

	/* libbpf's debug level is ~130 lines per load: keep its warnings
	 * (verifier logs among them) and information only. */
	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		log_debug("%s", line);
	return 0;
}

void attach_quiet_libbpf(void)
{
	libbpf_set_print(libbpf_to_log);
}

static bool unsupported(int err)
{
	/* Verifier refusals; 524 is the kernel's ENOTSUPP. */
	return err == -EINVAL || err == -EACCES || err == -EOPNOTSUPP ||
	       err == -524;
}

int probe_bypass_support(void)
{
	struct sh_effective none = { 0 };
	struct sh_loaded l;
	int r;

	loaded_init(&l);
	r = obtain_sock_create(&none, true, &l);
	loaded_free(&l);
	if (!r)
		return 1;
	return unsupported(r) ? 0 : r;
}

static int refuse_bypass(const struct sh_effective *eff)
{
	char src[400];

	policy_source_text(eff, true, src, sizeof(src));
	log_error(
		"bypass-prot-mem is requested (by %s) but this kernel lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19); refusing because on_unsupported is 'fail'",
		src);
	return -EOPNOTSUPP;
}

static int obtain_sock(const struct sh_effective *eff, enum on_unsupported on,
		       struct sh_loaded *l)
{
	struct sh_effective rest = *eff;
	int r;

	if (!eff->bypass)
		return obtain_sock_create(eff, false, l);
	r = obtain_sock_create(eff, true, l);
	if (!r || !unsupported(r))
		return r;
	if (on == ON_UNSUPPORTED_FAIL)
		return refuse_bypass(eff);
	log_warn(
		"bypass-prot-mem is requested but this kernel lacks SK_BPF_BYPASS_PROT_MEM (Linux >= 6.19); starting without it (on_unsupported is 'warn')");
	rest.bypass = false;
	if (!policy_needs_sock_create(&rest))
		return 0;
	return obtain_sock_create(&rest, false, l);
}

static int obtain_all(const struct sh_effective *eff, enum on_unsupported on,
		      struct sh_loaded *l)
{
	int r = 0;

	if (policy_needs_sock_create(eff)) {
		r = obtain_sock(eff, on, l);
		if (r == -EOPNOTSUPP)
			return r;
		if (r)
			log_error("cannot load the sock_create program: %s",
				  strerror(-r));
	}
	if (!r && policy_needs_setsockopt(eff)) {
		r = obtain_setsockopt(eff, l);
		if (r)
			log_error("cannot load the setsockopt program: %s",
				  strerror(-r));
	}
	if (!r && policy_needs_getsockopt(eff)) {
		r = obtain_getsockopt(eff, l);
		if (r)
			log_error("cannot load the getsockopt program: %s",
				  strerror(-r));
	}
	return r;
}

static int prog_info(int fd, struct sh_prog *prog)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int r = bpf_obj_get_info_by_fd(fd, &info, &len);

	if (r)
		return -errno;
	prog->id = info.id;
	snprintf(prog->name, sizeof(prog->name), "%s", info.name);
	return 0;
}

static int attach_one(int cg_fd, const struct sh_loaded *l,
		      enum sh_prog_kind kind, struct sh_progs *out)
{
	struct sh_prog *p = &out->prog[out->nr];
	int r = prog_info(l->fd[kind], p);

	if (r)
		return r;
	if (bpf_prog_attach(l->fd[kind], cg_fd, our_types[kind],
			    BPF_F_ALLOW_MULTI)) {
		r = -errno;
		log_error("cannot attach the %s program: %s",
			  attach_type_name(our_types[kind]), strerror(errno));
		return r;
	}
	p->type = our_types[kind];
	p->hash = l->hash[kind];
	out->nr++;
	return 0;
}

int attach_prepare(const struct sh_effective *eff,
		   enum on_unsupported on_unsupported, struct sh_loaded *l)
{
	int r;

	loaded_init(l);
	r = obtain_all(eff, on_unsupported, l);
	if (r)
		loaded_free(l);
	return r;
}

int attach_types(const struct sh_loaded *l,
		 enum bpf_attach_type types[SH_MAX_PROGS])
{
	int nr = 0;

	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (l->fd[k] >= 0)
			types[nr++] = our_types[k];
	return nr;
}

/* Fresh copies become shareable once they are attached somewhere. */
void attach_publish(const struct sh_loaded *l, const struct sh_progs *out)
{
	for (int i = 0, k = 0; k < SH_PROG_KINDS; k++) {
		if (l->fd[k] < 0)
			continue;
		if (l->fresh[k])
			share_publish(prog_kind_type(k), l->hash[k],
				      out->prog[i].id);
		i++;
	}
}

int attach_commit(int cg_fd, const struct sh_loaded *l, struct sh_progs *out)
{
	int r = 0;

	memset(out, 0, sizeof(*out));
	for (int k = 0; k < SH_PROG_KINDS && !r; k++)
		if (l->fd[k] >= 0)
			r = attach_one(cg_fd, l, k, out);
	if (r) {
		detach_progs(cg_fd, out);
		out->nr = 0;
		return r;
	}
	out->bypass_active = l->fd[SH_PROG_SOCK] >= 0 && l->bypass;
	return 0;
}

/* Checks the id still names our program: ids are not reused soon, but
 * detaching a stranger's program would be a security bug. */
static int detach_one(int cg_fd, const struct sh_prog *p)
{
	_cleanup_close_ int fd = bpf_prog_get_fd_by_id(p->id);
	struct sh_prog now;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (prog_info(fd, &now) || strcmp(now.name, p->name))
		return 0;
	if (bpf_prog_detach2(fd, cg_fd, p->type) && errno != ENOENT) {
		log_warn("cannot detach program %u (%s): %s", p->id,
			 attach_type_name(p->type), strerror(errno));
		return -errno;
	}
	return 0;
}

int detach_progs(int cg_fd, const struct sh_progs *progs)
{
	int r = 0;

	for (int i = progs->nr - 1; i >= 0; i--) {
		int e = detach_one(cg_fd, &progs->prog[i]);

		r = r ? r : e;
	}
	return r;
}

static void collect_ours(enum bpf_attach_type type, const __u32 *ids, __u32 n,
			 struct sh_progs *found)
{
	for (__u32 i = 0; i < n && found->nr < SH_MAX_PROGS; i++) {
		_cleanup_close_ int fd = bpf_prog_get_fd_by_id(ids[i]);
		struct sh_prog p = { .type = type };

		if (fd < 0 || prog_info(fd, &p) || strncmp(p.name, "sh_", 3))
			continue;
		found->prog[found->nr++] = p;
	}
}

static bool map_matches(__u32 map_id, map_match_fn match, const void *data,
			int *fd)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	*fd = bpf_map_get_fd_by_id(map_id);
	if (*fd < 0)
		return false;
	if (bpf_obj_get_info_by_fd(*fd, &info, &len) == 0 && match(&info, data))
		return true;
	close(*fd);
	return false;
}

int prog_find_map(int prog_fd, char name[16], map_match_fn match,
		  const void *data)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), map_ids[8];
	int fd;

	info.nr_map_ids = ARRAY_SIZE(map_ids);
	info.map_ids = (__u64)(unsigned long)map_ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	if (name)
		memcpy(name, info.name, sizeof(info.name));
	for (__u32 i = 0; i < info.nr_map_ids && i < ARRAY_SIZE(map_ids); i++)
		if (map_matches(map_ids[i], match, data, &fd))
			return fd;
	return -ENOENT;
}

/* Programs of ours attached directly to this cgroup (not inherited). */
int attached_ours(int cg_fd, struct sh_progs *found)
{
	memset(found, 0, sizeof(*found));
	for (size_t t = 0; t < ARRAY_SIZE(our_types); t++) {
		__u32 ids[64], n = ARRAY_SIZE(ids), flags = 0;

		if (bpf_prog_query(cg_fd, our_types[t], 0, &flags, ids, &n))
			return -errno;
		collect_ours(our_types[t], ids, n, found);
	}
	return 0;
}
