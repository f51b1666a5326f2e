// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container description: the OCI state's (and bundle's) annotations
 * read once into what the modules after it need. Container-scoped keys
 * (KEY.<container-name>) override the container's entry in a
 * containers.* list, which overrides pod-level keys; container.c says which
 * container this is. Keys in log lines are ours plus a checked container
 * name; values are quoted with LOG_Q.
 */
#include <errno.h>
#include <json-c/json.h>
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
			seen.value[i][k] = oci_annotation(
				st, container_pod_key_name(i, k));
	container_pod_identify(&seen, who);
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
	c->nr_cdi = container_cdi_requested(st->config_root, st->cdi_device,
					    c->cdi, SH_CDI_MAX);
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

/*
 * Who a container is: a pod sandbox or not, and its name for the
 * per-container KEY.<name> annotations.
 *
 * What each runtime writes into the OCI config (read in their sources):
 *  - containerd (internal/cri/annotations: DefaultCRIAnnotations) sets
 *    io.kubernetes.cri.container-type ("sandbox" or "container") and, for
 *    containers, io.kubernetes.cri.container-name. Its spec options apply
 *    them after the pod annotations that pod_annotations lets through, so
 *    its own values win over copies.
 *  - CRI-O (internal/factory/container: SpecAddAnnotations) copies every
 *    sandbox (pod) annotation first, then sets
 *    io.kubernetes.cri-o.ContainerType "container" (the pause container
 *    gets "sandbox" in server/sandbox_run_linux.go), and last adds the
 *    kubelet's labels, among them io.kubernetes.container.name. It never
 *    writes io.kubernetes.cri.*: those are copies of pod annotations.
 *
 * So a container is a sandbox only when every type key present says so
 * (a copied "sandbox" cannot outvote the runtime's "container"), and its
 * name comes from the key set of the runtime that wrote the type key.
 * The pod's namespace and name come from the same set: containerd's
 * io.kubernetes.cri.sandbox-namespace and sandbox-name
 * (DefaultCRIAnnotations), CRI-O's io.kubernetes.pod.namespace and
 * io.kubernetes.pod.name (the kubelet's container labels, added last).
 * The sandbox's id for a workload container: containerd's
 * io.kubernetes.cri.sandbox-id, CRI-O's io.kubernetes.cri-o.SandboxID
 * (set after the pod's annotations in SpecAddAnnotations).
 */

static const struct runtime_keys {
	const char *runtime;
	/* type, name, namespace, pod, sandbox id */
	const char *key[POD_NR_KEYS];
} runtimes[POD_NR_RUNTIMES] = {
	{ "containerd",
	  { "io.kubernetes.cri.container-type",
	    "io.kubernetes.cri.container-name",
	    "io.kubernetes.cri.sandbox-namespace",
	    "io.kubernetes.cri.sandbox-name",
	    "io.kubernetes.cri.sandbox-id" } },
	/* Last: when both sets claim a container, CRI-O's wins, since CRI-O
	 * copies every pod annotation while containerd passes another
	 * runtime's keys only if the operator's globs let them through. */
	{ "CRI-O",
	  { "io.kubernetes.cri-o.ContainerType", "io.kubernetes.container.name",
	    "io.kubernetes.pod.namespace", "io.kubernetes.pod.name",
	    "io.kubernetes.cri-o.SandboxID" } },
};

const char *container_pod_key_name(size_t runtime, enum pod_key k)
{
	return runtimes[runtime].key[k];
}

static bool is_sandbox_value(const char *v)
{
	return !strcmp(v, "sandbox");
}

/* The runtime that wrote a non-sandbox type key, or -1 when every type
 * key present says "sandbox" (or there is none). */
static int type_writer(const struct pod_annotations *seen, int *nr_types)
{
	int writer = -1;

	*nr_types = 0;
	for (int i = 0; i < POD_NR_RUNTIMES; i++) {
		const char *v = seen->value[i][POD_TYPE];

		if (!v)
			continue;
		(*nr_types)++;
		if (!is_sandbox_value(v))
			writer = i;
	}
	return writer;
}

/* Kubernetes names are DNS labels; podman allows [A-Za-z0-9_.-] too. */
bool container_pod_valid_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > SH_MAX_CONTAINER_NAME)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || !strchr("-_.", c)))
			return false;
	}
	return true;
}

/* k8s.io/apimachinery/pkg/util/rand: the alphabet of generated names
 * (no vowels, no 0, 1, 3) and of SafeEncodeString. */
static const char generated[] = "bcdfghjklmnpqrstvwxz2456789";

/* The length of name's last "-part" when it is min to max bytes of set
 * (digits when set is NULL), else 0. */
static size_t suffix_of(const char *name, size_t n, const char *set, size_t min,
			size_t max)
{
	size_t k = 0;

	while (k < n && name[n - 1 - k] != '-') {
		char c = name[n - 1 - k];

		if (set ? !strchr(set, c) : (c < '0' || c > '9'))
			return 0;
		k++;
	}
	/* a "-" before it, and something before that */
	if (k < min || k > max || k + 1 >= n)
		return 0;
	return k + 1;
}

void container_pod_owner(const char *pod, char *buf, size_t len)
{
	size_t n = pod ? strlen(pod) : 0, cut;

	if (!n) {
		snprintf(buf, len, "-");
		return;
	}
	cut = suffix_of(pod, n, generated, 5, 5);
	if (cut) {
		n -= cut;
		/* a Deployment's ReplicaSet: its pod-template-hash too */
		n -= suffix_of(pod, n, generated, 6, 10);
	} else {
		n -= suffix_of(pod, n, NULL, 1, 10);
	}
	snprintf(buf, len, "%.*s", (int)n, pod);
}

static void names_from(const struct pod_annotations *seen, int i,
		       struct pod_identity *id)
{
	id->name = seen->value[i][POD_NAME];
	id->name_key = runtimes[i].key[POD_NAME];
	id->namespace = seen->value[i][POD_NAMESPACE];
	id->namespace_key = runtimes[i].key[POD_NAMESPACE];
	id->pod = seen->value[i][POD_POD];
	id->pod_key = runtimes[i].key[POD_POD];
}

/* The type writer's sandbox id; where it wrote none (a pod's copy of its
 * type key under the other runtime), the other runtime's. */
static void sandbox_id_from(const struct pod_annotations *seen, int writer,
			    struct pod_identity *id)
{
	for (int k = 0; k < POD_NR_RUNTIMES; k++) {
		int i = k ? POD_NR_RUNTIMES - 1 - writer : writer;

		if (seen->value[i][POD_SANDBOX_ID]) {
			id->sandbox_id = seen->value[i][POD_SANDBOX_ID];
			id->sandbox_id_key = runtimes[i].key[POD_SANDBOX_ID];
			return;
		}
	}
}

/* Without a type key no runtime vouches for either key set: the first
 * one with a container name, as plain runc or podman users set them by
 * hand. */
static void names_from_any(const struct pod_annotations *seen,
			   struct pod_identity *id)
{
	for (int i = 0; i < POD_NR_RUNTIMES; i++) {
		if (seen->value[i][POD_NAME]) {
			names_from(seen, i, id);
			return;
		}
	}
}

static int check_name(const char *what, const char *name, const char *key,
		      struct sh_error *err)
{
	if (!name || container_pod_valid_name(name))
		return 0;
	error_reason(err, SH_REASON_ANNOTATION_INVALID);
	error_cause(err, key, name);
	return error_set(
		err, -EINVAL,
		"%s %s (from %s) refused: not a Kubernetes or podman name (a letter or digit, then letters, digits, '-', '_' or '.'; at most %d)",
		what, LOG_Q(name), key, SH_MAX_CONTAINER_NAME);
}

/* A sandbox has no container name; its pod's names come from the key set
 * of the runtime that wrote a type key (CRI-O's when both did). */
static void sandbox_names(const struct pod_annotations *seen,
			  struct pod_identity *id)
{
	int keys = 0;

	for (int i = 0; i < POD_NR_RUNTIMES; i++)
		if (seen->value[i][POD_TYPE])
			keys = i;
	names_from(seen, keys, id);
	id->runtime = runtimes[keys].runtime;
	id->name = NULL;
	id->name_key = NULL;
}

void container_pod_identify(const struct pod_annotations *seen,
			    struct pod_identity *ret_id)
{
	int nr_types, writer;

	memset(ret_id, 0, sizeof(*ret_id));
	writer = type_writer(seen, &nr_types);
	if (nr_types > 0 && writer < 0) {
		ret_id->sandbox = true;
		sandbox_names(seen, ret_id);
	} else if (writer >= 0) {
		ret_id->runtime = runtimes[writer].runtime;
		names_from(seen, writer, ret_id);
		sandbox_id_from(seen, writer, ret_id);
	} else {
		names_from_any(seen, ret_id);
	}
}

int container_pod_check(const struct pod_identity *id, struct sh_error *err)
{
	int r = check_name("container name", id->name, id->name_key, err);

	if (r)
		return r;
	r = check_name("pod namespace", id->namespace, id->namespace_key, err);
	if (r)
		return r;
	return check_name("pod name", id->pod, id->pod_key, err);
}

/*
 * The CDI devices of kind sockopt-hook.io/policy (container.h): which policy
 * names can be devices, and which devices a container's spec asks for.
 * The spec is the runtime's: its hooks lists hold an entry of ours per
 * device that was injected (CDI's ContainerEdits.Apply appends each
 * device's hooks, tags.cncf.io/container-device-interface
 * pkg/cdi/container-edits.go), and nothing else writes --cdi-device.
 */

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

const char *container_cdi_policy_problem(const char *policy)
{
	size_t len = strlen(policy);

	if (!strcmp(policy, SH_CDI_BYPASS))
		return "the bypass device has that name";
	if (!len || !alnum(policy[0]) || !alnum(policy[len - 1]))
		return "a CDI device name starts and ends with a letter or digit";
	/* policy names are [A-Za-z0-9._-], which CDI's device names take */
	return NULL;
}

static struct json_object *member(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(obj, key, &v);
	return v;
}

static bool is_ours(struct json_object *entry)
{
	const char *path = json_object_get_string(member(entry, "path"));
	const char *base = path ? strrchr(path, '/') : NULL;

	return base && !strcmp(base + 1, SH_IDENT);
}

/* Adds dev once; -E2BIG past max. */
static int add(const char **ret, int n, int max, const char *dev)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(ret[i], dev))
			return n;
	if (n == max)
		return -E2BIG;
	ret[n] = dev;
	return n + 1;
}

/* --cdi-device VALUE and --cdi-device=VALUE in an entry's args. */
static int scan_entry(struct json_object *entry, const char **ret, int n,
		      int max)
{
	struct json_object *args = member(entry, "args");
	size_t nr = json_object_is_type(args, json_type_array) ?
			    json_object_array_length(args) :
			    0;
	const char *opt = "--" SH_CDI_OPTION;
	size_t len = strlen(opt);

	for (size_t i = 0; n >= 0 && i < nr; i++) {
		const char *a = json_object_get_string(
			json_object_array_get_idx(args, i));

		if (!a || strncmp(a, opt, len))
			continue;
		if (a[len] == '=')
			n = add(ret, n, max, a + len + 1);
		else if (!a[len] && i + 1 < nr &&
			 json_object_get_string(
				 json_object_array_get_idx(args, i + 1)))
			n = add(ret, n, max,
				json_object_get_string(
					json_object_array_get_idx(args, ++i)));
	}
	return n;
}

int container_cdi_requested(struct json_object *config_root, const char *own,
			    const char **ret, int max)
{
	static const char *const stages[] = { "prestart", "createRuntime" };
	struct json_object *hooks = member(config_root, "hooks");
	int n = own ? add(ret, 0, max, own) : 0;

	for (size_t s = 0; n >= 0 && s < sizeof(stages) / sizeof(stages[0]);
	     s++) {
		struct json_object *list = member(hooks, stages[s]);
		size_t nr = json_object_is_type(list, json_type_array) ?
				    json_object_array_length(list) :
				    0;

		for (size_t i = 0; n >= 0 && i < nr; i++) {
			struct json_object *e =
				json_object_array_get_idx(list, i);

			if (is_ours(e))
				n = scan_entry(e, ret, n, max);
		}
	}
	return n;
}
