// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: annotation keys and values. The input is a list of
 * NUL-separated key, value pairs, where a 0x01 byte in a value stands for
 * a NUL (JSON's \u0000); the first byte picks where they go (the state on
 * stdin, the bundle's config.json, or both). Each value goes through
 * policy_parse_bool(), then the whole set through policy_resolve()
 * against a fixed operator config.
 *
 * Modules: `oci.c`, `policy.c`, `container.c`
 */
#include "fuzz_common.h"

#define MAX_PAIRS 64

static const char state_text[] = FUZZ_STATE;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	fuzz_fixed_config();
	return 0;
}

/* Next NUL-terminated field of [*p, end), copied into a fresh string. */
static char *next_field(const uint8_t **p, const uint8_t *end, size_t *len)
{
	const uint8_t *nul = memchr(*p, 0, end - *p);
	size_t n = nul ? (size_t)(nul - *p) : (size_t)(end - *p);
	char *s = malloc(n + 1);

	if (!s)
		abort();
	memcpy(s, *p, n);
	s[n] = '\0';
	*len = n;
	*p += nul ? n + 1 : n;
	return s;
}

static struct json_object *build_annotations(const uint8_t *data, size_t size)
{
	struct json_object *ann = json_object_new_object();
	const uint8_t *p = data, *end = data + size;

	if (!ann)
		abort();
	for (int i = 0; i < MAX_PAIRS && p < end; i++) {
		size_t klen, vlen;
		char *key = next_field(&p, end, &klen);
		char *value = next_field(&p, end, &vlen);
		bool b;

		policy_parse_bool(key, value, &b, FUZZ_ERR);
		for (size_t j = 0; j < vlen; j++)
			if (value[j] == 1)
				value[j] = '\0';
		/* Values may hold any byte; json-c escapes them. */
		json_object_object_add(ann, key,
				       json_object_new_string_len(value, vlen));
		free(key);
		free(value);
	}
	return ann;
}

static void in_state(struct json_object *ann, struct oci_state *st)
{
	struct json_object *root = json_object_new_object();
	const char *text;

	if (!root)
		abort();
	json_object_object_add(root, "id", json_object_new_string("fuzz"));
	json_object_object_add(root, "pid", json_object_new_int(1));
	json_object_object_add(root, "annotations", json_object_get(ann));
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	if (oci_parse_state(text, strlen(text), st, FUZZ_ERR))
		oci_state_free(st);
	json_object_put(root);
}

static void in_bundle(struct json_object *ann, struct oci_state *st)
{
	struct json_object *root = json_object_new_object();
	const char *text;

	if (!root)
		abort();
	json_object_object_add(root, "ociVersion",
			       json_object_new_string("1.0.2"));
	json_object_object_add(root, "annotations", json_object_get(ann));
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	if (oci_parse_bundle_config("config.json", text, strlen(text), st,
				    FUZZ_ERR))
		oci_state_free(st);
	json_object_put(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct sh_config *cfg = fuzz_fixed_config();
	struct json_object *ann;
	struct oci_state st;
	uint8_t where;

	if (size < 1 || size > 64 * 1024)
		return 0;
	where = data[0] % 3;
	ann = build_annotations(data + 1, size - 1);
	if (where == 0) {
		in_state(ann, &st);
	} else {
		if (oci_parse_state(state_text, sizeof(state_text) - 1, &st,
				    FUZZ_ERR))
			abort();
		in_bundle(ann, &st);
		if (where == 2 && st.annotations) {
			/* Both: the state's copy wins over config.json's. */
			oci_state_free(&st);
			in_state(ann, &st);
			if (st.annotations)
				in_bundle(ann, &st);
		}
	}
	if (st.annotations)
		fuzz_resolve(cfg, &st);
	oci_state_free(&st);
	json_object_put(ann);
	return 0;
}
