// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where a shared program copy is found: a pin that `preload` made (pin.c),
 * else the index of copies that containers use: one small file per
 * (attach type, policy hash) in the state directory, holding a program
 * id, read and written through state.c like the attachments.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "lib/cleanup.h"
#include "lib/log.h"
#include "lib/number.h"
#include "prog/pin.h"
#include "prog/share.h"
#include "state/state.h"

#define SHARE_PREFIX "shared-"
#define SHARE_SUFFIX ".id"
#define SHARE_TYPE_MAX 32 /* an attach kind's name */
#define SHARE_NAME_MAX \
	(sizeof(SHARE_PREFIX) + SHARE_TYPE_MAX + 17 + sizeof(SHARE_SUFFIX))
#define SHARE_INDEX_MAX 32 /* a program id and a newline */

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
	_cleanup_free_ char *text = NULL;
	struct sh_error err = { 0 };
	char name[SHARE_NAME_MAX];
	long long v;
	size_t len;
	int r;

	index_name(name, sizeof(name), type, hash);
	r = state_file_read(name, SHARE_INDEX_MAX, &text, &len, &err);
	if (r)
		return r;
	text[strcspn(text, "\n")] = '\0';
	r = number_parse(text, 1, UINT32_MAX, &v);
	if (r)
		return r;
	*id = (uint32_t)v;
	return 0;
}

/* A pin is trusted by where it is (a directory only root writes), and
 * found by name: whatever is there under that name is verified. */
static int find_pinned(int pins, const char *type, uint64_t hash,
		       const struct progcheck_want *want)
{
	_cleanup_close_ int fd = pin_get(pins, type, hash);
	struct sh_error err = { 0 };
	char name[SH_PIN_NAME_MAX];

	if (fd < 0)
		return -ENOENT;
	if (progcheck_prog(fd, want, &err) == 0)
		return take_fd(&fd);
	pin_name(name, sizeof(name), type, hash);
	log_warn(
		"pinned program %s in %s is not the one this policy needs: %s; loading a copy instead",
		name, pin_dir(), err.msg);
	return -ESTALE;
}

int share_find(int pins, const char *type, uint64_t hash,
	       const struct progcheck_want *want, bool *pinned)
{
	_cleanup_close_ int fd =
		pins >= 0 ? find_pinned(pins, type, hash, want) : -ENOENT;
	/* What to say when no shared copy is found either. */
	int none = fd == -ESTALE ? -ESTALE : -ENOENT;
	struct sh_error err = { 0 };
	uint32_t id;
	int r;

	*pinned = fd >= 0;
	if (fd >= 0)
		return take_fd(&fd);
	r = read_index(type, hash, &id);
	if (r)
		return none;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return none;
	/* Ids are reused: another program under this id is no error. */
	if (progcheck_prog(fd, want, &err)) {
		log_debug("shared copy %u of %s is not this policy's: %s", id,
			  type, err.msg);
		return none;
	}
	return take_fd(&fd);
}

int share_publish(const char *type, uint64_t hash, uint32_t prog_id)
{
	struct sh_error err = { 0 };
	char name[SHARE_NAME_MAX], text[SHARE_INDEX_MAX];
	int len = snprintf(text, sizeof(text), "%u\n", prog_id);

	index_name(name, sizeof(name), type, hash);
	return state_file_replace(name, text, len, &err);
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

struct sweep {
	share_in_use_fn in_use;
	void *data;
};

static int sweep_file(int dir, const char *name, void *data)
{
	struct sweep *sw = data;
	char type[SHARE_TYPE_MAX];
	uint64_t hash;

	if (!parse_index_name(name, type, sizeof(type), &hash) &&
	    !sw->in_use(type, hash, sw->data))
		state_file_unlink_at(dir, name);
	return 0;
}

void share_sweep(share_in_use_fn in_use, void *data)
{
	struct sweep sw = { in_use, data };

	state_file_foreach(sweep_file, &sw);
}
