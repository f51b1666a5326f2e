// SPDX-License-Identifier: GPL-2.0-only
/*
 * metrics.c: the node's metrics from a state directory of the test's own:
 * every family once, in order; an attachment whose cgroup is live shows its
 * names, policy, bypass and mode; a stale attachment (cgroup gone) shows
 * nothing; counters that cannot be read are counted in collect_errors; the
 * .prom file is replaced whole, 0644, and a temp name someone planted is
 * never written through. No root: the live record names a cgroup that
 * exists on this machine and has no programs of ours.
 *
 * Modules: `metrics.c`
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/context.h"
#include "cgroup/cg.h"
#include "helpers.h"
#include "observe/metrics.h"
#include "state/state.h"
#include "tap.h"

#define P "oci_sockopt_hook_"

static struct cg_root root;

/* Some cgroup below the mount that exists now: its path and id. */
static bool some_cgroup(char *rel, size_t len, uint64_t *id)
{
	DIR *d = opendir(root.mount);
	struct dirent *de;
	char abs[4096];
	struct stat st;
	bool found = false;

	while (d && !found && (de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(abs, sizeof(abs), "%s/%s", root.mount, de->d_name);
		if (stat(abs, &st) == 0) {
			snprintf(rel, len, "/%s", de->d_name);
			*id = st.st_ino;
			found = true;
		}
	}
	if (d)
		closedir(d);
	return found;
}

static void put_attachment(const char *id, const char *rel, uint64_t cg_id,
			   bool audit, int nr_progs)
{
	struct sh_error err = { 0 };
	struct sh_attachment att = { 0 };

	snprintf(att.id, sizeof(att.id), "%s", id);
	strcpy(att.k8s_namespace, "prod");
	strcpy(att.pod, "shop \"1\"");
	strcpy(att.container, "web");
	att.pid = 1;
	snprintf(att.cg.rel, sizeof(att.cg.rel), "%s", rel);
	cg_path(&root, rel, att.cg.abs, sizeof(att.cg.abs));
	att.cg.id = cg_id;
	strcpy(att.policy, "restricted");
	att.bypass = true;
	att.audit = audit;
	att.progs.nr = nr_progs;
	for (int i = 0; i < nr_progs; i++) {
		att.progs.prog[i].type = BPF_CGROUP_SETSOCKOPT;
		att.progs.prog[i].id = 0x7ffffff0; /* no such program */
		strcpy(att.progs.prog[i].name, "sh_setsockopt");
	}
	if (state_write(&att, &err))
		tap_diag("state_write %s: %s", id, err.msg);
}

static char *scrape(int *r, const char **said)
{
	struct sh_error err = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	capture_start();
	*r = reported(metrics_write(f, "1.2.3", &err), &err);
	*said = capture_end();
	fclose(f);
	return text;
}

/* The families' HELP lines appear once each, in this order. */
static bool families_in_order(const char *text)
{
	static const char *const names[] = {
		"build_info",	       "runs_total",	 "run_duration_seconds",
		"containers_attached", "container_info", "socket_calls_total",
		"would_have_total",    "collect_errors",
	};
	const char *at = text;
	char want[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(want, sizeof(want), "# TYPE " P "%s ", names[i]);
		at = strstr(at, want);
		if (!at || strstr(at + 1, want))
			return false;
	}
	return true;
}

static void test_empty(void)
{
	const char *said;
	int r;
	char *text = scrape(&r, &said);

	ok(r == 0 && text, "no state directory: metrics all the same");
	ok(families_in_order(text), "every family once, in order");
	ok(strstr(text, P "build_info{version=\"1.2.3\"} 1\n") != NULL,
	   "build_info names the version");
	ok(strstr(text, P "containers_attached 0\n") &&
		   strstr(text, P "collect_errors 0\n") &&
		   !strstr(text, P "container_info{"),
	   "no containers, no errors");
	free(text);
}

static void test_attachments(void)
{
	char rel[1024] = "", made[4096] = "", *text;
	struct stat st;
	const char *said;
	uint64_t id = 0;
	int r;

	/* A fresh machine may have no cgroup below the mount: as root the
	 * test makes its own, so that the live record is always counted. */
	if (!some_cgroup(rel, sizeof(rel), &id) && geteuid() == 0) {
		snprintf(made, sizeof(made), "%s/sockopt-unit-metrics.%d",
			 root.mount, (int)getpid());
		if (mkdir(made, 0755) == 0 && stat(made, &st) == 0) {
			snprintf(rel, sizeof(rel), "/%s",
				 strrchr(made, '/') + 1);
			id = st.st_ino;
		} else {
			made[0] = '\0';
		}
	}
	if (!rel[0]) {
		tap_skip("a record of a live cgroup",
			 "no cgroup below the mount, and none may be made");
		return;
	}
	put_attachment("live1", rel, id, false, 0);
	put_attachment("stale1", "/no-such-cgroup-for-this-test", 12345, false,
		       0);
	put_attachment("moved1", rel, id + 1, false, 0);
	text = scrape(&r, &said);
	ok(r == 0 && strstr(text, P "containers_attached 1\n"),
	   "one live record counted; the stale and the replaced one not");
	ok(strstr(text, P
		  "container_info{container_id=\"live1\",namespace=\"prod\",pod=\"shop \\\"1\\\"\",container=\"web\",policy=\"restricted\",bypass=\"true\",mode=\"enforce\"} 1\n") !=
		   NULL,
	   "container_info: names (escaped), policy, bypass, mode");
	ok(strstr(text, P
		  "socket_calls_total{container_id=\"live1\",namespace=\"prod\",pod=\"shop \\\"1\\\"\",container=\"web\",policy=\"restricted\",program=\"setsockopt\",action=\"denied\"} 0\n") !=
		   NULL,
	   "socket_calls_total: every counter, 0 without programs");
	ok(!strstr(text, "stale1") && !strstr(text, "moved1"),
	   "nothing of the stale records");
	ok(strstr(text, P "collect_errors 0\n") && !*said,
	   "no errors, nothing said");
	free(text);

	/* Programs that cannot be read (none has that id): counted. */
	put_attachment("live1", rel, id, true, 1);
	text = scrape(&r, &said);
	ok(r == 0 && strstr(text, P "collect_errors 1\n") &&
		   strstr(said, "metrics: cannot read the counters of 'live1'"),
	   "unreadable counters: a warning and collect_errors 1");
	ok(strstr(text, "mode=\"audit\"} 1\n") != NULL,
	   "an audit mode record says mode=\"audit\"");
	free(text);
	state_remove("live1");
	state_remove("stale1");
	state_remove("moved1");
	if (made[0] && rmdir(made))
		tap_diag("cannot remove %s: %s", made, strerror(errno));
}

static void test_file(void)
{
	struct sh_error err = { 0 };
	char path[512], planted[600], *text;
	struct stat st;
	const char *said;

	snprintf(path, sizeof(path), "%s/node.txt", unit_dir);
	capture_start();
	ok(reported(metrics_write_file(path, "v", &err), &err) == -EINVAL,
	   "an output not ending in .prom: -EINVAL");
	said = capture_end();
	ok(strstr(said, "does not end in .prom") != NULL,
	   "... saying the collector would ignore it");

	snprintf(path, sizeof(path), "%s/node.prom", unit_dir);
	snprintf(planted, sizeof(planted), "%s/.node.prom.%d.tmp", unit_dir,
		 getpid());
	write_file(TMP_PATH("victim"), "precious", 0600);
	symlink(TMP_PATH("victim"), planted);
	umask(077);
	memset(&err, 0, sizeof(err));
	ok(metrics_write_file(path, "v", &err) == 0, "a .prom file: written");
	text = read_file(path);
	ok(text && families_in_order(text), "it holds the metrics");
	free(text);
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644,
	   "0644 whatever the umask (node_exporter's user reads it)");
	text = read_file(TMP_PATH("victim"));
	ok(text && !strcmp(text, "precious") && access(planted, F_OK) < 0,
	   "a link planted at the temp name: removed, its target untouched");
	free(text);
	snprintf(path, sizeof(path), "%s/no/such/dir/node.prom", unit_dir);
	memset(&err, 0, sizeof(err));
	ok(metrics_write_file(path, "v", &err) == -ENOENT &&
		   strstr(err.msg, "cannot open"),
	   "a missing directory: -ENOENT");
}

int main(void)
{
	struct sh_error err = { 0 };
	char state[512];

	tmpdir_make();
	if (cg_find_root(&root, &err))
		return tap_skip_all(err.msg);
	snprintf(state, sizeof(state), "%s/state", unit_dir);
	context_set(&(struct sh_context){ .state_dir = state });
	test_empty();
	test_attachments();
	test_file();
	return tap_done();
}
