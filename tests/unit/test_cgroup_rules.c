// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cgroup rules that need no kernel: which bundle mounts let a
 * container write to its cgroup membership, which containers get a cgroup
 * namespace of their own, the choice between the container's own cgroup,
 * one the hook makes, and a refusal, and the two operator settings.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "cgroup/cg_choice.h"
#include "config/config.h"
#include "input/bundle.h"
#include "helpers.h"
#include "input/oci.h"
#include "tap.h"

#define CG2 "/sys/fs/cgroup/unified"

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
	if (bundle(mounts, "[]", &st) == 0)
		got = bundle_writable_cgroup_mount(&st, CG2, why, sizeof(why));
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
		 true, "a bind of " CG2 " at /c", "bind of the cgroup2 mount");
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

static void choose(const char *mounts, const char *nss, bool dedicated,
		   bool refuse_shared, int want, const char *why_part,
		   const char *what)
{
	struct sh_config cfg = { .path = "/etc/x.json" };
	struct sh_error err = { 0 };
	struct oci_state st;
	const char *why = err.msg;
	int got;

	cfg.on_shared_cgroup = refuse_shared ? ON_SHARED_CGROUP_REFUSE :
					       ON_SHARED_CGROUP_CREATE;
	bundle(mounts, nss, &st);
	got = cg_choice_decide(&cfg, &st, CG2, "/a", dedicated, &err);
	ok(got == want && (!why_part || strstr(why, why_part)), "%s", what);
	if (why_part && !strstr(why, why_part))
		printf("#   why: %s\n", why);
	oci_state_free(&st);
}

#define RW "[{\"destination\":\"/c\",\"type\":\"cgroup2\",\"options\":[]}]"
#define NS "[{\"type\":\"cgroup\"}]"

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
	test_settings();
	return tap_done();
}
