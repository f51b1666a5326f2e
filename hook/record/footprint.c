// SPDX-License-Identifier: GPL-2.0-only
/*
 * Record mode, the tables' side: a recording container's programs are its
 * own copies (load.c), and their footprint tables are pinned on the BPF
 * filesystem at prestart, named by the container's id and init start
 * time. The runtime may remove the cgroup (and with it the programs)
 * before poststop runs, or never run poststop: the pins keep the tables
 * until poststop, gc or the reaper writes the proposed policy and
 * removes them (teardown.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/cleanup.h"
#include "prog/bpffs.h"
#include "record/footprint.h"
#include "getsockopt.skel.h"
#include "lib/log.h"
#include "prog/pin.h"
#include "prog/progcheck.h"
#include "setsockopt.skel.h"
#include "prog/share.h"
#include "sock_create.skel.h"

#define FP_PIN_PATH_MAX PATH_MAX

void footprint_fill(struct sh_record *rec, const struct sh_effective *eff,
		    const struct sh_config *cfg)
{
	if (!eff->record[0])
		return;
	snprintf(rec->footprint, sizeof(rec->footprint), "%s", eff->record);
	snprintf(rec->footprint_dir, sizeof(rec->footprint_dir), "%s",
		 cfg->record_dir);
}

void footprint_recording_id(const struct sh_record *rec, char buf[17])
{
	uint64_t h = share_hash(0, rec->id, strlen(rec->id));

	h = share_hash(h, &rec->pid_start, sizeof(rec->pid_start));
	snprintf(buf, 17, "%016" PRIx64, h);
}

/* "<recording id>-<kind>[-over]" */
static void pin_path(const struct sh_record *rec, int kind, bool over,
		     char *buf, size_t len)
{
	char id[17];

	footprint_recording_id(rec, id);
	snprintf(buf, len, "%s%s/%s-%s%s", pin_dir(), SH_FOOTPRINT_PIN_SUFFIX,
		 id, kind_get(kind)->name, over ? "-over" : "");
}

/* Ours alone, on a BPF filesystem: whatever is read there becomes a
 * policy. */
static int pin_dir_ready(struct sh_error *err)
{
	_cleanup_close_ int fd = -1;
	char dir[FP_PIN_PATH_MAX];
	struct statfs fs;
	struct stat st;
	int r;

	snprintf(dir, sizeof(dir), "%s%s", pin_dir(), SH_FOOTPRINT_PIN_SUFFIX);
	r = bpffs_ensure("footprint pin directory", dir, err);
	if (r)
		return r;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return error_errno(err, -errno, "cannot create %s", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_errno(err, -errno, "cannot open %s", dir);
	if (fstatfs(fd, &fs) || fstat(fd, &st))
		return error_errno(err, -errno, "cannot stat %s", dir);
	if (fs.f_type != BPF_FS_MAGIC || st.st_uid != 0 || (st.st_mode & 0022))
		return error_set(
			err, -EPERM,
			"%s is not a root-only directory on a BPF filesystem",
			dir);
	return 0;
}

static int pin_one(int map_fd, const char *path, struct sh_error *err)
{
	unlink(path); /* a stale pin of the same name: replaced */
	if (bpf_obj_pin(map_fd, path))
		return error_errno(err, -errno, "cannot pin %s", path);
	return 0;
}

void footprint_unpin(const struct sh_record *rec)
{
	char path[FP_PIN_PATH_MAX];

	if (!rec->footprint[0])
		return;
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		pin_path(rec, k, false, path, sizeof(path));
		unlink(path);
		pin_path(rec, k, true, path, sizeof(path));
		unlink(path);
	}
}

static void kind_maps(const struct sh_loaded *l, int k, struct bpf_map **map,
		      struct bpf_map **over)
{
	*map = *over = NULL;
	if (k == SH_PROG_SOCK && l->sock) {
		*map = l->sock->maps.footprint;
		*over = l->sock->maps.fp_overflow;
	} else if (k == SH_PROG_SET && l->set) {
		*map = l->set->maps.footprint;
		*over = l->set->maps.fp_overflow;
	} else if (k == SH_PROG_GET && l->get) {
		*map = l->get->maps.footprint;
		*over = l->get->maps.fp_overflow;
	}
}

int footprint_pin(const struct sh_loaded *l, const struct sh_record *rec,
		  struct sh_error *err)
{
	char path[FP_PIN_PATH_MAX];
	struct bpf_map *map, *over;
	int r;

	if (!rec->footprint[0])
		return 0;
	r = pin_dir_ready(err);
	if (r)
		goto unpin;
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		kind_maps(l, k, &map, &over);
		if (!map)
			continue;
		pin_path(rec, k, false, path, sizeof(path));
		r = pin_one(bpf_map__fd(map), path, err);
		if (r)
			goto unpin;
		pin_path(rec, k, true, path, sizeof(path));
		r = pin_one(bpf_map__fd(over), path, err);
		if (r)
			goto unpin;
	}
	return 0;
unpin:
	footprint_unpin(rec);
	return r;
}

/* The table's 8-byte key as an entry's key: the kind is the table's. */
static struct sh_fp_key entry_key(int k, const struct sh_fp_map_key *mk)
{
	if (k == SH_PROG_SOCK)
		return (struct sh_fp_key){ SH_FP_SOCK, mk->a,
					   (__s32)((__u32)mk->b >> 16),
					   (__s32)((__u32)mk->b & 0xffff) };
	return (struct sh_fp_key){ k == SH_PROG_SET ? SH_FP_SET : SH_FP_GET,
				   mk->a, mk->b, 0 };
}

static int read_table(int fd, int k, struct footprint *fp)
{
	struct sh_fp_map_key key, next;
	struct footprint_entry e;
	void *prev = NULL;
	int r;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &e.v))
			continue; /* removed meanwhile: nothing removes them */
		e.key = entry_key(k, &key);
		r = footprint_policy_add(fp, &e);
		if (r)
			return r;
	}
	return errno == ENOENT ? 0 : -errno;
}

/* A pinned table is read only once it has the shape of ours: a map of
 * another shape under the name would be read past our buffers. */
static int check_pinned(int fd, const struct progcheck_map *shape,
			const char *path)
{
	struct sh_error err = { 0 };

	if (!progcheck_map(fd, shape, &err))
		return 0;
	log_warn("pinned footprint table %s is not one of ours (%s): not read",
		 path, err.msg);
	return -ESTALE;
}

static int read_kind(const struct sh_record *rec, int k, struct footprint *fp)
{
	static const struct progcheck_map table = {
		BPF_MAP_TYPE_HASH, sizeof(struct sh_fp_map_key),
		sizeof(struct sh_fp_value), SH_FP_MAX, false
	};
	static const struct progcheck_map overflow = {
		BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(__u64), 1, false
	};
	char path[FP_PIN_PATH_MAX];
	_cleanup_close_ int fd = -1, over = -1;
	__u32 zero = 0;
	int r;

	pin_path(rec, k, false, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = check_pinned(fd, &table, path);
	if (r)
		return r;
	pin_path(rec, k, true, path, sizeof(path));
	over = bpf_obj_get(path);
	if (over < 0)
		return -errno;
	r = check_pinned(over, &overflow, path);
	if (r)
		return r;
	if (bpf_map_lookup_elem(over, &zero, &fp->overflow[k]))
		return -errno;
	r = read_table(fd, k, fp);
	fp->kind_read[k] = !r;
	return r;
}

int footprint_read(const struct sh_record *rec, struct footprint *fp,
		   struct sh_error *err)
{
	bool any = false;
	int r;

	memset(fp, 0, sizeof(*fp));
	if (!rec->footprint[0])
		return error_set(err, -ENOENT,
				 "container %s is not being recorded", rec->id);
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		r = read_kind(rec, k, fp);
		if (r)
			return error_errno(err, r,
					   "cannot read the %s footprint of %s",
					   kind_get(k)->name, rec->id);
		any |= fp->kind_read[k];
	}
	if (!any)
		return error_set(err, -ENOENT,
				 "no footprint tables of %s under %s%s",
				 rec->id, pin_dir(), SH_FOOTPRINT_PIN_SUFFIX);
	footprint_policy_sort(fp);
	return 0;
}
