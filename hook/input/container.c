// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container description: the OCI state's (and bundle's) annotations
 * read once into what the modules after it need. Container-scoped keys
 * (KEY.<container-name>) override the container's entry in a
 * containers.* list, which overrides pod-level keys; pod.c says which
 * container this is. Keys in log lines are ours plus a checked container
 * name; values are quoted with LOG_Q.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "input/container.h"
#include "lib/log.h"

static const struct setting_keys {
	const char *key, *list_key;
} setting_keys[CONTAINER_NR_SETTINGS] = {
	[CONTAINER_POLICY] = { SH_ANNOTATION_POLICY,
			       SH_ANNOTATION_CONTAINERS_POLICY },
	[CONTAINER_BYPASS] = { SH_ANNOTATION_BYPASS,
			       SH_ANNOTATION_CONTAINERS_BYPASS },
	[CONTAINER_RECORD] = { SH_ANNOTATION_RECORD,
			       SH_ANNOTATION_CONTAINERS_RECORD },
	[CONTAINER_MODE] = { SH_ANNOTATION_MODE,
			     SH_ANNOTATION_CONTAINERS_MODE },
};

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The keys of the hooks.d file's regex: KEY, KEY.<name>, containers.KEY. */
static bool is_policy_key(const char *key)
{
	return !strcmp(key, SH_ANNOTATION_POLICY) ||
	       !strcmp(key, SH_ANNOTATION_BYPASS) ||
	       !strcmp(key, SH_ANNOTATION_CONTAINERS_POLICY) ||
	       !strcmp(key, SH_ANNOTATION_CONTAINERS_BYPASS) ||
	       !strcmp(key, SH_ANNOTATION_RECORD) ||
	       !strcmp(key, SH_ANNOTATION_CONTAINERS_RECORD) ||
	       starts_with(key, SH_ANNOTATION_POLICY ".") ||
	       starts_with(key, SH_ANNOTATION_BYPASS ".") ||
	       starts_with(key, SH_ANNOTATION_RECORD ".");
}

/* Whether the spec carries one of the keys the hooks.d file reacts to. */
static bool has_policy_key(const struct oci_state *st)
{
	if (!st->annotations)
		return false;
	json_object_object_foreach(st->annotations, key, val) {
		(void)val;
		if (is_policy_key(key))
			return true;
	}
	return false;
}

static void read_identity(const struct oci_state *st, struct pod_identity *who)
{
	struct pod_annotations seen;

	for (size_t i = 0; i < POD_NR_RUNTIMES; i++)
		for (int k = 0; k < POD_NR_KEYS; k++)
			seen.value[i][k] =
				oci_annotation(st, pod_key_name(i, k));
	pod_identify(&seen, who);
}

static void read_setting(const struct oci_state *st, const char *name,
			 enum container_setting s,
			 struct container_setting_values *v)
{
	const struct setting_keys *k = &setting_keys[s];

	v->named_key[0] = '\0';
	v->named = NULL;
	if (name) {
		snprintf(v->named_key, sizeof(v->named_key), "%s.%s", k->key,
			 name);
		v->named = oci_annotation(st, v->named_key);
	}
	v->list = oci_annotation(st, k->list_key);
	v->plain = oci_annotation(st, k->key);
}

void container_read(const struct oci_state *st, struct sh_container *c)
{
	memset(c, 0, sizeof(*c));
	c->st = st;
	c->id = st->id;
	c->bundle = st->bundle;
	c->pid = st->pid;
	read_identity(st, &c->who);
	for (int s = 0; s < CONTAINER_NR_SETTINGS; s++)
		read_setting(st, c->who.name, s, &c->setting[s]);
	c->handler = oci_annotation(st, SH_ANNOTATION_HANDLER);
	c->nri_mark = oci_annotation(st, SH_ANNOTATION_NRI);
	c->sandbox_id = c->who.sandbox_id;
	c->nr_cdi = cdi_requested(st->config_root, st->cdi_device, c->cdi,
				  SH_CDI_MAX);
	c->has_policy_key = has_policy_key(st) || c->nr_cdi;
}

static int invalid_list(const char *key, const char *value, const char *why,
			struct sh_error *err)
{
	error_reason(err, SH_REASON_ANNOTATION_INVALID);
	error_cause(err, key, value);
	return error_set(
		err, -EINVAL,
		"annotation %s=%s is invalid: %s (expected name=value[,name=value...])",
		key, LOG_Q(value), why);
}

/* name's entry in "name=value, name=value": 1, 0 when it has none, or an
 * error for a list that is not one (a typo must not drop a policy). */
static int list_entry(const char *key, const char *list, const char *name,
		      char *out, size_t len, struct sh_error *err)
{
	const char *p = list;
	int found = 0;

	while (*p) {
		size_t n = strcspn(p, ","), sp = strspn(p, " ");
		const char *eq = memchr(p, '=', n);
		size_t nlen, vlen;

		if (!eq || eq == p + sp)
			return invalid_list(key, list,
					    "an entry without a name", err);
		nlen = strcspn(p + sp, " =");
		if (strspn(p + sp + nlen, " ") != (size_t)(eq - p - sp - nlen))
			return invalid_list(key, list,
					    "a name with a space in it", err);
		vlen = n - (size_t)(eq + 1 - p);
		while (vlen && eq[1] == ' ')
			eq++, vlen--;
		while (vlen && eq[vlen] == ' ')
			vlen--;
		if (nlen == strlen(name) && !strncmp(p + sp, name, nlen)) {
			if (found++)
				return invalid_list(key, list,
						    "a container named twice",
						    err);
			if (!vlen || vlen >= len)
				return invalid_list(
					key, list, "an empty or overlong value",
					err);
			snprintf(out, len, "%.*s", (int)vlen, eq + 1);
		}
		p += n + (p[n] == ',');
	}
	return found;
}

static int pick_annotation(const struct sh_container *c,
			   enum container_setting s,
			   struct annotation_pick *pick, struct sh_error *err)
{
	const struct container_setting_values *v = &c->setting[s];
	const char *key = setting_keys[s].key;
	const char *list_key = setting_keys[s].list_key;
	const char *name = c->who.name;
	int r;

	if (name) {
		snprintf(pick->key, sizeof(pick->key), "%s", v->named_key);
		pick->value = v->named;
		if (pick->value)
			return 0;
	}
	if (name && v->list) {
		r = list_entry(list_key, v->list, name, pick->entry,
			       sizeof(pick->entry), err);
		if (r < 0)
			return r;
		snprintf(pick->key, sizeof(pick->key), "%s[%s]", list_key,
			 name);
		pick->value = r ? pick->entry : NULL;
		if (pick->value)
			return 0;
	}
	snprintf(pick->key, sizeof(pick->key), "%s", key);
	pick->value = v->plain;
	return 0;
}

static bool device_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
}

/* A device of ours: *name its policy, or NULL for the bypass device. */
static int parse_device(const char *dev, const char **name,
			struct sh_error *err)
{
	size_t n = strlen(SH_CDI_KIND), len = strlen(dev);
	const char *v = dev + n + 1;

	if (len < SH_CDI_DEVICE_MAX && len > n + 1 &&
	    !strncmp(dev, SH_CDI_KIND "=", n + 1) &&
	    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789._-") == strlen(v) &&
	    device_char(*v)) {
		*name = strcmp(v, SH_CDI_BYPASS) ? v : NULL;
		return 0;
	}
	error_reason(err, SH_REASON_ANNOTATION_INVALID);
	error_cause(err, "CDI device", dev);
	return error_set(
		err, -EINVAL,
		"CDI device %s refused: not a device of kind " SH_CDI_KIND
		" (a policy's name, or " SH_CDI_BYPASS ")",
		LOG_Q(dev));
}

/* The CDI device that asks for s (the policy or the bypass), if any. */
static int pick_device(const struct sh_container *c, enum container_setting s,
		       struct annotation_pick *pick, struct sh_error *err)
{
	const char *name = NULL, *found = NULL;
	int r;

	pick->value = NULL;
	if (c->nr_cdi < 0) {
		error_reason(err, SH_REASON_ANNOTATION_INVALID);
		return error_set(
			err, -E2BIG,
			"CDI devices refused: more than %d devices of kind " SH_CDI_KIND,
			SH_CDI_MAX);
	}
	for (int i = 0; i < c->nr_cdi; i++) {
		r = parse_device(c->cdi[i], &name, err);
		if (r)
			return r;
		if (s == CONTAINER_BYPASS ? !!name : !name)
			continue;
		if (found) {
			error_reason(err, SH_REASON_ANNOTATION_INVALID);
			error_cause(err, "CDI device", c->cdi[i]);
			return error_set(
				err, -EINVAL,
				"CDI devices %s and %s refused: a container takes one policy",
				found, c->cdi[i]);
		}
		found = c->cdi[i];
	}
	if (!found)
		return 0;
	snprintf(pick->key, sizeof(pick->key), "CDI device %s", found);
	snprintf(pick->entry, sizeof(pick->entry), "%s",
		 s == CONTAINER_BYPASS ? "true" :
					 found + strlen(SH_CDI_KIND) + 1);
	pick->value = pick->entry;
	return 0;
}

int container_pick(const struct sh_container *c, enum container_setting s,
		   struct annotation_pick *pick, struct sh_error *err)
{
	struct annotation_pick dev;
	int r = pick_annotation(c, s, pick, err);

	if (r || !c->nr_cdi || (s != CONTAINER_POLICY && s != CONTAINER_BYPASS))
		return r;
	r = pick_device(c, s, &dev, err);
	if (r || !dev.value)
		return r;
	if (pick->value && strcmp(pick->value, dev.value)) {
		error_reason(err, SH_REASON_ANNOTATION_INVALID);
		error_cause(err, pick->key, pick->value);
		return error_set(err, -EINVAL,
				 "%s refused: annotation %s=%s asks otherwise",
				 dev.key, pick->key, LOG_Q(pick->value));
	}
	*pick = dev;
	pick->value = pick->entry; /* dev's pointed into dev */
	return 0;
}
