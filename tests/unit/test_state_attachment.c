// SPDX-License-Identifier: GPL-2.0-only
/* state_attachment_invalid(): what an attachment read back must be before the hook
 * acts on it (unlinkat, rmdir, detach).
 *
 * Modules: `state.c`
 */
#include <string.h>

#include "state/state.h"
#include "tap.h"

#define MOUNT "/sys/fs/cgroup/unified"

static const struct cg_root root = { .mount = MOUNT };

/* An attachment as prestart writes it for container "c1" in cgroup /c1. */
static void good(struct sh_attachment *att)
{
	memset(att, 0, sizeof(*att));
	strcpy(att->id, "c1");
	att->pid = 42;
	strcpy(att->cg.rel, "/c1");
	strcpy(att->cg.abs, MOUNT "/c1");
	att->progs.nr = 1;
	att->progs.prog[0].id = 7;
	strcpy(att->progs.prog[0].name, "sh_setsockopt");
}

static void made(struct sh_attachment *att, const char *parent, const char *rel)
{
	good(att);
	att->cg.created = true;
	strcpy(att->cg.parent_rel, parent);
	strcpy(att->cg.rel, rel);
	snprintf(att->cg.abs, sizeof(att->cg.abs), MOUNT "%s", rel);
}

static void refused(const struct sh_attachment *att, const char *stem,
		    const char *want, const char *what)
{
	const char *why = state_attachment_invalid(att, stem, &root);

	ok(why && strstr(why, want), "%s: %s", what, why ? why : "accepted");
}

static void test_record(void)
{
	struct sh_attachment att;

	good(&att);
	ok(!state_attachment_invalid(&att, "c1", &root),
	   "a record as prestart writes it");
	refused(&att, "c2", "not its file name",
		"id differs from the file name");
	strcpy(att.id, "../c1");
	refused(&att, "../c1", "not a valid container id", "id ../c1");
	good(&att);
	att.pid = 0;
	refused(&att, "c1", "pid", "pid 0");
	good(&att);
	att.pid = -1;
	refused(&att, "c1", "pid", "pid -1");

	static const char *const bad_rel[] = { "/",    "c1",	"//c1",
					       "/c1/", "/./c1", "/a/../c1",
					       "/..",  "/c1/.", "" };
	for (size_t i = 0; i < sizeof(bad_rel) / sizeof(bad_rel[0]); i++) {
		good(&att);
		strcpy(att.cg.rel, bad_rel[i]);
		snprintf(att.cg.abs, sizeof(att.cg.abs), MOUNT "%s",
			 bad_rel[i]);
		refused(&att, "c1", "not a clean absolute path", bad_rel[i]);
	}
	good(&att);
	strcpy(att.cg.rel, "/../../../../tmp/victim");
	strcpy(att.cg.abs, "/tmp/victim");
	refused(&att, "c1", "not a clean absolute path",
		"cgroup climbing to /tmp/victim");
	good(&att);
	strcpy(att.cg.abs, "/tmp/victim");
	refused(&att, "c1", "not its cgroup below the cgroup2 mount",
		"cgroup_path elsewhere than mount + cgroup");
	good(&att);
	strcpy(att.cg.rel, "/c1..x/.hidden");
	strcpy(att.cg.abs, MOUNT "/c1..x/.hidden");
	ok(!state_attachment_invalid(&att, "c1", &root),
	   "dots inside a component are fine");

	made(&att, "/", "/oci-sockopt-hook-c1");
	ok(!state_attachment_invalid(&att, "c1", &root),
	   "a cgroup made under the root");
	made(&att, "/pod/a", "/pod/a/oci-sockopt-hook-c1");
	ok(!state_attachment_invalid(&att, "c1", &root),
	   "a cgroup made under /pod/a");
	made(&att, "/", "/system.slice");
	refused(&att, "c1", "cannot have made", "created, but not our name");
	made(&att, "/pod/b", "/pod/a/oci-sockopt-hook-c1");
	refused(&att, "c1", "cannot have made", "created, parent differs");
	made(&att, "/pod/../a", "/pod/../a/oci-sockopt-hook-c1");
	refused(&att, "c1", "not a clean absolute path",
		"created, a '..' parent");

	good(&att);
	strcpy(att.progs.prog[0].name, "cilium_sock");
	refused(&att, "c1", "sh_", "a program that is not ours");
	good(&att);
	att.progs.prog[0].id = 0;
	refused(&att, "c1", "id is 0", "program id 0");
}

int main(void)
{
	test_record();
	return tap_done();
}
