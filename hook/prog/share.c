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
#include <fcntl.h>
#include <unistd.h>
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

/*
 * Pins already checked, kept by a long-running caller (share_keep()):
 * each with an fd that holds its program, so that while it is kept its id
 * names no other program. A pin found under the same name with the same
 * id, for the same program wanted, is that program, checked; a pin that
 * preload replaced has another id, and is checked again.
 */
#define SHARE_KEPT_MAX 32

struct kept {
	bool used;
	char type[SHARE_TYPE_MAX];
	uint64_t hash;
	uint32_t id;
	int fd;
	struct progcheck_want want; /* rodata and rules: our copies */
};

static struct {
	bool on;
	unsigned long long checks; /* progcheck_prog() runs on pins */
	unsigned int next; /* the slot to reuse when all are used */
	struct kept e[SHARE_KEPT_MAX];
} kept;

void share_keep(bool on)
{
	kept.on = on;
}

unsigned long long share_kept_checks(void)
{
	return kept.checks;
}

static bool same_want(const struct progcheck_want *a,
		      const struct progcheck_want *b)
{
	return a->kind == b->kind && !strcmp(a->prog_name, b->prog_name) &&
	       a->rodata_size == b->rodata_size &&
	       !memcmp(a->rodata, b->rodata, a->rodata_size) &&
	       a->has_rules == b->has_rules && a->nr_rules == b->nr_rules &&
	       (!a->nr_rules ||
		!memcmp(a->rules, b->rules, a->nr_rules * sizeof(*a->rules))) &&
	       a->audit == b->audit;
}

static void kept_clear(struct kept *k)
{
	if (!k->used)
		return;
	close(k->fd);
	free((void *)k->want.rodata);
	free((void *)k->want.rules);
	memset(k, 0, sizeof(*k));
}

static struct kept *kept_find(const char *type, uint64_t hash)
{
	for (int i = 0; i < SHARE_KEPT_MAX; i++)
		if (kept.e[i].used && kept.e[i].hash == hash &&
		    !strcmp(kept.e[i].type, type))
			return &kept.e[i];
	return NULL;
}

/* Keeps (type, hash) as the checked program id of fd; no error: a copy
 * that cannot be kept is only checked again next time. */
static void kept_put(const char *type, uint64_t hash,
		     const struct progcheck_want *want, uint32_t id, int fd)
{
	struct kept *k = kept_find(type, hash);
	size_t rules = want->nr_rules * sizeof(*want->rules);
	void *ro, *ru = NULL;

	if (!k) {
		for (int i = 0; i < SHARE_KEPT_MAX && !k; i++)
			if (!kept.e[i].used)
				k = &kept.e[i];
		if (!k)
			k = &kept.e[kept.next++ % SHARE_KEPT_MAX];
	}
	kept_clear(k);
	ro = malloc(want->rodata_size ? want->rodata_size : 1);
	if (rules)
		ru = malloc(rules);
	k->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (!ro || (rules && !ru) || k->fd < 0) {
		if (k->fd >= 0)
			close(k->fd);
		free(ro);
		free(ru);
		memset(k, 0, sizeof(*k));
		return;
	}
	memcpy(ro, want->rodata, want->rodata_size);
	if (rules)
		memcpy(ru, want->rules, rules);
	k->want = *want;
	k->want.rodata = ro;
	k->want.rules = ru;
	snprintf(k->type, sizeof(k->type), "%s", type);
	k->hash = hash;
	k->id = id;
	k->used = true;
}

static uint32_t prog_id(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* The pin fd is the kept, checked program of (type, hash, want). */
static bool kept_checked(int fd, const char *type, uint64_t hash,
			 const struct progcheck_want *want, uint32_t *ret_id)
{
	struct kept *k;

	*ret_id = 0;
	if (!kept.on)
		return false;
	*ret_id = prog_id(fd);
	k = kept_find(type, hash);
	return *ret_id && k && k->id == *ret_id && same_want(&k->want, want);
}

/* A pin is trusted by where it is (a directory only root writes), and
 * found by name: whatever is there under that name is verified. */
static int find_pinned(int pins, const char *type, uint64_t hash,
		       const struct progcheck_want *want)
{
	_cleanup_close_ int fd = pin_get(pins, type, hash);
	struct sh_error err = { 0 };
	char name[SH_PIN_NAME_MAX];
	uint32_t id;

	if (fd < 0)
		return -ENOENT;
	if (kept_checked(fd, type, hash, want, &id))
		return take_fd(&fd);
	kept.checks++;
	if (progcheck_prog(fd, want, &err) == 0) {
		if (kept.on && id)
			kept_put(type, hash, want, id, fd);
		return take_fd(&fd);
	}
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
