// SPDX-License-Identifier: GPL-2.0-only
/*
 * error.c: an error is set once, by the function that knows what failed,
 * and reported once as one line; notes add to it; the reason token and the
 * cause keep the first value given. error.c: every reason has one row,
 * its token a stable label (at most 39 of [a-z_], unique, not "error").
 *
 * Modules: `error.c`
 */
#include <errno.h>
#include <string.h>

#include "lib/error.h"
#include "helpers.h"
#include "tap.h"

static void test_first_wins(void)
{
	struct sh_error err = { 0 };

	ok(error_set(&err, -EINVAL, "first %d", 1) == -EINVAL,
	   "error_set returns its code");
	ok(error_set(&err, -EPERM, "second") == -EPERM,
	   "a second error_set returns its own code...");
	ok(err.code == -EINVAL && !strcmp(err.msg, "first 1"),
	   "... but the first message and code stay");
	is_str(error_text(&err, -EPERM), "first 1",
	       "error_text: the message, whatever code is asked");
}

static void test_errno(void)
{
	struct sh_error err = { 0 };

	ok(error_errno(&err, -ENOENT, "cannot open %s", "x") == -ENOENT,
	   "error_errno returns its code");
	is_str(err.msg, "cannot open x: No such file or directory",
	       "and appends strerror");
}

static void test_at(void)
{
	struct sh_error err = { 0 };

	ok(error_at(&err, "policies.a.rules[0]", "bad %s", "value") == -EINVAL,
	   "error_at is -EINVAL");
	is_str(err.path, "policies.a.rules[0]", "it keeps the path");
	error_at(&err, "other", "later");
	is_str(err.path, "policies.a.rules[0]", "the first path stays");
}

static void test_note(void)
{
	struct sh_error err = { 0 };
	char big[SH_ERROR_MSG_MAX + 10];

	error_set(&err, -EINVAL, "refused");
	error_note(&err, "hint %s", "one");
	error_note(&err, "two");
	is_str(err.msg, "refused; hint one; two", "notes follow after '; '");

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memset(&err, 0, sizeof(err));
	error_set(&err, -EINVAL, "%s", big);
	ok(strlen(err.msg) == SH_ERROR_MSG_MAX - 1,
	   "a message longer than the buffer is cut, NUL-terminated");
	error_note(&err, "lost");
	ok(strlen(err.msg) == SH_ERROR_MSG_MAX - 1 && !strstr(err.msg, "lost"),
	   "a note on a full message is dropped, not overflowed");
}

static void test_text_and_report(void)
{
	struct sh_error err = { 0 };
	const char *said;

	is_str(error_text(&err, -EACCES), "Permission denied",
	       "no message: strerror of the code");
	is_str(error_text(&err, EACCES), "Permission denied",
	       "a positive code too");
	capture_start();
	error_report(&err, -ENOMEM);
	said = capture_end();
	is_str(said, "oci-sockopt-hook: Cannot allocate memory\n",
	       "error_report: one line on stderr");
	error_set(&err, -EPERM, "refused: %s", "why");
	capture_start();
	error_report(&err, -EPERM);
	said = capture_end();
	ok(count_lines(said) == 1 && strstr(said, "refused: why"),
	   "error_report: the message, once");
}

static void test_reason_and_cause(void)
{
	struct sh_error err = { 0 };

	is_str(error_reason_text(&err), "error", "no reason: \"error\"");
	error_reason(&err, SH_REASON_POLICY_UNKNOWN);
	error_reason(&err, SH_REASON_CONFIG_INVALID);
	is_str(error_reason_text(&err), "policy_unknown",
	       "the first reason stays");
	error_cause(&err, "sockopt-hook.io/policy", "nope");
	error_cause(&err, "other", "x");
	ok(!strcmp(err.cause.annotation, "sockopt-hook.io/policy") &&
		   !strcmp(err.cause.setting, "nope"),
	   "the first cause stays");
	memset(&err, 0, sizeof(err));
	error_cause(&err, NULL, "on_shared_cgroup=refuse");
	ok(!err.cause.annotation[0] &&
		   !strcmp(err.cause.setting, "on_shared_cgroup=refuse"),
	   "a cause with no annotation: the operator setting");
	error_cause(&err, "late", NULL);
	ok(!err.cause.annotation[0], "... which then stays too");
}

static void test_reason_table(void)
{
	int bad = 0;

	ok(!error_reason_info(SH_REASON_NONE) &&
		   !error_reason_token(SH_REASON_NONE) &&
		   !error_reason_info(SH_REASONS),
	   "SH_REASON_NONE and out of range: no row");
	for (int r = SH_REASON_NONE + 1; r < SH_REASONS; r++) {
		const struct reason_info *i = error_reason_info(r);
		size_t n = i && i->token ? strlen(i->token) : 0;

		if (!n || n > 39 ||
		    strspn(i->token, "abcdefghijklmnopqrstuvwxyz_") != n ||
		    !strcmp(i->token, SH_REASON_ERROR) || !i->event[0] ||
		    !i->status[0] || !i->meaning[0]) {
			tap_diag("reason %d: bad row", r);
			bad++;
		}
		for (int o = SH_REASON_NONE + 1; i && o < r; o++)
			if (!strcmp(error_reason_token(o), i->token)) {
				tap_diag("reason %d: token %s twice", r,
					 i->token);
				bad++;
			}
	}
	is_int(bad, 0, "every reason: a row, a token of [a-z_] (1-39), unique");
	is_str(error_reason_token(SH_REASON_AUDIT_MODE_NOT_ALLOWED),
	       "audit_mode_not_allowed", "a token by its name");
}

int main(void)
{
	test_first_wins();
	test_errno();
	test_at();
	test_note();
	test_text_and_report();
	test_reason_and_cause();
	test_reason_table();
	return tap_done();
}
