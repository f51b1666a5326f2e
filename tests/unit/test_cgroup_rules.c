// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cgroup rules that need no kernel: which bundle mounts let a
 * container write to its cgroup membership, which containers get a cgroup
 * namespace of their own, the choice between the container's own cgroup,
 * one the hook makes, and a refusal, and the two operator settings.
 *
 * Modules: `bundle.c`, `cg.c`, `mountinfo.c`
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "cgroup/cg.h"
#include "config/config.h"
#include "input/bundle.h"
#include "helpers.h"
#include "input/oci.h"
#include "lib/mountinfo.h"
#include "tap.h"

#define CG2 "/sys/fs/cgroup/unified"
/* A hybrid host's mountinfo with a second mount of the hierarchy below
 * /run, as Cilium keeps one, and one in a directory with a space. */
#define MI_LINES(super)                                                      \
	"22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw\n"                      \
	"31 22 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"         \
	"41 31 0:38 / " CG2 " rw,relatime shared:9 - cgroup2 cgroup2 " super \
	"\n"                                                                 \
	"24 1 0:23 / /run rw - tmpfs tmpfs rw\n"                             \
	"90 24 0:38 / /run/cilium/cgroupv2 rw - cgroup2 none " super "\n"    \
	"91 1 0:38 / /tmp/a\\040b/cg rw - cgroup2 none " super "\n"
#define MI MI_LINES("rw")
#define MI_NSDELEGATE MI_LINES("rw,nsdelegate,memory_recursiveprot")

/* A bundle config.json with these mounts and namespaces (JSON arrays). */
static int bundle(const char *mounts, const char *namespaces,
		  struct oci_state *st)
{
	struct sh_error err = { 0 };
	char text[2048];

	memset(st, 0, sizeof(*st));
	snprintf(text, sizeof(text),
		 "{\"ociVersion\":\"1.0.2\",\"mounts\":%s,"
		 "\"linux\":{\"namespaces\":%s}}",
		 mounts, namespaces);
	return reported(oci_parse_bundle_config("test", text, strlen(text), st,
						&err),
			&err);
}

static void writable(const char *mounts, bool want, const char *why_part,
		     const char *what)
{
	struct oci_state st;
	char why[SH_BUNDLE_WHY_MAX];
	bool got = false;

	why[0] = '\0';
	if (bundle(mounts, "[]", &st) == 0) {
		struct mountinfo mi = { .text = MI };
		struct bundle_cg_reach r;

		bundle_cgroup_reach(&st, CG2, &mi, &r);
		got = r.fresh || r.bound;
		snprintf(why, sizeof(why), "%s", r.why);
	}
	ok(got == want && (!why_part || strstr(why, why_part)), "%s: %s", what,
	   want ? "writable" : "not writable");
	if (why_part && !strstr(why, why_part))
		printf("#   why: %s\n", why);
	oci_state_free(&st);
}

static void test_mounts(void)
{
	writable("[{\"destination\":\"/sys/fs/cgroup\",\"type\":\"cgroup\","
		 "\"source\":\"cgroup\",\"options\":[\"nosuid\",\"ro\"]}]",
		 false, NULL, "runc spec's default cgroup mount (ro)");
	writable("[{\"destination\":\"/c\",\"type\":\"cgroup2\","
		 "\"source\":\"cgroup2\",\"options\":[\"rw\"]}]",
		 true, "mounts[0], a cgroup2 mount at /c without \"ro\"",
		 "cgroup2 rw");
	writable("[{\"destination\":\"/c\",\"type\":\"cgroup\"}]", true,
		 "cgroup mount", "cgroup with no options");
	writable("[{\"destination\":\"/c\",\"type\":\"cgroup2\","
		 "\"options\":[\"ro\",\"rw\"]}]",
		 true, NULL, "ro then rw: the last one wins");
	writable("[{\"destination\":\"/c\",\"type\":\"bind\",\"source\":\"" CG2
		 "\",\"options\":[\"rbind\"]}]",
		 true, "a bind of " CG2 " (cgroup2) at /c",
		 "bind of the cgroup2 mount");
	writable("[{\"destination\":\"/c\",\"source\":\"" CG2
		 "\",\"options\":[\"bind\",\"ro\"]}]",
		 false, NULL, "read-only bind of the cgroup2 mount");
	writable("[{\"destination\":\"/c\",\"type\":\"bind\",\"source\":\"" CG2
		 "/x/y\",\"options\":[\"bind\"]}]",
		 true, NULL, "bind of a cgroup below the cgroup2 mount");
	writable("[{\"destination\":\"/s\",\"type\":\"bind\",\"source\":"
		 "\"/sys\",\"options\":[\"rbind\",\"ro\"]}]",
		 true, "recursive bind of /sys", "rbind ro of /sys (not rro)");
	writable("[{\"destination\":\"/s\",\"type\":\"bind\",\"source\":"
		 "\"/sys\",\"options\":[\"rbind\",\"rro\"]}]",
		 false, NULL, "rbind rro of /sys");
	writable("[{\"destination\":\"/s\",\"type\":\"bind\",\"source\":"
		 "\"/sys/fs/cgroup\",\"options\":[\"bind\"]}]",
		 false, NULL,
		 "non-recursive bind of the directory above the cgroup2 mount");
	writable("[{\"destination\":\"/d\",\"type\":\"bind\",\"source\":"
		 "\"/sys/fs/cgroupx\",\"options\":[\"rbind\"]}]",
		 false, NULL, "a name that only starts like the mount");
	writable(
		"[{\"destination\":\"/c\",\"type\":\"bind\",\"source\":\"" CG2
		"\",\"options\":[\"rbind\",\"ro\"]}]",
		false, NULL,
		"recursive ro bind of the cgroup2 mount itself: its own mount is ro");
	writable(
		"[{\"destination\":\"/r\",\"type\":\"bind\",\"source\":"
		"\"/run\",\"options\":[\"rbind\"]}]",
		true,
		"a recursive bind of /run (with the cgroup2 mount /run/cilium/cgroupv2 in it) at /r without \"rro\"",
		"rbind of /run, with a second cgroup2 mount below it");
	writable("[{\"destination\":\"/r\",\"type\":\"bind\",\"source\":"
		 "\"/run\",\"options\":[\"rbind\",\"ro\"]}]",
		 true, "cgroupv2 in it", "rbind ro of /run (not rro)");
	writable("[{\"destination\":\"/r\",\"type\":\"bind\",\"source\":"
		 "\"/run\",\"options\":[\"rbind\",\"rro\"]}]",
		 false, NULL, "rbind rro of /run");
	writable("[{\"destination\":\"/r\",\"type\":\"bind\",\"source\":"
		 "\"/run\",\"options\":[\"bind\"]}]",
		 false, NULL, "non-recursive bind of /run");
	writable("[{\"destination\":\"/t\",\"type\":\"bind\",\"source\":"
		 "\"/tmp/a b\",\"options\":[\"rbind\"]}]",
		 true, "(with the cgroup2 mount /tmp/a b/cg in it)",
		 "rbind of a directory whose name mountinfo escapes");
	writable("[{\"destination\":\"/t\",\"type\":\"bind\",\"source\":"
		 "\"/tmp/a\",\"options\":[\"rbind\"]}]",
		 false, NULL, "rbind of a name that only starts like that one");
	writable("[{\"destination\":\"/sys\",\"type\":\"sysfs\","
		 "\"source\":\"sysfs\"}]",
		 false, NULL, "a fresh sysfs");
}

static void test_cgroupns(void)
{
	struct oci_state st;

	bundle("[]", "[{\"type\":\"pid\"},{\"type\":\"cgroup\"}]", &st);
	ok(bundle_own_cgroupns(&st), "a new cgroup namespace is its own");
	oci_state_free(&st);
	bundle("[]", "[{\"type\":\"cgroup\",\"path\":\"/proc/1/ns/cgroup\"}]",
	       &st);
	ok(!bundle_own_cgroupns(&st), "a joined cgroup namespace is not");
	oci_state_free(&st);
	bundle("[]", "[{\"type\":\"pid\"}]", &st);
	ok(!bundle_own_cgroupns(&st), "no cgroup namespace");
	oci_state_free(&st);
}

/* The choice, with the mountinfo text mi (MI unless said). */
static void choose_in(const char *mi_text, const char *mounts, const char *nss,
		      bool dedicated, bool refuse_shared, int want,
		      const char *why_part, const char *what)
{
	struct sh_config cfg = { .path = "/etc/x.json" };
	struct mountinfo mi = { .text = mi_text };
	struct sh_error err = { 0 };
	struct oci_state st;
	const char *why = err.msg;
	int got;

	cfg.on_shared_cgroup = refuse_shared ? ON_SHARED_CGROUP_REFUSE :
					       ON_SHARED_CGROUP_CREATE;
	bundle(mounts, nss, &st);
	got = cg_choice_decide_in(&cfg, &st, CG2, &mi, "/a", dedicated, &err);
	ok(got == want && (!why_part || strstr(why, why_part)), "%s", what);
	if (why_part && !strstr(why, why_part))
		printf("#   why: %s\n", why);
	oci_state_free(&st);
}

#define choose(...) choose_in(MI, __VA_ARGS__)

#define RW "[{\"destination\":\"/c\",\"type\":\"cgroup2\",\"options\":[]}]"
#define NS "[{\"type\":\"cgroup\"}]"
/* The second mount of the hierarchy (mountinfo's), bound rw. */
#define RW_ONE "{\"destination\":\"/c\",\"type\":\"cgroup2\",\"options\":[]}"
#define BOUND_ONE                                                        \
	"{\"destination\":\"/d\",\"type\":\"bind\",\"source\":\"/run\"," \
	"\"options\":[\"rbind\"]}"
#define BOUND "[" BOUND_ONE "]"

static void test_choice(void)
{
	choose("[]", "[]", true, false, CG_USE_OWN, NULL, "own cgroup: use it");
	choose("[]", "[]", false, false, CG_MAKE_OWN, NULL,
	       "shared cgroup: the hook makes one");
	choose("[]", "[]", false, true, -EPERM,
	       "refusing because on_shared_cgroup is 'refuse' in /etc/x.json",
	       "shared cgroup, on_shared_cgroup refuse: refused");
	choose("[]", "[]", true, true, CG_USE_OWN, NULL,
	       "own cgroup, on_shared_cgroup refuse: used");
	choose(RW, NS, false, false, -EPERM,
	       "could move itself out of a cgroup made by the hook back into /a",
	       "shared cgroup, writable mount, own namespace: refused");
	choose(RW, NS, true, false, CG_USE_OWN, NULL,
	       "own cgroup, writable mount, own namespace: used");
	choose(RW, "[]", true, false, -EPERM,
	       "and no cgroup namespace of its own",
	       "own cgroup, writable mount, no namespace: refused");
	choose(BOUND, "[]", true, false, -EPERM,
	       "(mounts[0], a recursive bind of /run (with the cgroup2 mount /run/cilium/cgroupv2 in it) at /d without \"rro\") and no cgroup namespace of its own",
	       "own cgroup, a second mount of the tree bound, no namespace: refused");
	choose(BOUND, NS, true, false, -EPERM,
	       "its cgroup namespace is no boundary: the cgroup2 hierarchy has no nsdelegate",
	       "own cgroup, the tree bound, own namespace, no nsdelegate: refused");
	choose_in(
		MI_NSDELEGATE, BOUND, NS, true, false, CG_USE_OWN, NULL,
		"own cgroup, the tree bound, own namespace, nsdelegate: used");
	choose_in(
		MI_NSDELEGATE, BOUND, "[]", true, false, -EPERM,
		"no cgroup namespace of its own",
		"own cgroup, the tree bound, nsdelegate, no namespace: refused");
	choose_in(
		MI_NSDELEGATE, BOUND, NS, false, false, -EPERM, "back into /a",
		"shared cgroup, the tree bound, nsdelegate: refused (the namespace's root is the shared cgroup)");
	choose_in(MI, "[" RW_ONE "," BOUND_ONE "]", NS, true, false, -EPERM,
		  "(mounts[1], a recursive bind of /run",
		  "a fresh mount and a bind: the bind is named");
}

static void test_mountinfo(void)
{
	char line[] = "91 1 0:38 /x /tmp/a\\040b\\134c rw shared:1 master:2 - "
		      "cgroup2 none rw,nsdelegate\n";
	char bad[] = "91 1 0:38 / /mnt rw cgroup2 none rw";
	struct mountinfo_entry e;

	ok(mountinfo_parse_line(line, &e) == 0 && !strcmp(e.root, "/x") &&
		   !strcmp(e.mnt, "/tmp/a b\\c") &&
		   !strcmp(e.fstype, "cgroup2") &&
		   !strcmp(e.super_opts, "rw,nsdelegate"),
	   "mountinfo: fields, optional ones skipped, octal escapes undone");
	ok(mountinfo_parse_line(bad, &e) == -EINVAL,
	   "mountinfo: a line without \" - \" is refused");
	ok(mountinfo_has_opt("rw,nsdelegate,memory_recursiveprot",
			     "nsdelegate") &&
		   !mountinfo_has_opt("rw,nsdelegatex", "nsdelegate") &&
		   !mountinfo_has_opt("rw,xnsdelegate", "nsdelegate") &&
		   !mountinfo_has_opt("", "nsdelegate"),
	   "mountinfo: options match whole");
	ok(!mountinfo_cgroup2_nsdelegate(MI) &&
		   mountinfo_cgroup2_nsdelegate(MI_NSDELEGATE),
	   "mountinfo: nsdelegate read from the cgroup2 mounts' super options");
	ok(!mountinfo_cgroup2_nsdelegate(
		   "1 0 0:1 / /x rw - tmpfs t rw,nsdelegate\n"),
	   "mountinfo: nsdelegate of another file system is not cgroup2's");
}

static void setting(const char *text, bool valid, int shared, int override,
		    const char *what)
{
	struct sh_config cfg;
	const char *err;
	int r = parse_config_said(text, &cfg, &err);

	if (!valid) {
		ok(r < 0 && count_lines(err) == 1, "%s: refused, one line",
		   what);
		printf("#   %s", err);
		return;
	}
	ok(r == 0 && (int)cfg.on_shared_cgroup == shared &&
		   (int)cfg.on_override_program == override,
	   "%s", what);
	if (r == 0)
		config_free(&cfg);
}

static void test_settings(void)
{
	setting("{}", true, ON_SHARED_CGROUP_CREATE, ON_OVERRIDE_PROGRAM_REFUSE,
		"defaults: create, refuse");
	setting("{\"on_shared_cgroup\":\"refuse\",\"on_override_program\":\"warn\"}",
		true, ON_SHARED_CGROUP_REFUSE, ON_OVERRIDE_PROGRAM_WARN,
		"refuse, warn");
	setting("{\"on_shared_cgroup\":\"create\",\"on_override_program\":\"refuse\"}",
		true, ON_SHARED_CGROUP_CREATE, ON_OVERRIDE_PROGRAM_REFUSE,
		"create, refuse spelt out");
	setting("{\"on_shared_cgroup\":\"allow\"}", false, 0, 0,
		"on_shared_cgroup 'allow'");
	setting("{\"on_override_program\":true}", false, 0, 0,
		"on_override_program true");
	setting("{\"on_shared_cgroups\":\"refuse\"}", false, 0, 0,
		"misspelt on_shared_cgroup");
}

int main(void)
{
	test_mounts();
	test_cgroupns();
	test_choice();
	test_mountinfo();
	test_settings();
	return tap_done();
}
