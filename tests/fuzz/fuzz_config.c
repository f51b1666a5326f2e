// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the operator config (parser and policy compiler). A
 * config that parses is resolved against a fixed set of annotations: none,
 * each of its policies by name (pod-wide and container-scoped) and the
 * bypass annotation.
 *
 * Modules: `config*.c`, `policy.c`
 */
#include <stdio.h>

#include "fuzz_common.h"
#include "config/names.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

static void resolve_with(const struct sh_config *cfg, const char *key,
			 const char *value)
{
	struct json_object *root = json_object_new_object();
	struct json_object *ann = json_object_new_object();
	struct oci_state st;
	const char *text;

	if (!root || !ann)
		abort();
	json_object_object_add(root, "id", json_object_new_string("fuzz"));
	json_object_object_add(root, "pid", json_object_new_int(1));
	json_object_object_add(ann, "io.kubernetes.cri.container-name",
			       json_object_new_string("web"));
	if (key)
		json_object_object_add(ann, key, json_object_new_string(value));
	json_object_object_add(root, "annotations", ann);
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	if (oci_parse_state(text, strlen(text), &st, FUZZ_ERR) == 0)
		fuzz_resolve(cfg, &st);
	oci_state_free(&st);
	json_object_put(root);
}

static void assert_rules(const struct sh_rule_entry *rules, size_t n,
			 bool is_get)
{
	FUZZ_ASSERT(n <= SH_MAX_OPT_RULES * (1 + SH_MAX_ALIASES));
	for (size_t i = 0; i < n; i++) {
		const struct sh_opt_rule *r = &rules[i].rule;
		long long min, max;
		__s64 v;

		FUZZ_ASSERT(
			rules[i].alias_of < (int)i &&
			(rules[i].alias_of < 0 ||
			 rules[rules[i].alias_of].rule.action == r->action));
		FUZZ_ASSERT(r->domain <= SH_DOM_PACING &&
			    r->short_read <= SH_SHORT_ZERO &&
			    r->get_form <= SH_GET_STR_NUL);
		names_option_domain_range(r->domain, &min, &max);
		memcpy(&v, r->value, sizeof(v));

		FUZZ_ASSERT(rules[i].key.level >= 0 &&
			    rules[i].key.optname >= 0);
		for (size_t j = 0; j < i; j++)
			FUZZ_ASSERT(rules[j].key.level != rules[i].key.level ||
				    rules[j].key.optname !=
					    rules[i].key.optname);
		FUZZ_ASSERT(r->action <= SH_ACTION_FORCE_BYTES);
		if (is_get)
			FUZZ_ASSERT(r->action != SH_ACTION_ALLOW &&
				    r->action != SH_ACTION_CLAMP);
		if (r->action == SH_ACTION_CLAMP)
			FUZZ_ASSERT(min <= r->min && r->min <= r->max &&
				    r->max <= max);
		if (r->action == SH_ACTION_FORCE_INT)
			FUZZ_ASSERT(r->value_len == sizeof(__s64) && min <= v &&
				    v <= max);
		if (r->action == SH_ACTION_FORCE_BYTES)
			FUZZ_ASSERT(r->value_len >= 1 &&
				    r->value_len < SH_OPT_VALUE_MAX &&
				    !memchr(r->value, 0, r->value_len));
	}
}

/* What an accepted config compiles to is within the programs' limits. */
static void assert_config(const struct sh_config *cfg)
{
	fuzz_assert_no_nul(cfg->root);
	if (cfg->default_policy)
		FUZZ_ASSERT(config_find_policy(cfg, cfg->default_policy));
	for (size_t i = 0; i < cfg->nr_allowed; i++)
		FUZZ_ASSERT(config_find_policy(cfg, cfg->allowed_policies[i]));
	for (size_t i = 0; i < cfg->nr_policies; i++) {
		const struct sh_policy *p = &cfg->policies[i];

		FUZZ_ASSERT(p->name && *p->name && strlen(p->name) <= 64);
		FUZZ_ASSERT(p->nr_deny <= SH_MAX_SOCKET_RULES);
		for (__u32 j = 0; j < p->nr_deny; j++)
			FUZZ_ASSERT(p->deny[j].family != SH_ANY ||
				    p->deny[j].type != SH_ANY ||
				    p->deny[j].protocol != SH_ANY);
		assert_rules(p->set_rules, p->nr_set, false);
		assert_rules(p->get_rules, p->nr_get, true);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sh_config cfg;

	/* config_load() refuses more than this before parsing. */
	if (size > SH_MAX_FILE_SIZE)
		return 0;
	if (config_parse("/fuzz/config.json", (const char *)data, size, &cfg,
			 FUZZ_ERR))
		return 0;
	assert_config(&cfg);
	config_policy_allowed(&cfg, "restricted");
	resolve_with(&cfg, NULL, NULL);
	resolve_with(&cfg, SH_ANNOTATION_BYPASS, "true");
	resolve_with(&cfg, SH_ANNOTATION_BYPASS ".web", "false");
	for (size_t i = 0; i < cfg.nr_policies && i < 16; i++) {
		const char *name = cfg.policies[i].name;

		config_find_policy(&cfg, name);
		resolve_with(&cfg, SH_ANNOTATION_POLICY, name);
		resolve_with(&cfg, SH_ANNOTATION_POLICY ".web", name);
	}
	config_free(&cfg);
	return 0;
}
