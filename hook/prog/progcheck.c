// SPDX-License-Identifier: GPL-2.0-only
/*
 * One place that says whether a program or map found by name or id is the
 * one the hook means: progcheck.h lists what is checked and why.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/kind.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "audit_mode_map.h"
#include "prog/progcheck.h"

#define PROG_MAPS_MAX 8 /* as kind.c: rules, counters, .rodata, ... */
#define FDINFO_PATH_MAX 48
#define FDINFO_MAX 4096

struct sh_opt_rule progcheck_rule(const struct sh_rule_entry *rules, size_t i,
				  bool audit)
{
	struct sh_opt_rule rule = rules[i].rule;

	/* Audit mode: rule i counts in slot i, the rest in one. */
	if (audit)
		rule.audit_slot = i < SH_WH_RULES ? i : SH_WH_RULES;
	return rule;
}

static enum bpf_prog_type prog_type_of(enum sh_prog_kind kind)
{
	return kind == SH_PROG_SOCK ? BPF_PROG_TYPE_CGROUP_SOCK :
				      BPF_PROG_TYPE_CGROUP_SOCKOPT;
}

static const char *prog_type_name(__u32 type)
{
	const char *s = libbpf_bpf_prog_type_str(type);

	return s ? s : "unknown";
}

static const char *map_type_name(__u32 type)
{
	const char *s = libbpf_bpf_map_type_str(type);

	return s ? s : "unknown";
}

/* The kernel's "frozen:" line in the map's fdinfo (Linux >= 5.2). */
static bool map_frozen(int fd)
{
	_cleanup_free_ char *text = NULL;
	char path[FDINFO_PATH_MAX];
	const char *line;
	size_t len;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (fileio_read_at(AT_FDCWD, path, 0, FDINFO_MAX, &text, &len))
		return false;
	line = strstr(text, "\nfrozen:");
	return line && atoi(line + strlen("\nfrozen:")) == 1;
}

static int map_shape(int fd, const struct bpf_map_info *info,
		     const struct progcheck_map *want, const char *what,
		     struct sh_error *err)
{
	if (info->type != want->type)
		return error_set(err, -ESTALE, "%s is a %s map, not %s", what,
				 map_type_name(info->type),
				 map_type_name(want->type));
	if (info->key_size != want->key_size ||
	    info->value_size != want->value_size ||
	    info->max_entries != want->max_entries)
		return error_set(
			err, -ESTALE,
			"%s has key size %u, value size %u and %u entries, not %u, %u and %u",
			what, info->key_size, info->value_size,
			info->max_entries, want->key_size, want->value_size,
			want->max_entries);
	if (want->frozen &&
	    (!(info->map_flags & BPF_F_RDONLY_PROG) || !map_frozen(fd)))
		return error_set(err, -ESTALE,
				 "%s is not frozen and read-only to BPF", what);
	return 0;
}

int progcheck_map(int map_fd, const struct progcheck_map *want,
		  struct sh_error *err)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return error_set(err, -ESTALE, "it is not a BPF map");
	return map_shape(map_fd, &info, want, "it", err);
}

/* The program's map called name (".rodata" matches "<obj>.rodata"). */
static int prog_map(const __u32 *ids, __u32 nr, const char *name,
		    struct bpf_map_info *info)
{
	for (__u32 i = 0; i < nr && i < PROG_MAPS_MAX; i++) {
		_cleanup_close_ int fd = bpf_map_get_fd_by_id(ids[i]);
		__u32 len = sizeof(*info);
		const char *n = info->name;

		memset(info, 0, sizeof(*info));
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, info, &len))
			continue;
		if (name[0] == '.' ?
			    strlen(n) >= strlen(name) &&
				    !strcmp(n + strlen(n) - strlen(name),
					    name) :
			    !strcmp(n, name))
			return take_fd(&fd);
	}
	return -ENOENT;
}

static int check_rodata(const __u32 *ids, __u32 nr,
			const struct progcheck_want *want, struct sh_error *err)
{
	struct bpf_map_info info;
	_cleanup_close_ int fd = prog_map(ids, nr, ".rodata", &info);
	_cleanup_free_ char *value = NULL;
	/* The section ends at its last variable: at most 7 bytes short. */
	struct progcheck_map shape = { BPF_MAP_TYPE_ARRAY, sizeof(__u32), 0, 1,
				       true };
	__u32 zero = 0;
	int r;

	if (fd < 0)
		return error_set(err, -ESTALE, "it has no .rodata");
	if (info.value_size <= want->rodata_size &&
	    info.value_size + sizeof(__u64) > want->rodata_size)
		shape.value_size = info.value_size;
	else
		shape.value_size = want->rodata_size;
	r = map_shape(fd, &info, &shape, "its .rodata", err);
	if (r)
		return r;
	value = malloc(shape.value_size);
	if (!value)
		return error_set(err, -ENOMEM, "out of memory");
	if (bpf_map_lookup_elem(fd, &zero, value) ||
	    memcmp(value, want->rodata, shape.value_size))
		return error_set(
			err, -ESTALE,
			"its .rodata holds another policy or another build's");
	return 0;
}

/* Exactly the policy's rules: as many entries as rules, each one found
 * with the value the hook would have stored. */
static int check_rules(const __u32 *ids, __u32 nr,
		       const struct progcheck_want *want, struct sh_error *err)
{
	struct bpf_map_info info;
	_cleanup_close_ int fd = prog_map(ids, nr, "rules", &info);
	struct progcheck_map shape = {
		BPF_MAP_TYPE_HASH, sizeof(struct sh_opt_key),
		sizeof(struct sh_opt_rule),
		want->nr_rules ? (__u32)want->nr_rules : 1, true
	};
	struct sh_opt_key key;
	int r;

	if (fd < 0)
		return error_set(err, -ESTALE, "it has no rules map");
	r = map_shape(fd, &info, &shape, "its rules map", err);
	if (r)
		return r;
	if (!want->nr_rules && bpf_map_get_next_key(fd, NULL, &key) == 0)
		return error_set(err, -ESTALE, "its rules map is not empty");
	for (size_t i = 0; i < want->nr_rules; i++) {
		struct sh_opt_rule have,
			rule = progcheck_rule(want->rules, i, want->audit);

		key = want->rules[i].key;
		if (bpf_map_lookup_elem(fd, &key, &have) ||
		    memcmp(&have, &rule, sizeof(rule)))
			return error_set(err, -ESTALE,
					 "its rules map holds other rules");
	}
	return 0;
}

/* Whether the kernel has BPF_LINK_CREATE (Linux >= 5.7): with no program
 * it answers EBADF, without the command EINVAL. */
static bool has_link_create(enum bpf_attach_type type)
{
	int link = bpf_link_create(-1, -1, type, NULL);

	if (link >= 0)
		close(link);
	return link < 0 && errno == EBADF;
}

/* The expected attach type, asked without attaching anything. A kernel
 * that cannot be asked checks it at attach time (and refuses there). */
static int check_attach_type(int fd, enum sh_prog_kind kind,
			     struct sh_error *err)
{
	const struct kind_info *k = kind_get(kind);
	int link = bpf_link_create(fd, -1, k->type, NULL);

	if (link >= 0) {
		close(link); /* no kernel makes a link without a target */
		return error_set(err, -ESTALE, "it attached with no target");
	}
	if (errno == EBADF || (errno == EINVAL && !has_link_create(k->type)))
		return 0;
	return error_set(err, -ESTALE, "it does not attach as %s", k->name);
}

int progcheck_prog(int prog_fd, const struct progcheck_want *want,
		   struct sh_error *err)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), ids[PROG_MAPS_MAX];
	__u32 type = prog_type_of(want->kind);
	int r;

	info.nr_map_ids = PROG_MAPS_MAX;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return error_set(err, -ESTALE, "it is not a BPF program");
	if (info.type != type)
		return error_set(err, -ESTALE, "it is a %s program, not %s",
				 prog_type_name(info.type),
				 prog_type_name(type));
	if (strncmp(info.name, want->prog_name, SH_BPF_NAME_MAX))
		return error_set(err, -ESTALE, "it is named '%.16s', not '%s'",
				 info.name, want->prog_name);
	r = check_attach_type(prog_fd, want->kind, err);
	if (r)
		return r;
	r = check_rodata(ids, info.nr_map_ids, want, err);
	if (r || !want->has_rules)
		return r;
	return check_rules(ids, info.nr_map_ids, want, err);
}
