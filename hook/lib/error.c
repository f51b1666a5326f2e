// SPDX-License-Identifier: GPL-2.0-only
/* Errors passed up, reported once (see error.h). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lib/error.h"
#include "lib/log.h"

static int set_v(struct sh_error *err, int code, int show_errno,
		 const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static int set_v(struct sh_error *err, int code, int show_errno,
		 const char *fmt, va_list ap)
{
	size_t used;

	if (err->code)
		return code;
	err->code = code;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	used = strlen(err->msg);
	if (show_errno && used < sizeof(err->msg))
		snprintf(err->msg + used, sizeof(err->msg) - used, ": %s",
			 strerror(-code));
	return code;
}

int error_set(struct sh_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_v(err, code, 0, fmt, ap);
	va_end(ap);
	return code;
}

int error_errno(struct sh_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_v(err, code, 1, fmt, ap);
	va_end(ap);
	return code;
}

int error_at(struct sh_error *err, const char *path, const char *fmt, ...)
{
	va_list ap;

	if (!err->code)
		snprintf(err->path, sizeof(err->path), "%s", path);
	va_start(ap, fmt);
	set_v(err, -EINVAL, 0, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void error_note(struct sh_error *err, const char *fmt, ...)
{
	size_t used = strlen(err->msg);
	va_list ap;

	if (used + 3 >= sizeof(err->msg))
		return;
	memcpy(err->msg + used, "; ", 3);
	used += 2;
	va_start(ap, fmt);
	vsnprintf(err->msg + used, sizeof(err->msg) - used, fmt, ap);
	va_end(ap);
}

const char *error_text(const struct sh_error *err, int code)
{
	if (err->msg[0])
		return err->msg;
	return strerror(code < 0 ? -code : code);
}

void error_report(const struct sh_error *err, int code)
{
	log_error("%s", error_text(err, code));
}

void error_reason(struct sh_error *err, enum sh_reason reason)
{
	if (!err->reason)
		err->reason = reason;
}

void error_cause(struct sh_error *err, const char *annotation,
		 const char *setting)
{
	struct sh_cause *c = &err->cause;

	if (c->annotation[0] || c->setting[0])
		return;
	snprintf(c->annotation, sizeof(c->annotation), "%s",
		 annotation ? annotation : "");
	snprintf(c->setting, sizeof(c->setting), "%s", setting ? setting : "");
}

const char *error_reason_text(const struct sh_error *err)
{
	return error_reason_token(err->reason) ?: SH_REASON_ERROR;
}

/* The reason tokens' table (see error.h). */

static const struct reason_info reasons[SH_REASONS] = {
#define SH_REASON_ROW(name, token, event, status, meaning) \
	[SH_REASON_##name] = { token, event, status, meaning },
	SH_REASON_TABLE(SH_REASON_ROW)
#undef SH_REASON_ROW
};

const struct reason_info *error_reason_info(enum sh_reason reason)
{
	if (reason <= SH_REASON_NONE || reason >= SH_REASONS)
		return NULL;
	return &reasons[reason];
}

const char *error_reason_token(enum sh_reason reason)
{
	const struct reason_info *r = error_reason_info(reason);

	return r ? r->token : NULL;
}
