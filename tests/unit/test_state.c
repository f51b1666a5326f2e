// SPDX-License-Identifier: GPL-2.0-only
/*
 * state.c (with the records' JSON form): one record per container in the
 * state directory (OCI_SOCKOPT_HOOK_STATE_DIR, here a directory of the
 * test's own), written whole, read back equal, listed, removed; files that
 * are not records are ignored with a warning; a directory others may write
 * is refused; the gc stamp is renewed at most once per interval.
 *
 * Modules: `state.c`, `context.c`
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/context.h"
#include "cgroup/cg.h"
#include "helpers.h"
#include "state/state.h"
#include "tap.h"

static struct cg_root root;
static char state[512];

static void filled(struct sh_record *rec, const char *id)
{
	memset(rec, 0, sizeof(*rec));
	snprintf(rec->id, sizeof(rec->id), "%s", id);
	strcpy(rec->k8s_namespace, "prod");
	strcpy(rec->pod, "shop-1");
	strcpy(rec->container, "web");
	rec->pid = 4242;
	rec->pid_start = 123456789;
	snprintf(rec->cg.rel, sizeof(rec->cg.rel), "/test/%s", id);
	snprintf(rec->cg.abs, sizeof(rec->cg.abs), "%s/test/%s", root.mount,
		 id);
	rec->cg.id = 987;
	strcpy(rec->policy, "restricted");
	strcpy(rec->policy_source, "annotation");
	rec->bypass = true;
	strcpy(rec->bypass_source, "default");
	rec->audit = true;
	strcpy(rec->mode_source, "annotation");
	rec->progs.nr = 2;
	rec->progs.prog[0].type = BPF_CGROUP_SETSOCKOPT;
	rec->progs.prog[0].id = 11;
	strcpy(rec->progs.prog[0].name, "sh_setsockopt");
	rec->progs.prog[0].hash = 0x0123456789abcdefULL;
	rec->progs.prog[1].type = BPF_CGROUP_INET_SOCK_CREATE;
	rec->progs.prog[1].id = 12;
	strcpy(rec->progs.prog[1].name, "sh_sock_create");
	rec->progs.bypass_active = true;
	strcpy(rec->footprint, "web-rec");
	strcpy(rec->footprint_dir, "/var/lib/x");
}

static bool same(const struct sh_record *a, const struct sh_record *b)
{
	bool progs = a->progs.nr == b->progs.nr &&
		     a->progs.bypass_active == b->progs.bypass_active;

	for (int i = 0; progs && i < a->progs.nr; i++)
		progs = a->progs.prog[i].type == b->progs.prog[i].type &&
			a->progs.prog[i].id == b->progs.prog[i].id &&
			a->progs.prog[i].hash == b->progs.prog[i].hash &&
			!strcmp(a->progs.prog[i].name, b->progs.prog[i].name);
	return progs && !strcmp(a->id, b->id) &&
	       !strcmp(a->k8s_namespace, b->k8s_namespace) &&
	       !strcmp(a->pod, b->pod) && !strcmp(a->container, b->container) &&
	       a->pid == b->pid && a->pid_start == b->pid_start &&
	       !strcmp(a->cg.rel, b->cg.rel) && !strcmp(a->cg.abs, b->cg.abs) &&
	       a->cg.id == b->cg.id && a->cg.created == b->cg.created &&
	       !strcmp(a->policy, b->policy) &&
	       !strcmp(a->policy_source, b->policy_source) &&
	       a->bypass == b->bypass &&
	       !strcmp(a->bypass_source, b->bypass_source) &&
	       a->audit == b->audit &&
	       !strcmp(a->mode_source, b->mode_source) &&
	       !strcmp(a->footprint, b->footprint) &&
	       !strcmp(a->footprint_dir, b->footprint_dir);
}

struct seen {
	int n;
	char ids[8][80];
};

static int visit(const struct sh_record *rec, void *data)
{
	struct seen *s = data;

	if (s->n < 8)
		snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", rec->id);
	s->n++;
	return 0;
}

static bool saw(const struct seen *s, const char *id)
{
	for (int i = 0; i < s->n && i < 8; i++)
		if (!strcmp(s->ids[i], id))
			return true;
	return false;
}

static void test_absent(void)
{
	struct sh_error err = { 0 };
	struct sh_record rec;
	struct seen s = { 0 };

	context_set(&(struct sh_context){ 0 });
	is_str(state_dir(), "/run/oci-sockopt-hook",
	       "state_dir: /run/oci-sockopt-hook by default");
	context_set(&(struct sh_context){ .state_dir = state });
	is_str(state_dir(), state, "... OCI_SOCKOPT_HOOK_STATE_DIR moves it");
	ok(state_dir_check(&err) == 0, "no directory yet: nothing to check");
	ok(state_read("c1", &rec) == -ENOENT, "no directory: no record");
	ok(state_remove("c1") == 0, "removing from no directory: 0");
	ok(state_foreach(visit, &s) == 0 && s.n == 0,
	   "listing no directory: nothing");
	ok(access(state, F_OK) < 0, "and none of them made the directory");
}

static void test_round_trip(void)
{
	struct sh_error err = { 0 };
	struct sh_record rec, back;
	struct stat st;
	struct seen s = { 0 };
	char path[600];

	filled(&rec, "c1");
	ok(state_write(&rec, &err) == 0, "state_write: a record");
	ok(stat(state, &st) == 0 && S_ISDIR(st.st_mode) &&
		   (st.st_mode & 07777) == 0700,
	   "the directory is made 0700");
	snprintf(path, sizeof(path), "%s/c1.json", state);
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600,
	   "the record is c1.json, 0600");
	memset(&back, 0xaa, sizeof(back));
	ok(state_read("c1", &back) == 0, "state_read: it reads back");
	ok(same(&rec, &back), "... every field equal");

	rec.cg.created = true;
	strcpy(rec.cg.parent_rel, "/test");
	snprintf(rec.cg.rel, sizeof(rec.cg.rel), "/test/oci-sockopt-hook-c1");
	snprintf(rec.cg.abs, sizeof(rec.cg.abs), "%s%s", root.mount,
		 rec.cg.rel);
	rec.progs.nr = 0;
	rec.progs.bypass_active = false;
	rec.footprint[0] = rec.footprint_dir[0] = '\0';
	rec.audit = rec.bypass = false;
	ok(state_write(&rec, &err) == 0 && state_read("c1", &back) == 0 &&
		   same(&rec, &back) && back.cg.created &&
		   !strcmp(back.cg.parent_rel, "/test"),
	   "rewritten: a hook-made cgroup, no programs, no record mode");

	filled(&rec, "c2");
	state_write(&rec, &err);
	ok(state_foreach(visit, &s) == 0 && s.n == 2 && saw(&s, "c1") &&
		   saw(&s, "c2"),
	   "state_foreach: both records");
	ok(state_remove("c1") == 0 && state_read("c1", &back) == -ENOENT,
	   "state_remove: gone");
	ok(state_remove("c1") == 0, "removing it again: 0");
	ok(state_remove("../c2") == 0 && state_read("c2", &back) == 0,
	   "an id with '/' removes nothing else");
}

/* A record as the hook writes it: the attribute of an empty file. */
static void write_record(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || fsetxattr(fd, SH_RECORD_XATTR, text, strlen(text), 0))
		tap_diag("cannot write %s as an attribute: %s", path,
			 strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void test_not_records(void)
{
	struct sh_record rec;
	struct seen s = { 0 };
	char path[600];
	const char *said;

	snprintf(path, sizeof(path), "%s/broken.json", state);
	write_record(path, "{\"id\": ");
	snprintf(path, sizeof(path), "%s/other.json", state);
	write_record(path,
		     "{\"id\": \"c2\", \"pid\": 1, \"cgroup\": \"/test/c2\"}");
	/* c2's record, as a file's content: what anyone who may write the
	 * directory can plant. */
	snprintf(path, sizeof(path), "%s/planted.json", state);
	write_file(
		path,
		"{\"id\": \"planted\", \"pid\": 1, \"cgroup\": \"/test/c2\"}",
		0600);
	snprintf(path, sizeof(path), "%s/notes.txt", state);
	write_file(path, "hello", 0600);
	snprintf(path, sizeof(path), "%s/.c3.json", state);
	write_file(path, "{}", 0600);
	snprintf(path, sizeof(path), "%s/linked.json", state);
	symlink("c2.json", path);

	capture_start();
	state_foreach(visit, &s);
	said = capture_end();
	ok(s.n == 1 && saw(&s, "c2"), "only the real record is visited (%d)",
	   s.n);
	ok(strstr(said, "ignoring state record 'broken.json'") &&
		   strstr(said, "it is not a state record"),
	   "broken JSON: ignored with a warning");
	ok(strstr(said, "ignoring state record 'other.json'"),
	   "a record under another file name: ignored with a warning");
	ok(strstr(said, "ignoring state record 'linked.json'") &&
		   strstr(said, "Too many levels of symbolic links"),
	   "a symbolic link: not followed, ignored with a warning");
	ok(!strstr(said, "notes.txt") && !strstr(said, ".c3.json"),
	   "other names and hidden files: silently skipped");
	ok(strstr(said, "ignoring state record 'planted.json'") &&
		   strstr(said, "it has no record attribute"),
	   "a record as a file's content: never read, ignored with a warning");

	capture_start();
	ok(state_read("broken", &rec) == -EBADMSG, "state_read of a broken "
						   "record: -EBADMSG");
	ok(state_read("planted", &rec) == -EBADMSG,
	   "state_read of a file-content record: -EBADMSG");
	capture_end();
}

static void test_untrusted(void)
{
	struct sh_error err = { 0 };
	struct sh_record rec;
	const char *said;

	chmod(state, 0777);
	capture_start();
	ok(state_dir_check(&err) == -EPERM &&
		   strstr(err.msg, "state directory"),
	   "a world-writable state directory: -EPERM");
	ok(state_read("c2", &rec) == -EPERM, "nothing is read from it");
	filled(&rec, "c4");
	memset(&err, 0, sizeof(err));
	ok(state_write(&rec, &err) == -EPERM, "nothing is written to it");
	said = capture_end();
	(void)said;
	chmod(state, 0700);
}

static void test_stamp(void)
{
	char path[600];
	struct timespec future[2] = { { .tv_sec = 4000000000 },
				      { .tv_sec = 4000000000 } };

	ok(state_stamp_renew(".gc-stamp", 60) == 1, "a new stamp: renewed (1)");
	ok(state_stamp_renew(".gc-stamp", 60) == 0,
	   "again within the interval: not yet (0)");
	ok(state_stamp_renew(".gc-stamp", 0) == 1, "an interval of 0: renewed");
	snprintf(path, sizeof(path), "%s/.gc-stamp", state);
	utimensat(AT_FDCWD, path, future, 0);
	ok(state_stamp_renew(".gc-stamp", 60) == 1,
	   "a stamp from the future (clock set back): renewed");
}

static void test_files(void)
{
	struct sh_error err = { 0 };
	char *text = NULL;
	size_t len;

	ok(state_file_replace("x.data", "abc", 3, &err) == 0 &&
		   state_file_read("x.data", 10, &text, &len, &err) == 0 &&
		   len == 3 && !strcmp(text, "abc"),
	   "state_file_replace then state_file_read");
	free(text);
	ok(state_file_read("x.data", 2, &text, &len, &err) == -EFBIG,
	   "state_file_read: bounded");
}

int main(void)
{
	struct sh_error err = { 0 };

	tmpdir_make();
	snprintf(state, sizeof(state), "%s/state", unit_dir);
	/* Records name cgroups below the cgroup2 mount: records are checked
	 * against it, as the hook checks them. */
	if (cg_find_root(&root, &err))
		return tap_skip_all(err.msg);
	test_absent();
	test_round_trip();
	test_not_records();
	test_untrusted();
	test_stamp();
	test_files();
	return tap_done();
}
