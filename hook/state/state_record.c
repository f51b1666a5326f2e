// SPDX-License-Identifier: GPL-2.0-only
/* The on-disk form of a container record. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/oci.h"
#include "lib/jsonw.h"
#include "state/state_record.h"

static struct json_object *progs_to_json(const struct sh_progs *progs)
{
	struct json_object *arr = json_object_new_array();

	for (int i = 0; arr && i < progs->nr; i++) {
		struct json_object *p = json_object_new_object();
		char hash[20];

		jsonw_int(p, "id", progs->prog[i].id);
		jsonw_str(p, "attach", kind_type_name(progs->prog[i].type));
		snprintf(hash, sizeof(hash), "%016llx",
			 (unsigned long long)progs->prog[i].hash);
		jsonw_str(p, "name", progs->prog[i].name);
		jsonw_str(p, "hash", hash);
		json_object_array_add(arr, p);
	}
	return arr;
}

struct json_object *state_record_to_json(const struct sh_record *rec)
{
	struct json_object *obj = json_object_new_object();

	if (!obj)
		return NULL;
	jsonw_str(obj, "id", rec->id);
	jsonw_str(obj, "namespace", rec->k8s_namespace);
	jsonw_str(obj, "pod", rec->pod);
	jsonw_str(obj, "container", rec->container);
	jsonw_int(obj, "pid", rec->pid);
	jsonw_int(obj, "pid_start", (int64_t)rec->pid_start);
	jsonw_str(obj, "cgroup", rec->cg.rel);
	jsonw_str(obj, "cgroup_path", rec->cg.abs);
	jsonw_int(obj, "cgroup_id", (int64_t)rec->cg.id);
	jsonw_bool(obj, "cgroup_created", rec->cg.created);
	jsonw_str(obj, "parent_cgroup", rec->cg.parent_rel);
	jsonw_str(obj, "policy", rec->policy);
	jsonw_str(obj, "policy_source", rec->policy_source);
	jsonw_bool(obj, "bypass_prot_mem", rec->bypass);
	jsonw_bool(obj, "bypass_active", rec->progs.bypass_active);
	jsonw_str(obj, "bypass_source", rec->bypass_source);
	jsonw_str(obj, "mode", rec->audit ? "audit" : "enforce");
	jsonw_str(obj, "mode_source", rec->mode_source);
	json_object_object_add(obj, "programs", progs_to_json(&rec->progs));
	if (rec->footprint[0]) {
		jsonw_str(obj, "record", rec->footprint);
		jsonw_str(obj, "record_dir", rec->footprint_dir);
	}
	return obj;
}

/* A copy cut to len - 1 bytes, as snprintf("%s") would make it, without
 * printf's cost: poststop reads some twenty of them. */
static void get_str(struct json_object *obj, const char *key, char *buf,
		    size_t len)
{
	struct json_object *v;
	size_t n;

	buf[0] = '\0';
	if (!json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return;
	n = strnlen(json_object_get_string(v), len - 1);
	memcpy(buf, json_object_get_string(v), n);
	buf[n] = '\0';
}

static int64_t get_int(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v))
		return 0;
	return json_object_get_int64(v);
}

static bool get_bool(struct json_object *obj, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(obj, key, &v) &&
	       json_object_get_boolean(v);
}

static int progs_from_json(struct json_object *arr, struct sh_progs *progs)
{
	size_t n;
	char type[32], hash[20];
	const struct kind_info *kind;

	if (!json_object_is_type(arr, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(arr);
	if (n > SH_PROG_KINDS)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(arr, i);
		struct sh_prog *prog = &progs->prog[i];

		prog->id = (__u32)get_int(p, "id");
		get_str(p, "name", prog->name, sizeof(prog->name));
		get_str(p, "attach", type, sizeof(type));
		get_str(p, "hash", hash, sizeof(hash));
		prog->hash = strtoull(hash, NULL, 16);
		kind = kind_by_name(type);
		if (!kind)
			return -EBADMSG;
		prog->type = kind->type;
	}
	progs->nr = (int)n;
	return 0;
}

int state_record_from_json(struct json_object *obj, struct sh_record *rec)
{
	struct json_object *arr;
	char mode[sizeof("enforce")] = "";

	memset(rec, 0, sizeof(*rec));
	get_str(obj, "id", rec->id, sizeof(rec->id));
	get_str(obj, "namespace", rec->k8s_namespace,
		sizeof(rec->k8s_namespace));
	get_str(obj, "pod", rec->pod, sizeof(rec->pod));
	get_str(obj, "container", rec->container, sizeof(rec->container));
	rec->pid = (pid_t)get_int(obj, "pid");
	rec->pid_start = (uint64_t)get_int(obj, "pid_start");
	get_str(obj, "cgroup", rec->cg.rel, sizeof(rec->cg.rel));
	get_str(obj, "cgroup_path", rec->cg.abs, sizeof(rec->cg.abs));
	rec->cg.id = (uint64_t)get_int(obj, "cgroup_id");
	rec->cg.created = get_bool(obj, "cgroup_created");
	get_str(obj, "parent_cgroup", rec->cg.parent_rel,
		sizeof(rec->cg.parent_rel));
	get_str(obj, "policy", rec->policy, sizeof(rec->policy));
	get_str(obj, "policy_source", rec->policy_source,
		sizeof(rec->policy_source));
	rec->bypass = get_bool(obj, "bypass_prot_mem");
	rec->progs.bypass_active = get_bool(obj, "bypass_active");
	get_str(obj, "bypass_source", rec->bypass_source,
		sizeof(rec->bypass_source));
	get_str(obj, "record", rec->footprint, sizeof(rec->footprint));
	get_str(obj, "record_dir", rec->footprint_dir,
		sizeof(rec->footprint_dir));
	get_str(obj, "mode", mode, sizeof(mode));
	rec->audit = !strcmp(mode, "audit");
	get_str(obj, "mode_source", rec->mode_source, sizeof(rec->mode_source));
	if (!rec->id[0] || rec->cg.abs[0] != '/' ||
	    !json_object_object_get_ex(obj, "programs", &arr))
		return -EBADMSG;
	return progs_from_json(arr, &rec->progs);
}

/* Absolute, not the root, no empty, "." or ".." component. */
static bool clean_cgroup_path(const char *rel)
{
	const char *p = rel;

	if (*p != '/')
		return false;
	while (*p == '/') {
		const char *c = p + 1;
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		p = c + n;
	}
	return true;
}

/* A cgroup the hook made is <parent>/oci-sockopt-hook-..., nothing else. */
static bool made_by_hook(const struct cg_target *cg)
{
	const char *base = strrchr(cg->rel, '/') + 1;
	size_t parent_len = (size_t)(base - 1 - cg->rel);

	if (strncmp(base, SH_CGROUP_PREFIX, strlen(SH_CGROUP_PREFIX)))
		return false;
	if (!strcmp(cg->parent_rel, "/"))
		return parent_len == 0;
	return clean_cgroup_path(cg->parent_rel) &&
	       strlen(cg->parent_rel) == parent_len &&
	       !strncmp(cg->rel, cg->parent_rel, parent_len);
}

static const char *progs_invalid(const struct sh_progs *progs)
{
	for (int i = 0; i < progs->nr; i++) {
		if (progs->prog[i].id == 0)
			return "a program id is 0";
		if (strncmp(progs->prog[i].name, "sh_", 3))
			return "a program's name does not start with sh_";
	}
	return NULL;
}

bool state_record_stem_ok(const struct sh_record *rec, const char *stem)
{
	size_t n = strlen(rec->id);
	char cgid[18];

	if (strncmp(rec->id, stem, n))
		return false;
	if (!stem[n])
		return true;
	snprintf(cgid, sizeof(cgid), "@%016llx",
		 (unsigned long long)rec->cg.id);
	return !strcmp(stem + n, cgid);
}

const char *state_record_invalid(const struct sh_record *rec, const char *stem,
				 const struct cg_root *root)
{
	char abs[sizeof(rec->cg.abs)];

	if (!oci_valid_id(rec->id))
		return "its id is not a valid container id";
	if (!state_record_stem_ok(rec, stem))
		return "its id is not its file name";
	if (rec->pid <= 0)
		return "its pid is not positive";
	if (!clean_cgroup_path(rec->cg.rel))
		return "its cgroup is not a clean absolute path";
	if (cg_path(root, rec->cg.rel, abs, sizeof(abs)) ||
	    strcmp(abs, rec->cg.abs))
		return "its cgroup_path is not its cgroup below the cgroup2 mount";
	if (rec->cg.created && !made_by_hook(&rec->cg))
		return "its cgroup_created is true for a cgroup the hook cannot have made";
	return progs_invalid(&rec->progs);
}
