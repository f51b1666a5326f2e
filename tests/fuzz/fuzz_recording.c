// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: a recording file as `record merge` reads it (any file
 * it is given): strictjson_parse(), then each recording's footprint read
 * back with footprint_json_read(), and the proposal made and checked by
 * the config parser (recording_document()) under the first recording's
 * running policy.
 *
 * Modules: `strictjson.c`, `footprint.c`, `recording.c`, `config*.c`
 */
#include "record/footprint.h"
#include "fuzz_common.h"
#include "input/strictjson.h"
#include "record/recording.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

static void merge(struct json_object *arr, struct footprint *fp)
{
	struct json_object *first = json_object_array_get_idx(arr, 0), *doc;

	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *prov = json_object_array_get_idx(arr, i);

		if (footprint_json_read(prov, fp, FUZZ_ERR))
			return;
	}
	footprint_policy_sort(fp);
	doc = recording_document(json_object_get(arr), fp,
				 recording_running(first), "fuzz", FUZZ_ERR);
	if (doc) {
		json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
		json_object_put(doc);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *obj = NULL, *arr;
	struct footprint *fp;
	char *text;

	/* record merge reads at most SH_MAX_FILE_SIZE. */
	if (size > SH_MAX_FILE_SIZE)
		return 0;
	text = malloc(size + 1);
	fp = calloc(1, sizeof(*fp));
	if (!text || !fp)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	if (strictjson_parse("fuzz.json", text, size, &obj, FUZZ_ERR) == 0 &&
	    json_object_is_type(obj, json_type_object) &&
	    json_object_object_get_ex(obj, "recordings", &arr) &&
	    json_object_is_type(arr, json_type_array) &&
	    json_object_array_length(arr) > 0)
		merge(arr, fp);
	json_object_put(obj);
	free(fp);
	free(text);
	return 0;
}
