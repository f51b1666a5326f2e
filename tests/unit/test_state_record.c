// SPDX-License-Identifier: GPL-2.0-only
/* state_record_invalid(): what a state record read back must be before the hook
 * acts on it (unlinkat, rmdir, detach).
 *
 * Modules: `state.c`
 */
#include <string.h>

#include "state/state.h"
#include "tap.h"

#define MOUNT "/sys/fs/cgroup/unified"

static const struct cg_root root = { .mount = MOUNT };

/* A record as prestart writes it for container "c1" in cgroup /c1. */
static void good(struct sh_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	strcpy(rec->id, "c1");
	rec->pid = 42;
	strcpy(rec->cg.rel, "/c1");
	strcpy(rec->cg.abs, MOUNT "/c1");
	rec->progs.nr = 1;
	rec->progs.prog[0].id = 7;
	strcpy(rec->progs.prog[0].name, "sh_setsockopt");
}

static void made(struct sh_record *rec, const char *parent, const char *rel)
{
	good(rec);
	rec->cg.created = true;
	strcpy(rec->cg.parent_rel, parent);
	strcpy(rec->cg.rel, rel);
	snprintf(rec->cg.abs, sizeof(rec->cg.abs), MOUNT "%s", rel);
}

static void refused(const struct sh_record *rec, const char *stem,
		    const char *want, const char *what)
{
	const char *why = state_record_invalid(rec, stem, &root);

	ok(why && strstr(why, want), "%s: %s", what, why ? why : "accepted");
}

static void test_record(void)
{
	struct sh_record rec;

	good(&rec);
	ok(!state_record_invalid(&rec, "c1", &root),
	   "a record as prestart writes it");
	refused(&rec, "c2", "not its file name",
		"id differs from the file name");
	strcpy(rec.id, "../c1");
	refused(&rec, "../c1", "not a valid container id", "id ../c1");
	good(&rec);
	rec.pid = 0;
	refused(&rec, "c1", "pid", "pid 0");
	good(&rec);
	rec.pid = -1;
	refused(&rec, "c1", "pid", "pid -1");

	static const char *const bad_rel[] = { "/",    "c1",	"//c1",
					       "/c1/", "/./c1", "/a/../c1",
					       "/..",  "/c1/.", "" };
	for (size_t i = 0; i < sizeof(bad_rel) / sizeof(bad_rel[0]); i++) {
		good(&rec);
		strcpy(rec.cg.rel, bad_rel[i]);
		snprintf(rec.cg.abs, sizeof(rec.cg.abs), MOUNT "%s",
			 bad_rel[i]);
		refused(&rec, "c1", "not a clean absolute path", bad_rel[i]);
	}
	good(&rec);
	strcpy(rec.cg.rel, "/../../../../tmp/victim");
	strcpy(rec.cg.abs, "/tmp/victim");
	refused(&rec, "c1", "not a clean absolute path",
		"cgroup climbing to /tmp/victim");
	good(&rec);
	strcpy(rec.cg.abs, "/tmp/victim");
	refused(&rec, "c1", "not its cgroup below the cgroup2 mount",
		"cgroup_path elsewhere than mount + cgroup");
	good(&rec);
	strcpy(rec.cg.rel, "/c1..x/.hidden");
	strcpy(rec.cg.abs, MOUNT "/c1..x/.hidden");
	ok(!state_record_invalid(&rec, "c1", &root),
	   "dots inside a component are fine");

	made(&rec, "/", "/oci-sockopt-hook-c1");
	ok(!state_record_invalid(&rec, "c1", &root),
	   "a cgroup made under the root");
	made(&rec, "/pod/a", "/pod/a/oci-sockopt-hook-c1");
	ok(!state_record_invalid(&rec, "c1", &root),
	   "a cgroup made under /pod/a");
	made(&rec, "/", "/system.slice");
	refused(&rec, "c1", "cannot have made", "created, but not our name");
	made(&rec, "/pod/b", "/pod/a/oci-sockopt-hook-c1");
	refused(&rec, "c1", "cannot have made", "created, parent differs");
	made(&rec, "/pod/../a", "/pod/../a/oci-sockopt-hook-c1");
	refused(&rec, "c1", "not a clean absolute path",
		"created, a '..' parent");

	good(&rec);
	strcpy(rec.progs.prog[0].name, "cilium_sock");
	refused(&rec, "c1", "sh_", "a program that is not ours");
	good(&rec);
	rec.progs.prog[0].id = 0;
	refused(&rec, "c1", "id is 0", "program id 0");
}

int main(void)
{
	test_record();
	return tap_done();
}
