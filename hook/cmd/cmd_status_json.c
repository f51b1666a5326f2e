// SPDX-License-Identifier: GPL-2.0-only
/*
 * `status --json`: each container's record as it is written, with what the
 * kernel has now (live, counters, audit mode's would-have counters) and
 * what enforces what (status_view.c).
 */
#include <errno.h>

#include "cmd/commands.h"
#include "lib/cleanup.h"
#include "lib/jsonw.h"
#include "observe/audit_mode.h"
#include "observe/caveats.h"
#include "observe/status_view.h"

static struct json_object *exec_json(const struct sh_record *rec)
{
	struct json_object *o = json_object_new_object();
	struct caveats_input in = { .rec = rec, .live = true };
	struct caveats cav;

	jsonw_bool(o, "policed", !rec->cg.created);
	if (rec->cg.created) {
		caveats_collect(&in, &cav);
		jsonw_str(o, "note", cav.c[0].text);
	}
	return o;
}

static struct json_object *counters_json(const struct sh_counters *c)
{
	struct json_object *o = json_object_new_object();

	for (int i = 0; i < SH_CNT_MAX; i++)
		json_object_object_add(o, counters_names[i],
				       json_object_new_int64((int64_t)c->v[i]));
	return o;
}

int cmd_status_json(const struct status_view_row *rows, size_t nr,
		    const struct status_view_rules *rules)
{
	_cleanup_json_ struct json_object *list = json_object_new_array();

	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		struct json_object *o = state_record_to_json(&rows[i].rec);

		if (!o)
			return -ENOMEM;
		jsonw_bool(o, "live", rows[i].live);
		json_object_object_add(o, "exec", exec_json(&rows[i].rec));
		json_object_object_add(o, "counters",
				       counters_json(&rows[i].c));
		if (rows[i].wh)
			json_object_object_add(o, "would_have",
					       audit_mode_json(rows[i].wh));
		json_object_object_add(o, "enforcement",
				       status_view_json(rules, &rows[i]));
		json_object_array_add(list, o);
	}
	puts(json_object_to_json_string_ext(
		list,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	return 0;
}
