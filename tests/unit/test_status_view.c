// SPDX-License-Identifier: GPL-2.0-only
/*
 * status_view.c, status's "enforcement" object for one container, from a
 * record and the kernel's view of its cgroup built here by hand (what
 * status_view_drift_query() would have found): the programs with their recorded and
 * attached ids and state, the rules each enforces under the config as it
 * is now (or why they are unknown), the bypass, the caveats and the drift
 * lines; a cgroup that is gone, or could not be queried.
 *
 * Modules: `status_view.c`
 */
#include <errno.h>
#include <string.h>

#include "observe/status_view.h"
#include "helpers.h"
#include "tap.h"

static struct status_view_rules rules;

static void row_of(struct status_view_row *row, const char *policy)
{
	memset(row, 0, sizeof(*row));
	strcpy(row->att.id, "c1");
	snprintf(row->att.policy, sizeof(row->att.policy), "%s", policy);
	strcpy(row->att.cg.rel, "/test/c1");
	row->att.pid = 42;
	row->att.progs.nr = 1;
	row->att.progs.prog[0].type = BPF_CGROUP_SETSOCKOPT;
	row->att.progs.prog[0].id = 11;
	strcpy(row->att.progs.prog[0].name, "sh_setsockopt");
	row->live = true;
	status_view_drift_init(&row->att, &row->drift);
	/* the kernel's view: the recorded program, alone */
	row->drift.kind[SH_PROG_SET].nr_ours = 1;
	row->drift.kind[SH_PROG_SET].ours[0] = 11;
}

static void test_attached(void)
{
	struct status_view_row row;
	struct json_object *o;

	row_of(&row, "setonly");
	o = status_view_json(&rules, &row);
	is_str(json_path(o, "programs.0.attach"), "setsockopt",
	       "programs: setsockopt");
	is_str(json_path(o, "programs.0.bpf_attach_type"), "cgroup_setsockopt",
	       "... libbpf's name for its type");
	is_str(json_path(o, "programs.0.cgroup"), "/test/c1",
	       "... on the container's cgroup");
	is_str(json_path(o, "programs.0.recorded_id"), "11",
	       "... recorded id 11");
	is_str(json_path(o, "programs.0.attached_ids"), "[11]",
	       "... attached: 11");
	is_str(json_path(o, "programs.0.state"), "attached",
	       "... state attached");
	is_str(json_path(o, "programs.0.enforces"),
	       "default allow: deny SOL_SOCKET SO_MARK",
	       "... what it enforces under the config now");
	ok(json_path(o, "programs.1") == NULL,
	   "only kinds that are recorded or attached are shown");
	is_str(json_path(o, "rules.policy"), "setonly", "rules: the policy");
	is_str(json_path(o, "rules.setsockopt"),
	       "default allow: deny SOL_SOCKET SO_MARK", "rules: per program");
	ok(json_path(o, "rules_error") == NULL, "no rules_error");
	is_str(json_path(o, "bypass"), "not_asked", "bypass not asked");
	is_str(json_path(o, "drift"), "[]", "no drift");
	json_object_put(o);
}

static void test_drift(void)
{
	struct status_view_row row;
	struct json_object *o;

	row_of(&row, "setonly");
	row.drift.kind[SH_PROG_SET].ours[0] = 99;
	row.drift.kind[SH_PROG_GET].nr_ours = 1;
	row.drift.kind[SH_PROG_GET].ours[0] = 77;
	o = status_view_json(&rules, &row);
	is_str(json_path(o, "programs.0.state"), "replaced",
	       "another program of ours in its place: replaced");
	is_str(json_path(o, "programs.1.attach"), "getsockopt",
	       "an attached kind the record lacks is shown");
	is_str(json_path(o, "programs.1.state"), "unrecorded",
	       "... as unrecorded");
	is_str(json_path(o, "programs.1.recorded_id"), "null",
	       "... with no recorded id");
	ok(json_object_array_length(json_object_object_get(o, "drift")) == 2,
	   "two drift lines (%s)", json_path(o, "drift"));
	json_object_put(o);

	row_of(&row, "setonly");
	row.drift.kind[SH_PROG_SET].nr_ours = 0;
	o = status_view_json(&rules, &row);
	is_str(json_path(o, "programs.0.state"), "missing",
	       "nothing attached: missing");
	ok(strstr(json_path(o, "drift.0"), "/test/c1") != NULL,
	   "the drift line names the cgroup: %s", json_path(o, "drift.0"));
	json_object_put(o);

	row_of(&row, "setonly");
	row.live = false;
	o = status_view_json(&rules, &row);
	is_str(json_path(o, "programs.0.state"), "cgroup_gone",
	       "a cgroup that is gone");
	is_str(json_path(o, "drift"), "[]", "... has no drift lines");
	json_object_put(o);

	row_of(&row, "setonly");
	row.drift_err = -EACCES;
	o = status_view_json(&rules, &row);
	is_str(json_path(o, "programs.0.state"), "unknown",
	       "a cgroup that cannot be queried: unknown");
	is_str(json_path(o, "drift.0"),
	       "cannot query /test/c1: Permission denied", "... and says why");
	json_object_put(o);
}

static void test_rules_unknown(void)
{
	struct status_view_rules broken = { .cfg_ok = false };
	struct status_view_row row;
	struct json_object *o;

	row_of(&row, "gone-policy");
	o = status_view_json(&rules, &row);
	is_str(json_path(o, "rules"), "null",
	       "a policy no longer in the config: rules null");
	ok(strstr(json_path(o, "rules_error"),
		  "policy 'gone-policy' is no longer in") != NULL,
	   "... and rules_error says so");
	is_str(json_path(o, "programs.0.enforces"), "null",
	       "... enforces null");
	json_object_put(o);

	strcpy(broken.cfg_error, "cannot open /etc/x.json");
	row_of(&row, "setonly");
	o = status_view_json(&broken, &row);
	is_str(json_path(o, "rules_error"),
	       "the operator config cannot be read: cannot open /etc/x.json",
	       "an unreadable config: rules unknown, with why");
	json_object_put(o);

	row_of(&row, "");
	o = status_view_json(&rules, &row);
	ok(json_path(o, "rules_error") == NULL &&
		   strcmp(json_path(o, "rules"), "null"),
	   "no named policy: rules known (none)");
	json_object_put(o);
}

static void test_bypass(void)
{
	struct status_view_row row;
	struct json_object *o;

	row_of(&row, "bulk");
	row.att.bypass = true;
	o = status_view_json(&rules, &row);
	is_str(json_path(o, "bypass"), "fell_back",
	       "bypass asked, not active: fell_back");
	json_object_put(o);
	row.att.progs.bypass_active = true;
	o = status_view_json(&rules, &row);
	is_str(json_path(o, "bypass"), "applied", "asked and active: applied");
	json_object_put(o);
}

int main(void)
{
	struct sh_error err = { 0 };

	rules.cfg_ok =
		reported(config_load(EXAMPLES "/config.json", &rules.cfg, &err),
			 &err) == 0;
	if (!rules.cfg_ok)
		return tap_done();
	test_attached();
	test_drift();
	test_rules_unknown();
	test_bypass();
	config_free(&rules.cfg);
	return tap_done();
}
