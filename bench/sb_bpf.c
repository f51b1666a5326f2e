// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF side of sockbench: attaching and detaching the empty programs
 * (bench/empty.bpf.c) with BPF_PROG_ATTACH + BPF_F_ALLOW_MULTI, so that
 * the attachment outlives sockbench and lives as long as the cgroup, as
 * the hook's does; and telling whether the cgroup BPF static keys are on,
 * from the kernel's text read through bench/keys.bpf.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "empty.skel.h"
#include "keys.skel.h"
#include "sockbench.h"

#define SB_EMPTY_PREFIX "sb_empty_"
#define SB_MAX_QUERY 64

static const enum bpf_attach_type empty_types[] = {
	BPF_CGROUP_INET_SOCK_CREATE,
	BPF_CGROUP_SETSOCKOPT,
	BPF_CGROUP_GETSOCKOPT,
};

static int open_cgroup(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		sb_err("cannot open cgroup %s: %s", dir, strerror(errno));
	return fd < 0 ? -errno : fd;
}

static void empty_destroy(struct empty_bpf **skel)
{
	empty_bpf__destroy(*skel);
}

static int empty_fd(struct empty_bpf *skel, enum bpf_attach_type type)
{
	switch (type) {
	case BPF_CGROUP_INET_SOCK_CREATE:
		return bpf_program__fd(skel->progs.sb_empty_sock);
	case BPF_CGROUP_SETSOCKOPT:
		return bpf_program__fd(skel->progs.sb_empty_set);
	default:
		return bpf_program__fd(skel->progs.sb_empty_get);
	}
}

int sb_attach_empty(const char *cgroup)
{
	_cleanup_(empty_destroy) struct empty_bpf *skel = empty_bpf__open();
	_cleanup_close_ int cg = open_cgroup(cgroup);
	size_t i;

	if (cg < 0)
		return cg;
	if (!skel || empty_bpf__load(skel)) {
		sb_err("cannot load the empty programs: %s", strerror(errno));
		return -EIO;
	}
	for (i = 0; i < sizeof(empty_types) / sizeof(empty_types[0]); i++) {
		if (bpf_prog_attach(empty_fd(skel, empty_types[i]), cg,
				    empty_types[i], BPF_F_ALLOW_MULTI)) {
			sb_err("cannot attach an empty program to %s: %s",
			       cgroup, strerror(errno));
			sb_detach_empty(cgroup);
			return -EIO;
		}
	}
	return 0;
}

/* Detaches every program of TYPE on CG whose name starts with PREFIX. */
static int detach_named(int cg, enum bpf_attach_type type, const char *prefix)
{
	__u32 ids[SB_MAX_QUERY], cnt = SB_MAX_QUERY, flags = 0;
	int r = 0;

	if (bpf_prog_query(cg, type, 0, &flags, ids, &cnt))
		return -errno;
	for (__u32 i = 0; i < cnt; i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		_cleanup_close_ int fd = bpf_prog_get_fd_by_id(ids[i]);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		if (strncmp(info.name, prefix, strlen(prefix)))
			continue;
		if (bpf_prog_detach2(fd, cg, type))
			r = -errno;
	}
	return r;
}

int sb_detach_empty(const char *cgroup)
{
	_cleanup_close_ int cg = open_cgroup(cgroup);
	int r = 0;

	if (cg < 0)
		return cg;
	for (size_t i = 0; i < sizeof(empty_types) / sizeof(empty_types[0]);
	     i++)
		r = detach_named(cg, empty_types[i], SB_EMPTY_PREFIX) ?: r;
	if (r)
		sb_err("cannot detach the empty programs from %s: %s", cgroup,
		       strerror(-r));
	return r;
}

/* Where each key's branch is: a kernel function that tests it. */
struct sb_site {
	const char *key;
	const char *func;
	uint64_t addr;
	uint64_t next; /* the next symbol's address: the function's end */
};

#define SB_TEXT_MAX sizeof(((struct keys_bpf *)0)->bss->text)

static int find_functions(struct sb_site *s, int n)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], name[256], type;
	unsigned long long a;
	int r = 0;

	if (!f)
		return -errno;
	for (int pass = 0; pass < 2; pass++, rewind(f)) {
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
				continue;
			for (int i = 0; i < n; i++) {
				if (!pass && !strcmp(name, s[i].func))
					s[i].addr = a;
				else if (pass && a > s[i].addr &&
					 (!s[i].next || a < s[i].next))
					s[i].next = a;
			}
		}
	}
	fclose(f);
	for (int i = 0; i < n; i++) {
		if (!s[i].addr || !s[i].next) {
			sb_err("/proc/kallsyms lacks %s (need root)",
			       s[i].func);
			r = -ENOENT;
		}
	}
	return r;
}

static int read_text(struct keys_bpf *keys, const struct sb_site *s,
		     uint8_t *out, size_t *len)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);

	*len = s->next - s->addr;
	if (*len > SB_TEXT_MAX)
		*len = SB_TEXT_MAX;
	keys->bss->addr = s->addr;
	keys->bss->len = *len;
	if (bpf_prog_test_run_opts(bpf_program__fd(keys->progs.sb_read_text),
				   &run) ||
	    keys->bss->err) {
		sb_err("cannot read the text of %s: %s", s->func,
		       strerror(keys->bss->err ? -keys->bss->err : errno));
		return -EIO;
	}
	memcpy(out, keys->bss->text, *len);
	return 0;
}

static int snapshot(struct keys_bpf *keys, const struct sb_site *s, int n,
		    uint8_t (*text)[SB_TEXT_MAX], size_t *len)
{
	for (int i = 0; i < n; i++)
		if (read_text(keys, &s[i], text[i], &len[i]))
			return -EIO;
	return 0;
}

static size_t differ(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t d = 0;

	for (size_t i = 0; i < len; i++)
		d += a[i] != b[i];
	return d;
}

static void keys_destroy(struct keys_bpf **skel)
{
	keys_bpf__destroy(*skel);
}

/* The three keys and a function that tests each. */
static void sb_sites(struct sb_site s[3])
{
	static const struct sb_site sites[3] = {
		{ .key = "sock_create", .func = "inet_create" },
		{ .key = "setsockopt", .func = "do_sock_setsockopt" },
		{ .key = "getsockopt", .func = "do_sock_getsockopt" },
	};

	memcpy(s, sites, sizeof(sites));
}

/*
 * Prints "sock_create=on|off setsockopt=... getsockopt=...". A key is off
 * when its function's text now differs from its text while an empty
 * program of that type is attached to SCRATCH (a cgroup with no process):
 * the branch is still a NOP. It is on when the two are the same.
 */
int sb_read_keys(const char *scratch)
{
	_cleanup_(keys_destroy) struct keys_bpf *keys = keys_bpf__open();
	struct sb_site s[3];
	static uint8_t now[3][SB_TEXT_MAX], on[3][SB_TEXT_MAX],
		after[3][SB_TEXT_MAX];
	size_t len[3];
	int r;

	sb_sites(s);
	r = find_functions(s, 3);
	if (r)
		return r;
	if (!keys || keys_bpf__load(keys)) {
		sb_err("cannot load the text reader: %s", strerror(errno));
		return -EIO;
	}
	r = snapshot(keys, s, 3, now, len);
	if (!r)
		r = sb_attach_empty(scratch);
	if (!r) {
		r = snapshot(keys, s, 3, on, len);
		r = sb_detach_empty(scratch) ?: r;
	}
	if (!r)
		r = snapshot(keys, s, 3, after, len);
	for (int i = 0; !r && i < 3; i++) {
		if (differ(now[i], after[i], len[i])) {
			sb_err("the text of %s changed while it was read: retry",
			       s[i].func);
			return -EAGAIN;
		}
	}
	for (int i = 0; !r && i < 3; i++)
		printf("%s%s=%s", i ? " " : "", s[i].key,
		       differ(now[i], on[i], len[i]) ? "off" : "on");
	if (!r)
		putchar('\n');
	return r;
}

/* The text reader, loaded, and where the three functions are. */
static int keys_reader(struct keys_bpf **keys, struct sb_site s[3])
{
	int r;

	sb_sites(s);
	r = find_functions(s, 3);

	if (r)
		return r;
	*keys = keys_bpf__open();
	if (!*keys || keys_bpf__load(*keys)) {
		sb_err("cannot load the text reader: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}

/*
 * Saves the three functions' text to FILE, to be taken while every key is
 * off (sockbench keys said so): what keys-wait-off waits for.
 */
int sb_keys_save(const char *file)
{
	_cleanup_(keys_destroy) struct keys_bpf *keys = NULL;
	struct sb_site s[3];
	static uint8_t text[3][SB_TEXT_MAX];
	size_t len[3];
	FILE *f;
	int r = keys_reader(&keys, s);

	if (!r)
		r = snapshot(keys, s, 3, text, len);
	if (r)
		return r;
	f = fopen(file, "we");
	if (!f)
		return sb_err("%s: %s", file, strerror(errno)), -errno;
	for (int i = 0; i < 3; i++)
		if (fwrite(&len[i], sizeof(len[i]), 1, f) != 1 ||
		    fwrite(text[i], 1, len[i], f) != len[i])
			r = -EIO;
	if (fclose(f) || r)
		return sb_err("cannot write %s", file), -EIO;
	return 0;
}

/*
 * Waits until the three functions' text is what keys-save saved, every
 * key off: the last release of an attach type turns its key off only
 * when the kernel frees the cgroup, in a worker, some 50 ms after a
 * runtime's rmdir. Fails after 5 s.
 */
int sb_keys_wait_off(const char *file)
{
	_cleanup_(keys_destroy) struct keys_bpf *keys = NULL;
	struct sb_site s[3];
	static uint8_t off[3][SB_TEXT_MAX], now[3][SB_TEXT_MAX];
	size_t len[3], saved[3];
	FILE *f = fopen(file, "re");
	int r = f ? 0 : -errno;

	for (int i = 0; !r && i < 3; i++)
		if (fread(&saved[i], sizeof(saved[i]), 1, f) != 1 ||
		    saved[i] > SB_TEXT_MAX ||
		    fread(off[i], 1, saved[i], f) != saved[i])
			r = -EINVAL;
	if (f)
		fclose(f);
	if (r)
		return sb_err("cannot read %s", file), r;
	r = keys_reader(&keys, s);
	for (int tries = 0; !r && tries < 5000; tries++) {
		bool same = true;

		r = snapshot(keys, s, 3, now, len);
		for (int i = 0; !r && i < 3; i++)
			same &= len[i] == saved[i] &&
				!differ(now[i], off[i], len[i]);
		if (!r && same)
			return 0;
		usleep(1000);
	}
	return r ? r : (sb_err("the static keys stayed on for 5 s"), -ETIME);
}
