// SPDX-License-Identifier: GPL-2.0-only
/*
 * The index of shared program copies: one small file per (attach type,
 * policy hash) in the state directory, holding a program id. Every access
 * goes through the checked state directory fd (state_dir_open()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "attach.h"
#include "cleanup.h"
#include "config.h"
#include "names.h"
#include "share.h"
#include "state.h"

#define SHARE_PREFIX "shared-"
#define SHARE_SUFFIX ".id"

/* FNV-1a: tiny, and good enough to tell policies apart (the hash is
 * verified against the program, never trusted for security). */
uint64_t share_hash(uint64_t seed, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = seed ? seed : 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void index_name(char *buf, size_t len, const char *type, uint64_t hash)
{
	snprintf(buf, len, SHARE_PREFIX "%s-%016" PRIx64 SHARE_SUFFIX, type,
		 hash);
}

static int read_index(const char *type, uint64_t hash, uint32_t *id)
{
	_cleanup_close_ int dir = state_dir_open(false), fd = -1;
	_cleanup_free_ char *text = NULL;
	char name[96];
	struct stat st;
	long long v;
	size_t len;
	int r;

	if (dir < 0)
		return dir;
	index_name(name, sizeof(name), type, hash);
	fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	r = read_fd(fd, 32, &text, &len);
	if (r)
		return r;
	text[strcspn(text, "\n")] = '\0';
	r = parse_int_str(text, 1, UINT32_MAX, &v);
	if (r)
		return r;
	*id = (uint32_t)v;
	return 0;
}

static bool is_rodata(const struct bpf_map_info *info, const void *data)
{
	const struct share_check *chk = data;

	/* The section may lack the struct's tail padding. */
	return strstr(info->name, ".rodata") &&
	       info->value_size <= chk->rodata_size &&
	       info->value_size >= chk->hash_offset + sizeof(uint64_t);
}

static int rodata_hash(int prog_fd, const struct share_check *chk,
		       uint64_t *hash)
{
	_cleanup_free_ char *value = malloc(chk->rodata_size);
	_cleanup_close_ int fd = -1;
	char name[16];
	__u32 zero = 0;

	if (!value)
		return -ENOMEM;
	fd = prog_find_map(prog_fd, name, is_rodata, chk);
	if (fd < 0 || strcmp(name, chk->prog_name) ||
	    bpf_map_lookup_elem(fd, &zero, value))
		return -ESTALE;
	memcpy(hash, value + chk->hash_offset, sizeof(*hash));
	return 0;
}

int share_find(const char *type, uint64_t hash, const struct share_check *chk)
{
	_cleanup_close_ int fd = -1;
	uint64_t found = 0;
	uint32_t id;
	int r = read_index(type, hash, &id);

	if (r)
		return -ENOENT;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -ENOENT;
	r = rodata_hash(fd, chk, &found);
	if (r || found != hash)
		return -ENOENT;
	return take_fd(&fd);
}

int share_publish(const char *type, uint64_t hash, uint32_t prog_id)
{
	_cleanup_close_ int dir = state_dir_open(true), fd = -1;
	char name[96], tmp[128], text[32];
	int len = snprintf(text, sizeof(text), "%u\n", prog_id), r = 0;

	if (dir < 0)
		return dir;
	index_name(name, sizeof(name), type, hash);
	snprintf(tmp, sizeof(tmp), ".%s.%d", name, getpid());
	errno = EIO; /* what a short write reports */
	fd = openat(dir, tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0 || write(fd, text, len) != len ||
	    renameat(dir, tmp, dir, name) < 0) {
		r = -errno;
		unlinkat(dir, tmp, 0);
	}
	return r;
}

static int parse_index_name(const char *name, char *type, size_t len,
			    uint64_t *hash)
{
	const char *dash, *end = strstr(name, SHARE_SUFFIX);

	if (strncmp(name, SHARE_PREFIX, strlen(SHARE_PREFIX)) || !end ||
	    end[strlen(SHARE_SUFFIX)])
		return -EINVAL;
	name += strlen(SHARE_PREFIX);
	dash = strrchr(name, '-');
	if (!dash || (size_t)(dash - name) >= len || end - dash != 17)
		return -EINVAL;
	snprintf(type, len, "%.*s", (int)(dash - name), name);
	*hash = strtoull(dash + 1, NULL, 16);
	return 0;
}

void share_sweep(share_in_use_fn in_use, void *data)
{
	_cleanup_close_ int fd = state_dir_open(false);
	_cleanup_closedir_ DIR *dir = NULL;
	struct dirent *de;
	char type[32];
	uint64_t hash;

	if (fd < 0)
		return;
	dir = fdopendir(take_fd(&fd));
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (parse_index_name(de->d_name, type, sizeof(type), &hash) ||
		    in_use(type, hash, data))
			continue;
		unlinkat(dirfd(dir), de->d_name, 0);
	}
}
