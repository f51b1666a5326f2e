// SPDX-License-Identifier: GPL-2.0-only
/*
 * The variants a config can produce are exactly what policy_resolve() can
 * choose: the default policy (or none) and each policy annotations may
 * ask for, each with the bypass setting it gets from the policy or the
 * defaults, and the other one too when annotations may set it; each in
 * its policy's mode, and the other one too when annotations may set it;
 * and the pod sandboxes' sandbox_policy. Then the generic programs
 * (generic.h), which no config names: a policy not preloaded yet starts
 * on them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/log.h"
#include "prog/generic.h"
#include "prog/load.h"
#include "prog/pin.h"
#include "prog/preload.h"

struct pin_key {
	enum sh_prog_kind kind;
	uint64_t hash;
	bool made; /* pinned by this run */
};

struct preload {
	const struct sh_config *cfg;
	int dir;
	bool bypass_ok;
	bool bypass_all; /* the kernel takes the bypass variant (generic) */
	size_t nr, max;
	struct pin_key *keys;
	struct preload_result *res;
};

static struct pin_key *find_key(const struct preload *pl,
				enum sh_prog_kind kind, uint64_t hash)
{
	for (size_t i = 0; i < pl->nr; i++)
		if (pl->keys[i].kind == kind && pl->keys[i].hash == hash)
			return &pl->keys[i];
	return NULL;
}

static int pin_program(struct preload *pl, const struct sh_loaded *l,
		       enum sh_prog_kind kind, struct sh_error *err)
{
	const char *type = kind_get(kind)->name;
	struct pin_key *key;
	int r;

	if (find_key(pl, kind, l->hash[kind]))
		return 0;
	if (pl->nr == pl->max)
		return error_set(err, -E2BIG, "preload: too many programs");
	key = &pl->keys[pl->nr];
	*key = (struct pin_key){ kind, l->hash[kind], false };
	/* load_policy() used the pin only if it verified (progcheck.h): one
	 * that did not is replaced, atomically. */
	if (l->pinned[kind]) {
		pl->res->kept++;
	} else {
		r = pin_add(pl->dir, type, key->hash, l->fd[kind], err);
		if (r)
			return r;
		key->made = true;
		pl->res->pinned++;
	}
	pl->nr++;
	pl->res->programs++;
	return 0;
}

static int preload_mode(struct preload *pl, const struct sh_policy *p,
			bool bypass, bool audit, struct sh_error *err)
{
	struct sh_effective eff = { .policy = p,
				    .bypass = bypass,
				    .audit = audit };
	struct sh_loaded l;
	int r;

	if (policy_is_empty(&eff))
		return 0;
	r = load_policy(&eff, ON_UNSUPPORTED_FAIL, LOAD_SPECIALISED, &l, err);
	for (int k = 0; k < SH_PROG_KINDS && !r; k++)
		if (l.fd[k] >= 0)
			r = pin_program(pl, &l, k, err);
	load_free(&l);
	if (r) {
		error_note(err, "for policy %s (bypass-prot-mem %s, %s mode)",
			   p ? p->name : "(none)", bypass ? "on" : "off",
			   audit ? "audit" : "enforce");
		return r;
	}
	pl->res->policies++;
	return 0;
}

/* The policy's mode, and the other one when annotations may choose it
 * (annotations.allow_audit_mode). */
static int preload_variant(struct preload *pl, const struct sh_policy *p,
			   bool bypass, struct sh_error *err)
{
	bool audit = p && p->audit;
	int r = preload_mode(pl, p, bypass, audit, err);

	if (r || !pl->cfg->allow_audit_mode)
		return r;
	return preload_mode(pl, p, bypass, !audit, err);
}

/* The bypass setting prestart ends with when bypass is asked for. */
static int preload_bypass(struct preload *pl, const struct sh_policy *p,
			  bool bypass, struct sh_error *err)
{
	if (!bypass || pl->bypass_ok)
		return preload_variant(pl, p, bypass, err);
	pl->res->bypass_skipped = true;
	if (pl->cfg->on_unsupported == ON_UNSUPPORTED_WARN)
		return preload_variant(pl, p, /* bypass= */ false, err);
	return 0;
}

static int preload_policy(struct preload *pl, const struct sh_policy *p,
			  struct sh_error *err)
{
	const struct sh_config *cfg = pl->cfg;
	bool bypass = p && p->has_bypass ? p->bypass : cfg->default_bypass;
	int r = preload_bypass(pl, p, bypass, err);

	if (r || !cfg->allow_bypass)
		return r;
	return preload_bypass(pl, p, !bypass, err);
}

static bool bypass_reachable(const struct sh_config *cfg)
{
	if (cfg->default_bypass || cfg->allow_bypass)
		return true;
	for (size_t i = 0; i < cfg->nr_policies; i++)
		if (cfg->policies[i].has_bypass && cfg->policies[i].bypass)
			return true;
	return false;
}

/* A pod sandbox gets its policy and that policy's bypass, nothing else. */
static int preload_sandbox(struct preload *pl, struct sh_error *err)
{
	const struct sh_policy *p = pl->cfg->sandbox_policy;

	if (!p)
		return 0;
	return preload_bypass(pl, p, p->has_bypass && p->bypass, err);
}

static int preload_all(struct preload *pl, struct sh_error *err)
{
	const struct sh_config *cfg = pl->cfg;
	const struct sh_policy *def =
		cfg->default_policy ?
			config_find_policy(cfg, cfg->default_policy) :
			NULL;
	int r = preload_policy(pl, def, err);

	if (r)
		return r;
	r = preload_sandbox(pl, err);
	if (r)
		return r;
	for (size_t i = 0; i < cfg->nr_policies; i++) {
		const struct sh_policy *p = &cfg->policies[i];

		if (p == def || !config_policy_allowed(cfg, p->name))
			continue;
		r = preload_policy(pl, p, err);
		if (r)
			return r;
	}
	return 0;
}

/* One generic program: kept when a checked pin of it is there. */
static int preload_generic_one(struct preload *pl, enum sh_prog_kind kind,
			       bool bypass, bool audit, struct sh_error *err)
{
	uint64_t hash = generic_hash(kind, bypass, audit);
	struct generic_prog g;
	_cleanup_close_ int fd = -1;
	struct pin_key *key;
	int r;

	if (pl->nr == pl->max)
		return error_set(err, -E2BIG, "preload: too many programs");
	key = &pl->keys[pl->nr];
	*key = (struct pin_key){ kind, hash, false };
	if (generic_find(pl->dir, kind, bypass, audit, &g) == 0) {
		generic_close(&g);
	} else {
		fd = generic_load(kind, bypass, audit);
		if (fd < 0)
			return error_errno(
				err, fd,
				"cannot load the generic %s program%s%s",
				kind_get(kind)->name,
				bypass ? " with bypass-prot-mem" : "",
				audit ? " in audit mode" : "");
		r = pin_add(pl->dir, kind_get(kind)->name, hash, fd, err);
		if (r)
			return r;
		key->made = true;
		pl->res->generic_pinned++;
	}
	pl->nr++;
	pl->res->generic++;
	return 0;
}

/* Every kind in both modes, sock_create with bypass too where the kernel
 * has it: a prestart then never verifies, whatever policy it gets. */
static int preload_generic(struct preload *pl, struct sh_error *err)
{
	int r;

	for (int audit = 0; audit < 2; audit++) {
		for (int k = 0; k < SH_PROG_KINDS; k++) {
			r = preload_generic_one(pl, k, /* bypass= */ false,
						audit, err);
			if (r)
				return r;
		}
		if (!pl->bypass_all)
			continue;
		r = preload_generic_one(pl, SH_PROG_SOCK, /* bypass= */ true,
					audit, err);
		if (r)
			return r;
	}
	return 0;
}

static int sweep_pin(int dir, const char *name, const char *type, uint64_t hash,
		     void *data)
{
	struct preload *pl = data;
	const struct kind_info *k = type ? kind_by_name(type) : NULL;
	struct sh_error err = { 0 };

	/* Temp names of an interrupted run; the lock rules out a live one. */
	if (!k && !pin_is_temp(name))
		return 0;
	if (k && find_key(pl, k->kind, hash))
		return 0;
	if (pin_remove(dir, name, &err))
		log_warn("%s", err.msg);
	else if (k && generic_is_pin(type, hash))
		pl->res->generic_unpinned++;
	else if (k)
		pl->res->unpinned++;
	return 0;
}

static void undo_pins(struct preload *pl)
{
	for (size_t i = 0; i < pl->nr; i++) {
		char name[SH_PIN_NAME_MAX];
		struct sh_error err = { 0 };

		if (!pl->keys[i].made)
			continue;
		pin_name(name, sizeof(name), kind_get(pl->keys[i].kind)->name,
			 pl->keys[i].hash);
		if (pin_remove(pl->dir, name, &err))
			log_warn("%s", err.msg);
	}
}

/* The generic programs are the config's too: a config that asks for no
 * bypass today may tomorrow, before preload runs again. */
static int probe_bypass(const struct sh_config *cfg, struct preload *pl,
			struct sh_error *err)
{
	int r = load_probe_bypass();

	if (r < 0)
		return error_errno(err, r,
				   "cannot probe for SK_BPF_BYPASS_PROT_MEM");
	pl->bypass_all = r == 1;
	pl->bypass_ok = bypass_reachable(cfg) && pl->bypass_all;
	return 0;
}

/* keep_keys: the keys of the kinds the config's policies use (pinned
 * now; not the generic programs', pinned for every kind); else none
 * (keys.h). */
static void preload_keys(const struct preload *pl)
{
	struct sh_error err = { 0 };
	bool want[SH_PROG_KINDS] = { false };

	for (size_t i = 0; i < pl->nr && pl->cfg && pl->cfg->keep_keys; i++)
		if (!generic_is_pin(kind_get(pl->keys[i].kind)->name,
				    pl->keys[i].hash))
			want[pl->keys[i].kind] = true;
	if (keys_keep(want, &pl->res->keys, &err))
		snprintf(pl->res->keys_error, sizeof(pl->res->keys_error), "%s",
			 err.msg);
}

int preload_run(const struct sh_config *cfg, struct preload_result *res,
		struct sh_error *err)
{
	/* Each policy in both modes, with bypass on and off, plus none and
	 * the sandbox's, each 3 kinds; and the generic programs. */
	size_t max = (cfg->nr_policies + 2) * 4 * SH_PROG_KINDS +
		     2 * (SH_PROG_KINDS + 1);
	_cleanup_free_ struct pin_key *keys = calloc(max, sizeof(*keys));
	_cleanup_close_ int dir = -1;
	struct preload pl = {
		.cfg = cfg, .dir = -1, .max = max, .keys = keys, .res = res
	};
	int r;

	memset(res, 0, sizeof(*res));
	if (!keys)
		return error_set(err, -ENOMEM, "preload: %s", strerror(ENOMEM));
	r = probe_bypass(cfg, &pl, err);
	if (r)
		return r;
	dir = pin_dir_open(/* create= */ true, err);
	if (dir < 0)
		return dir;
	pl.dir = dir;
	r = pin_dir_lock(dir, err);
	if (r)
		goto undo;
	r = preload_generic(&pl, err);
	if (r)
		goto undo;
	r = preload_all(&pl, err);
	if (r)
		goto undo;
	r = pin_foreach(dir, sweep_pin, &pl, err);
	if (r)
		return r;
	preload_keys(&pl);
	return 0;
undo:
	undo_pins(&pl);
	return r;
}

int preload_unpin_all(struct preload_result *res, struct sh_error *err)
{
	_cleanup_close_ int dir = pin_dir_open(/* create= */ false, err);
	/* No variant wanted: the sweep removes every pin. */
	struct preload pl = { .res = res };
	int r;

	memset(res, 0, sizeof(*res));
	if (dir == -ENOENT || dir < 0) {
		/* Nothing pinned: no keys wanted (pl.nr is 0). */
		preload_keys(&pl);
		return dir == -ENOENT ? 0 : dir;
	}
	r = pin_dir_lock(dir, err);
	if (r)
		return r;
	preload_keys(&pl);
	r = pin_foreach(dir, sweep_pin, &pl, err);
	if (r)
		return r;
	/* Another tool's file left in it keeps the directory. */
	if (rmdir(pin_dir()) < 0 && errno != ENOTEMPTY)
		return error_errno(err, -errno, "cannot remove %s", pin_dir());
	return 0;
}
