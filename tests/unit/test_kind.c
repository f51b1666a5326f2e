// SPDX-License-Identifier: GPL-2.0-only
/*
 * kind.c: the three program kinds, their attach types and the names that
 * attachments, pins and status use, one table both ways; another tool's attach
 * type named as libbpf names it.
 *
 * Modules: `kind.c`
 */
#include <string.h>
#include <bpf/bpf.h>

#include "lib/kind.h"
#include "tap.h"

int main(void)
{
	static const struct {
		enum sh_prog_kind kind;
		enum bpf_attach_type type;
		const char *name;
	} want[] = {
		{ SH_PROG_SOCK, BPF_CGROUP_INET_SOCK_CREATE, "sock_create" },
		{ SH_PROG_SET, BPF_CGROUP_SETSOCKOPT, "setsockopt" },
		{ SH_PROG_GET, BPF_CGROUP_GETSOCKOPT, "getsockopt" },
	};

	for (size_t i = 0; i < 3; i++) {
		const struct kind_info *k = kind_get(want[i].kind);

		ok(k && k->kind == want[i].kind && k->type == want[i].type &&
			   !strcmp(k->name, want[i].name),
		   "kind %d: attach type %d, named %s", want[i].kind,
		   want[i].type, want[i].name);
		ok(kind_by_type(want[i].type) == k &&
			   kind_by_name(want[i].name) == k,
		   "%s found by its type and by its name", want[i].name);
		is_str(kind_type_name(want[i].type), want[i].name,
		       "kind_type_name: our name for our type");
	}
	ok(kind_get(SH_PROG_KINDS) == NULL, "no kind past the last");
	ok(kind_by_type(BPF_CGROUP_INET_EGRESS) == NULL &&
		   kind_by_name("cgroup_inet_egress") == NULL &&
		   kind_by_name("") == NULL,
	   "another type or name is not ours");
	is_str(kind_type_name(BPF_CGROUP_INET_EGRESS), "cgroup_inet_egress",
	       "another tool's type: libbpf's name");
	is_str(kind_type_name((enum bpf_attach_type)999), "unknown",
	       "a type libbpf does not know: unknown");
	return tap_done();
}
