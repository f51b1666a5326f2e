// SPDX-License-Identifier: GPL-2.0-only
/*
 * `explain`: where prestart would attach, and what that means for the
 * processes a runtime starts later with exec. Read-only: it opens the
 * init's cgroup to look at it, and makes nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_choice.h"
#include "explain_cgroup.h"
#include "log.h"

#define WHY_MAX (PATH_MAX * 4)

static void add_text(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

/* The runtime's pid is known: look at its cgroup. */
static int decide_now(const struct sh_config *cfg, const struct oci_state *st,
		      struct json_object *o, char *why)
{
	char text[WHY_MAX + 256];
	struct cg_root root;
	struct cg_target t;
	bool dedicated;
	int fd, choice;

	if (cg_find_root(&root))
		return -ENOENT;
	fd = cg_locate(&root, st->pid, &t, &dedicated);
	if (fd < 0)
		return fd;
	close(fd);
	choice = cg_choose(cfg, st, root.mount, t.rel, dedicated, why, WHY_MAX);
	add_text(o, "path", t.rel);
	json_object_object_add(o, "hook_creates",
			       json_object_new_boolean(choice == CG_MAKE_OWN));
	json_object_object_add(
		o, "exec_policed",
		choice < 0 ? NULL :
			     json_object_new_boolean(choice == CG_USE_OWN));
	if (choice == CG_USE_OWN)
		snprintf(
			text, sizeof(text),
			"%s, the container's own: the policy attaches there, and processes started with exec join it",
			t.rel);
	else if (choice == CG_MAKE_OWN)
		snprintf(
			text, sizeof(text),
			"%s is not the container's own: the hook would create %s/%s%s and move the init there; processes started with exec stay outside it, NOT policed (on_shared_cgroup \"refuse\" refuses such containers)",
			t.rel, t.rel[1] ? t.rel : "", SH_CGROUP_PREFIX, st->id);
	else
		snprintf(text, sizeof(text), "%s: prestart would refuse",
			 t.rel);
	add_text(o, "text", text);
	return choice < 0 ? choice : 0;
}

/* Only the bundle: say what prestart decides, either way. */
static int decide_later(const struct sh_config *cfg, const struct oci_state *st,
			struct json_object *o, char *why)
{
	char make_why[WHY_MAX], text[WHY_MAX + 512];
	const char *mount = "/sys/fs/cgroup";
	struct cg_root root;
	int own, make;

	if (cg_find_root(&root) == 0)
		mount = root.mount;
	own = cg_choose(cfg, st, mount, "<cgroup>", true, why, WHY_MAX);
	make = cg_choose(cfg, st, mount, "<cgroup>", false, make_why,
			 sizeof(make_why));
	add_text(o, "path", NULL);
	add_text(o, "hook_creates", NULL);
	add_text(o, "exec_policed", NULL);
	snprintf(
		text, sizeof(text),
		"decided at prestart: in a cgroup the runtime made for the container, %s; in one it shares (a runtime without a cgroup manager), %s%s",
		own < 0 ?
			"prestart would refuse" :
			"the policy attaches there, and processes started with exec join it",
		make < 0 ?
			"prestart would refuse: " :
			"the hook creates <cgroup>/" SH_CGROUP_PREFIX
			"<id> and moves the init there, and processes started with exec are NOT policed",
		make < 0 ? make_why : "");
	add_text(o, "text", text);
	return own < 0 && make < 0 ? -EPERM : 0;
}

int explain_cgroup(const struct sh_config *cfg, const struct oci_state *st,
		   struct json_object *desc)
{
	struct json_object *o = json_object_new_object();
	char why[WHY_MAX];
	int r;

	why[0] = '\0';
	r = st->pid > 0 ? decide_now(cfg, st, o, why) :
			  decide_later(cfg, st, o, why);
	json_object_object_add(desc, "cgroup", o);
	if (r == -EPERM)
		log_error("%s", why);
	return r;
}
