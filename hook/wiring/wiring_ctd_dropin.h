/* SPDX-License-Identifier: GPL-2.0-only */
/* containerd's drop-in: its document, checked against containerd itself. */
#ifndef SH_WIRING_CTD_DROPIN_H
#define SH_WIRING_CTD_DROPIN_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

struct ctd;
struct json_object;
struct wiring_plan;

/* The drop-in's document: the handlers made from rt, the default
 * handler's section of c->before (see wiring_ctd.c for its shape). */
int wiring_ctd_dropin_build(const struct ctd *c, struct json_object *rt,
			    struct json_object **doc, struct sh_error *err);
/* Its text, checked with `containerd config dump` (our handlers and
 * nothing else change), into plan. */
int wiring_ctd_dropin_plan(const struct ctd *c, struct json_object *doc,
			   struct wiring_plan *plan, struct sh_error *err);

/* `containerd config dump` with text as c's drop-in, into *after (the
 * drop-in's directory made for the view; a dry run where it is missing:
 * a note, *after NULL). */
int wiring_ctd_dropin_try(const struct ctd *c, const char *text,
			  struct wiring_plan *plan, struct json_object **after,
			  struct sh_error *err);

#endif /* SH_WIRING_CTD_DROPIN_H */
