/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_NAMES_H
#define SH_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "sockopt_hook.h"

int names_level(const char *name, int *level);
const char *names_level_name(int level);
int names_family(const char *name, int *value);
int names_type(const char *name, int *value);
int names_protocol(const char *name, int *value);
const char *names_family_name(int value);
const char *names_type_name(int value);
const char *names_protocol_name(int value);
/* Nearest known option or level name, for "did you mean" hints. */
const char *names_suggest(const char *name);
const char *names_closest(const char *name, const char *const *cands);
/* A record name (record mode): [A-Za-z0-9._-], 1 to 64, no leading dot. */
bool names_record_ok(const char *name);

#define SOL_UDPLITE_LEVEL 136

enum opt_kind {
	OPT_INT,
	OPT_STRING,
	OPT_OTHER, /* a struct, or an int that is not a quantity: deny only */
	OPT_UNKNOWN, /* given as a number: the operator knows best */
};

/*
 * One socket option as the kernel handler that consumes it treats it:
 * the domain says how the int it reads becomes the state it keeps.
 */
struct sh_option_name {
	const char *name;
	int level;
	int optname;
	enum opt_kind kind;
	enum sh_domain domain;
	int special; /* SH_DOM_NEG_TO / SH_DOM_M1_TO: what the value means */
	bool read_only; /* the kernel has no setter */
};

/* Another (level, option) the kernel routes to the same state. */
struct sh_option_alias {
	struct sh_opt_key key;
	bool deny_only; /* a different kind of value: only a deny carries */
};

#define SH_MAX_ALIASES 2

/* A name must belong to the level; a number is accepted for any level. */
int names_option_find(int level, const char *name,
		      const struct sh_option_name **opt);
const struct sh_option_name *names_option_by_value(int level, int optname);
size_t names_option_count(void);
const struct sh_option_name *names_option_at(size_t i);
/* What the kernel makes of a setsockopt optlen below sizeof(int). */
enum sh_short_read names_option_short_read(const struct sh_option_name *opt);
enum sh_get_form names_option_get_form(const struct sh_option_name *opt);
/* The clamp/force range of a domain, in the kernel's terms. */
void names_option_domain_range(enum sh_domain domain, long long *min,
			       long long *max);
size_t names_option_aliases(const struct sh_opt_key *key,
			    struct sh_option_alias out[SH_MAX_ALIASES]);

#endif /* SH_NAMES_H */
