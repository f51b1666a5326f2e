// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's answer to "what runs for this cgroup": the programs
 * attached to it (bpf_prog_query, as `bpftool cgroup show`), and the
 * effective ones, which include what ancestors attached with
 * BPF_F_ALLOW_MULTI. Ours are the sh_* programs; the record is checked
 * against them, never trusted alone.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>

#include "lib/bpfinfo.h"
#include "observe/drift.h"

#define DRIFT_QUERY_MAX 64
#define OUR_PREFIX "sh_"

void drift_init(const struct sh_record *rec, struct drift_report *out)
{
	memset(out, 0, sizeof(*out));
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		out->kind[k].type = kind_get(k)->type;
		for (int i = 0; i < rec->progs.nr; i++)
			if (rec->progs.prog[i].type == out->kind[k].type)
				out->kind[k].recorded = rec->progs.prog[i].id;
	}
}

static int query(int cg_fd, enum bpf_attach_type type, __u32 flags, __u32 *ids,
		 __u32 *n)
{
	__u32 attach_flags = 0;

	*n = DRIFT_QUERY_MAX;
	if (bpf_prog_query(cg_fd, type, flags, &attach_flags, ids, n) == 0)
		return 0;
	if (errno == ENOSPC) { /* more than we look at: the first ones */
		*n = DRIFT_QUERY_MAX;
		return 0;
	}
	return -errno;
}

static bool ours(__u32 id)
{
	char name[SH_BPF_NAME_MAX];

	bpfinfo_prog_name(id, name);
	return !strncmp(name, OUR_PREFIX, strlen(OUR_PREFIX));
}

static void add_other(struct drift_report *out, enum bpf_attach_type type,
		      __u32 id)
{
	size_t pos = strlen(out->other);
	char name[SH_BPF_NAME_MAX];

	bpfinfo_prog_name(id, name);
	snprintf(out->other + pos, sizeof(out->other) - pos, "%s%s %u (%s)",
		 pos ? ", " : "", kind_type_name(type), id, name);
}

static int query_kind(int cg_fd, struct drift_report *out, int k)
{
	struct drift_kind *dk = &out->kind[k];
	__u32 ids[DRIFT_QUERY_MAX], n;
	int r = query(cg_fd, dk->type, 0, ids, &n);

	if (r)
		return r;
	for (__u32 i = 0; i < n; i++)
		if (dk->nr_ours < SH_DRIFT_OURS_MAX && ours(ids[i]))
			dk->ours[dk->nr_ours++] = ids[i];
	r = query(cg_fd, dk->type, BPF_F_QUERY_EFFECTIVE, ids, &n);
	if (r)
		return r;
	for (__u32 i = 0; i < n; i++)
		if (!ours(ids[i]))
			add_other(out, dk->type, ids[i]);
	return 0;
}

int drift_query(int cg_fd, struct drift_report *out)
{
	for (int k = 0; k < SH_PROG_KINDS; k++) {
		int r = query_kind(cg_fd, out, k);

		if (r)
			return r;
	}
	return 0;
}

enum drift_state drift_state_of(const struct drift_kind *k)
{
	bool found = false;

	for (int i = 0; i < k->nr_ours; i++)
		found = found || k->ours[i] == k->recorded;
	if (!k->recorded)
		return k->nr_ours ? DRIFT_UNRECORDED : DRIFT_NONE;
	if (!k->nr_ours)
		return DRIFT_MISSING;
	if (!found)
		return DRIFT_REPLACED;
	return k->nr_ours > 1 ? DRIFT_EXTRA : DRIFT_ATTACHED;
}

const char *drift_state_name(enum drift_state s)
{
	static const char *const names[] = {
		[DRIFT_NONE] = "none",	     [DRIFT_ATTACHED] = "attached",
		[DRIFT_MISSING] = "missing", [DRIFT_REPLACED] = "replaced",
		[DRIFT_EXTRA] = "extra",     [DRIFT_UNRECORDED] = "unrecorded",
	};

	return names[s];
}

static void ids_text(const struct drift_kind *k, char *buf, size_t len)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (int i = 0; i < k->nr_ours && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%u",
					i ? ", " : "", k->ours[i]);
}

int drift_text(const struct drift_kind *k, const char *cg_rel, char *buf,
	       size_t len)
{
	const char *type = kind_type_name(k->type);
	char ids[SH_DRIFT_OURS_MAX * 12];

	ids_text(k, ids, sizeof(ids));
	switch (drift_state_of(k)) {
	case DRIFT_MISSING:
		snprintf(buf, len,
			 "record says %s program %u on %s, the cgroup has none",
			 type, k->recorded, cg_rel);
		return 1;
	case DRIFT_REPLACED:
	case DRIFT_EXTRA:
		snprintf(buf, len,
			 "record says %s program %u on %s, the cgroup has %s",
			 type, k->recorded, cg_rel, ids);
		return 1;
	case DRIFT_UNRECORDED:
		snprintf(
			buf, len,
			"the record names no %s program on %s, the cgroup has %s",
			type, cg_rel, ids);
		return 1;
	default:
		return 0;
	}
}
