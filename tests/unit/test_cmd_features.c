// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kubernetes label keys and values, as `features` checks them.
 *
 * Modules: `cmd_features.c`
 */
#include <string.h>

#include "cmd/commands.h"
#include "tap.h"

#define N63 "a123456789b123456789c123456789d123456789e123456789f123456789xyz"

static void test_keys(void)
{
	static const char *const good[] = {
		"sockopt-hook.io/installed",
		"sockopt-hook.io/policy.restricted",
		"sockopt-hook.io/policy.My_Policy.2",
		"installed",
		"a.b-c.d/x",
		"sockopt-hook.io/" N63,
	};
	static const char *const bad[] = {
		"",
		"sockopt-hook.io/",
		"/installed",
		"sockopt-hook.io/policy.trailing_",
		"sockopt-hook.io/-lead",
		"sockopt-hook.io/" N63 "x",
		"Sockopt-hook.io/x",
		"sockopt-hook..io/x",
		"sockopt-hook.io-/x",
		"a/b/c",
		"sockopt-hook.io/pol icy",
		"sockopt-hook.io/pol\xc3\xa9",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok(cmd_features_label_valid(good[i]), "valid key '%s'",
		   good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(!cmd_features_label_valid(bad[i]), "invalid key '%s'",
		   bad[i]);
}

static void test_prefix_length(void)
{
	char key[300];

	/* 253 bytes of prefix: five 50-byte labels and "abc". */
	memset(key, 'a', sizeof(key));
	for (int i = 50; i < 253; i += 51)
		key[i] = '.';
	strcpy(key + 253, "/x");
	ok(cmd_features_label_valid(key), "a 253-byte prefix");
	key[253] = 'a';
	strcpy(key + 254, "/x");
	ok(!cmd_features_label_valid(key), "a 254-byte prefix");
}

static void test_values(void)
{
	ok(cmd_features_label_value_valid("true") &&
		   cmd_features_label_value_valid("false") &&
		   cmd_features_label_value_valid(""),
	   "true, false and empty are label values");
	ok(!cmd_features_label_value_valid("a b") &&
		   !cmd_features_label_value_valid("x/y") &&
		   !cmd_features_label_value_valid(N63 "x"),
	   "a space, a slash, 64 bytes are not");
}

int main(void)
{
	test_keys();
	test_prefix_length();
	test_values();
	return tap_done();
}
