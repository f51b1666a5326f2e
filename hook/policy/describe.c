// SPDX-License-Identifier: GPL-2.0-only
/* Rendering an effective policy for `explain`, in JSON and as text. */
#include <stdio.h>
#include <string.h>

#include "config/names.h"
#include "config/render.h"
#include "lib/jsonw.h"
#include "policy/describe.h"

static struct json_object *socket_json(const struct sh_policy *p)
{
	struct json_object *o = json_object_new_object();
	struct json_object *deny = json_object_new_array();

	for (__u32 i = 0; i < p->nr_deny; i++)
		json_object_array_add(deny, render_sock_json(&p->deny[i]));
	json_object_object_add(o, "deny", deny);
	if (p->has_mark)
		jsonw_int(o, "mark", p->mark);
	if (p->has_priority)
		jsonw_int(o, "priority", p->priority);
	return o;
}

static struct json_object *alias_json(const struct sh_rule_entry *e)
{
	const char *level = names_level_name(e->key.level);
	char text[96];

	if (e->option_name)
		snprintf(text, sizeof(text), "%s %s", level ? level : "?",
			 e->option_name);
	else
		snprintf(text, sizeof(text), "%s %d", level ? level : "?",
			 e->key.optname);
	return json_object_new_string(text);
}

static struct json_object *opt_rule_json(const struct sh_rule_entry *rules,
					 size_t n, size_t i)
{
	struct json_object *o = render_rule_json(&rules[i]), *also;

	also = json_object_new_array();
	for (size_t a = i + 1; a < n; a++)
		if (rules[a].alias_of == (int)i)
			json_object_array_add(also, alias_json(&rules[a]));
	if (json_object_array_length(also))
		json_object_object_add(o, "also", also);
	else
		json_object_put(also);
	return o;
}

/* Aliases are shown with the rule they carry over ("also"). */
static struct json_object *rules_json(const struct sh_rule_entry *rules,
				      size_t n)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		if (rules[i].alias_of < 0)
			json_object_array_add(arr, opt_rule_json(rules, n, i));
	return arr;
}

static struct json_object *programs_json(const struct sh_effective *eff)
{
	struct json_object *arr = json_object_new_array();

	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (policy_needs(eff, k))
			json_object_array_add(
				arr, json_object_new_string(kind_get(k)->name));
	return arr;
}

static void add_policy_parts(struct json_object *o,
			     const struct sh_effective *eff)
{
	const struct sh_policy *p = eff->policy;
	char src[SH_SOURCE_TEXT_MAX];
	struct json_object *pol = json_object_new_object();

	policy_source_text(eff, false, src, sizeof(src));
	jsonw_str(pol, "name", p->name);
	jsonw_str(pol, "source", src);
	json_object_object_add(o, "policy", pol);
	if (p->nr_deny || p->has_mark || p->has_priority)
		json_object_object_add(o, "socket", socket_json(p));
	if (p->nr_set || p->default_deny) {
		jsonw_str(o, "setsockopt_default",
			  p->default_deny ? "deny" : "allow");
		json_object_object_add(o, "setsockopt",
				       rules_json(p->set_rules, p->nr_set));
	}
	if (p->nr_get)
		json_object_object_add(o, "getsockopt",
				       rules_json(p->get_rules, p->nr_get));
}

/* Audit mode, when a policy or an annotation set the mode. */
static void add_mode(struct json_object *o, const struct sh_effective *eff)
{
	struct json_object *mode = json_object_new_object();
	char src[SH_SOURCE_TEXT_MAX];

	policy_mode_source_text(eff, src, sizeof(src));
	jsonw_str(mode, "value", policy_mode_name(eff));
	jsonw_str(mode, "source", src);
	json_object_object_add(o, "mode", mode);
}

struct json_object *describe_effective(const struct sh_effective *eff)
{
	struct json_object *o = json_object_new_object();
	struct json_object *bypass = json_object_new_object();
	char src[SH_SOURCE_TEXT_MAX];

	jsonw_bool(o, "sandbox", eff->sandbox);
	if (eff->policy)
		add_policy_parts(o, eff);
	policy_source_text(eff, true, src, sizeof(src));
	jsonw_bool(bypass, "value", eff->bypass);
	jsonw_str(bypass, "source", src);
	json_object_object_add(o, "bypass_prot_mem", bypass);
	if (eff->mode_source != SRC_NONE)
		add_mode(o, eff);
	json_object_object_add(o, "programs", programs_json(eff));
	return o;
}

static void print_rules(const char *title, struct json_object *rules)
{
	size_t n = json_object_array_length(rules);

	printf("%s\n", title);
	for (size_t i = 0; i < n; i++)
		printf("  %s\n",
		       json_object_to_json_string_ext(
			       json_object_array_get_idx(rules, i),
			       JSON_C_TO_STRING_SPACED |
				       JSON_C_TO_STRING_NOSLASHESCAPE));
}

void describe_print_text(struct json_object *desc)
{
	struct json_object *v, *name, *src;

	if (json_object_object_get_ex(desc, "policy", &v) &&
	    json_object_object_get_ex(v, "name", &name) &&
	    json_object_object_get_ex(v, "source", &src))
		printf("policy: %s (from %s)\n", json_object_get_string(name),
		       json_object_get_string(src));
	else
		printf("policy: none\n");
	json_object_object_get_ex(desc, "bypass_prot_mem", &v);
	json_object_object_get_ex(v, "value", &name);
	json_object_object_get_ex(v, "source", &src);
	printf("bypass-prot-mem: %s (from %s)\n", json_object_get_string(name),
	       json_object_get_string(src));
	if (json_object_object_get_ex(desc, "mode", &v) &&
	    json_object_object_get_ex(v, "value", &name) &&
	    json_object_object_get_ex(v, "source", &src))
		printf("mode: %s (from %s)%s\n", json_object_get_string(name),
		       json_object_get_string(src),
		       strcmp(json_object_get_string(name), "audit") ?
			       "" :
			       ": the programs count what they would do and apply nothing");
	if (json_object_object_get_ex(desc, "socket", &v))
		printf("socket: %s\n",
		       json_object_to_json_string_ext(
			       v, JSON_C_TO_STRING_SPACED |
					  JSON_C_TO_STRING_NOSLASHESCAPE));
	if (json_object_object_get_ex(desc, "setsockopt", &v))
		print_rules("setsockopt rules:", v);
	if (json_object_object_get_ex(desc, "getsockopt", &v))
		print_rules("getsockopt rules:", v);
	if (json_object_object_get_ex(desc, "cgroup", &v) &&
	    json_object_object_get_ex(v, "text", &name))
		printf("cgroup: %s\n", json_object_get_string(name));
	json_object_object_get_ex(desc, "programs", &v);
	printf("programs that would attach: %s\n",
	       json_object_array_length(v) ? json_object_to_json_string(v) :
					     "none");
}
