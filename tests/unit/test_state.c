// SPDX-License-Identifier: GPL-2.0-only
/*
 * state.c (with the attachments' JSON form): one attachment per container in the
 * state directory (OCI_SOCKOPT_HOOK_STATE_DIR, here a directory of the
 * test's own), written whole, read back equal, listed, removed; files that
 * are not attachments are ignored with a warning; a directory others may write
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

static void filled(struct sh_attachment *att, const char *id)
{
	memset(att, 0, sizeof(*att));
	snprintf(att->id, sizeof(att->id), "%s", id);
	strcpy(att->k8s_namespace, "prod");
	strcpy(att->pod, "shop-1");
	strcpy(att->container, "web");
	att->pid = 4242;
	att->pid_start = 123456789;
	snprintf(att->cg.rel, sizeof(att->cg.rel), "/test/%s", id);
	snprintf(att->cg.abs, sizeof(att->cg.abs), "%s/test/%s", root.mount,
		 id);
	att->cg.id = 987;
	strcpy(att->policy, "restricted");
	strcpy(att->policy_source, "annotation");
	att->bypass = true;
	strcpy(att->bypass_source, "default");
	att->audit = true;
	strcpy(att->mode_source, "annotation");
	att->progs.nr = 2;
	att->progs.prog[0].type = BPF_CGROUP_SETSOCKOPT;
	att->progs.prog[0].id = 11;
	strcpy(att->progs.prog[0].name, "sh_setsockopt");
	att->progs.prog[0].hash = 0x0123456789abcdefULL;
	att->progs.prog[1].type = BPF_CGROUP_INET_SOCK_CREATE;
	att->progs.prog[1].id = 12;
	strcpy(att->progs.prog[1].name, "sh_sock_create");
	att->progs.bypass_active = true;
	strcpy(att->footprint, "web-rec");
	strcpy(att->footprint_dir, "/var/lib/x");
}

static bool same(const struct sh_attachment *a, const struct sh_attachment *b)
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

static int visit(const struct sh_attachment *att, void *data)
{
	struct seen *s = data;

	if (s->n < 8)
		snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", att->id);
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
	struct sh_attachment att;
	struct seen s = { 0 };

	context_set(&(struct sh_context){ 0 });
	is_str(state_dir(), "/run/oci-sockopt-hook",
	       "state_dir: /run/oci-sockopt-hook by default");
	context_set(&(struct sh_context){ .state_dir = state });
	is_str(state_dir(), state, "... OCI_SOCKOPT_HOOK_STATE_DIR moves it");
	ok(state_dir_check(&err) == 0, "no directory yet: nothing to check");
	ok(state_read("c1", &att) == -ENOENT, "no directory: no record");
	ok(state_remove("c1") == 0, "removing from no directory: 0");
	ok(state_foreach(visit, &s) == 0 && s.n == 0,
	   "listing no directory: nothing");
	ok(access(state, F_OK) < 0, "and none of them made the directory");
}

static void test_round_trip(void)
{
	struct sh_error err = { 0 };
	struct sh_attachment att, back;
	struct stat st;
	struct seen s = { 0 };
	char path[600];

	filled(&att, "c1");
	ok(state_write(&att, &err) == 0, "state_write: a record");
	ok(stat(state, &st) == 0 && S_ISDIR(st.st_mode) &&
		   (st.st_mode & 07777) == 0700,
	   "the directory is made 0700");
	snprintf(path, sizeof(path), "%s/c1.json", state);
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600,
	   "the record is c1.json, 0600");
	memset(&back, 0xaa, sizeof(back));
	ok(state_read("c1", &back) == 0, "state_read: it reads back");
	ok(same(&att, &back), "... every field equal");

	att.cg.created = true;
	strcpy(att.cg.parent_rel, "/test");
	snprintf(att.cg.rel, sizeof(att.cg.rel), "/test/oci-sockopt-hook-c1");
	snprintf(att.cg.abs, sizeof(att.cg.abs), "%s%s", root.mount,
		 att.cg.rel);
	att.progs.nr = 0;
	att.progs.bypass_active = false;
	att.footprint[0] = att.footprint_dir[0] = '\0';
	att.audit = att.bypass = false;
	ok(state_write(&att, &err) == 0 && state_read("c1", &back) == 0 &&
		   same(&att, &back) && back.cg.created &&
		   !strcmp(back.cg.parent_rel, "/test"),
	   "rewritten: a hook-made cgroup, no programs, no record mode");

	filled(&att, "c2");
	state_write(&att, &err);
	ok(state_foreach(visit, &s) == 0 && s.n == 2 && saw(&s, "c1") &&
		   saw(&s, "c2"),
	   "state_foreach: both records");
	ok(state_remove("c1") == 0 && state_read("c1", &back) == -ENOENT,
	   "state_remove: gone");
	ok(state_remove("c1") == 0, "removing it again: 0");
	ok(state_remove("../c2") == 0 && state_read("c2", &back) == 0,
	   "an id with '/' removes nothing else");
}

/* An attachment as the hook writes it: the attribute of an empty file. */
static void write_attachment(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || fsetxattr(fd, SH_ATTACHMENT_XATTR, text, strlen(text), 0))
		tap_diag("cannot write %s as an attribute: %s", path,
			 strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void test_not_attachments(void)
{
	struct sh_attachment att;
	struct seen s = { 0 };
	char path[600];
	const char *said;

	snprintf(path, sizeof(path), "%s/broken.json", state);
	write_attachment(path, "{\"id\": ");
	snprintf(path, sizeof(path), "%s/other.json", state);
	write_attachment(
		path, "{\"id\": \"c2\", \"pid\": 1, \"cgroup\": \"/test/c2\"}");
	/* c2's attachment, as a file's content: what anyone who may write the
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
	ok(state_read("broken", &att) == -EBADMSG, "state_read of a broken "
						   "record: -EBADMSG");
	ok(state_read("planted", &att) == -EBADMSG,
	   "state_read of a file-content record: -EBADMSG");
	capture_end();
}

static void test_untrusted(void)
{
	struct sh_error err = { 0 };
	struct sh_attachment att;
	const char *said;

	chmod(state, 0777);
	capture_start();
	ok(state_dir_check(&err) == -EPERM &&
		   strstr(err.msg, "state directory"),
	   "a world-writable state directory: -EPERM");
	ok(state_read("c2", &att) == -EPERM, "nothing is read from it");
	filled(&att, "c4");
	memset(&err, 0, sizeof(err));
	ok(state_write(&att, &err) == -EPERM, "nothing is written to it");
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
	/* Attachments name cgroups below the cgroup2 mount: attachments are checked
	 * against it, as the hook checks them. */
	if (cg_find_root(&root, &err))
		return tap_skip_all(err.msg);
	test_absent();
	test_round_trip();
	test_not_attachments();
	test_untrusted();
	test_stamp();
	test_files();
	return tap_done();
}
