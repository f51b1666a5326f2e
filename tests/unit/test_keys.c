// SPDX-License-Identifier: GPL-2.0-only
/*
 * keys.c without touching the host's static keys: the cgroup's name (the
 * default, the environment's, and names that would leave the cgroup2
 * mount refused before anything is opened), a query and a keep-nothing
 * when the cgroup does not exist, and the kinds kept as text. Attaching
 * the keys' programs turns host-wide static keys on and off, which
 * `make bench` measures: that part runs in 45-preload.sh, under the
 * tests' lock. (A trailing slash, "a/", names the same cgroup as "a":
 * it is let through.)
 *
 * Modules: `keys.c`
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/context.h"
#include "lib/error.h"
#include "prog/keys.h"
#include "tap.h"

static void test_name(void)
{
	context_set(&(struct sh_context){ 0 });
	is_str(keys_cgroup(), SH_KEYS_CGROUP, "no environment: the default");
	context_set(&(struct sh_context){ .keys_cgroup = "" });
	is_str(keys_cgroup(), SH_KEYS_CGROUP, "an empty one: the default");
	context_set(&(struct sh_context){ .keys_cgroup = "a/b" });
	is_str(keys_cgroup(), "a/b", "else the environment's");
	ok(strncmp(SH_KEYS_CGROUP, "oci-sockopt-hook-", 17) != 0,
	   "the default is no name a container's cgroup gets");
}

/* A name that would leave the mount: -EINVAL from query and keep, before
 * anything on the host is looked at, and one line naming it. */
static void test_refused(void)
{
	static const char *const bad[] = {
		"/sys/fs/cgroup/x",
		"..",
		"../x",
		"a/../../x",
		"a/./b",
		".",
		"a//b",
		"a/..",
	};
	/* Nothing wanted: were a name let through by mistake, a missing
	 * cgroup stays missing (wanting kinds would make it and attach). */
	const bool want[SH_PROG_KINDS] = { false };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sh_error err = { 0 };
		struct keys_state st;

		context_set(&(struct sh_context){ .keys_cgroup = bad[i] });
		ok(keys_query(&st, &err) == -EINVAL &&
			   strstr(err.msg, "not a relative path below") &&
			   strstr(err.msg, bad[i]) && !st.cgroup[0],
		   "query refuses keys cgroup '%s' (%s)", bad[i], err.msg);
		memset(&err, 0, sizeof(err));
		ok(keys_keep(want, &st, &err) == -EINVAL && !st.cgroup[0] &&
			   !st.kept[SH_PROG_SOCK],
		   "keep refuses it too, keeping nothing");
	}
}

/* A cgroup of this run's own name that nobody made. */
static void test_absent(void)
{
	const bool none[SH_PROG_KINDS] = { false };
	struct sh_error err = { 0 };
	struct keys_state st;
	char name[64];

	snprintf(name, sizeof(name), "oci-sockopt-hook.unit-keys-%d/absent",
		 (int)getpid());
	context_set(&(struct sh_context){ .keys_cgroup = name });
	memset(&st, 'x', sizeof(st));
	ok(keys_query(&st, &err) == 0 && !st.cgroup[0] &&
		   !st.kept[SH_PROG_SOCK] && !st.kept[SH_PROG_SET] &&
		   !st.kept[SH_PROG_GET] && !st.populated,
	   "query of a missing cgroup: none, no path (%s)",
	   err.code ? err.msg : "no error");
	memset(&st, 'x', sizeof(st));
	ok(keys_keep(none, &st, &err) == 0 && !st.cgroup[0] && !err.code,
	   "keeping nothing where there is no cgroup: nothing to do");
	ok(keys_keep(none, &st, &err) == 0,
	   "... and again (a second preload with keep_keys off)");
}

static void test_text(void)
{
	struct keys_state st = { 0 };
	char buf[64], small[12];

	keys_text(&st, buf, sizeof(buf));
	is_str(buf, "none", "nothing kept: none");
	st.kept[SH_PROG_SET] = true;
	keys_text(&st, buf, sizeof(buf));
	is_str(buf, "setsockopt", "one kind: its name");
	st.kept[SH_PROG_SOCK] = st.kept[SH_PROG_GET] = true;
	keys_text(&st, buf, sizeof(buf));
	is_str(buf, "sock_create, setsockopt, getsockopt",
	       "all three, in the kinds' order");
	keys_text(&st, small, sizeof(small));
	ok(strlen(small) == sizeof(small) - 1 &&
		   !strncmp(small, "sock_create", sizeof(small) - 1),
	   "a short buffer: cut, NUL-terminated ('%s')", small);
}

int main(void)
{
	test_name();
	test_refused();
	test_absent();
	test_text();
	context_set(&(struct sh_context){ 0 });
	return tap_done();
}
