// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: a container attachment under the state directory, read
 * back by poststop, gc and status (strictjson_parse() of the file, then
 * state_attachment_from_json() and the check state_attachment_invalid()), and written again
 * with state_attachment_to_json().
 *
 * Modules: `state.c`, `strictjson.c`
 */
#include "fuzz_common.h"
#include "input/strictjson.h"
#include "state/state.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cg_root root = { .mount = "/sys/fs/cgroup" };
	struct json_object *obj = NULL, *again;
	struct sh_attachment *att;
	char *text;

	/* state_read() reads at most 1 MiB, NUL-terminated. */
	if (size > (1 << 20))
		return 0;
	text = malloc(size + 1);
	att = malloc(sizeof(*att));
	if (!text || !att)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	if (strictjson_parse("fuzz.json", text, size, &obj, FUZZ_ERR) == 0 &&
	    state_attachment_from_json(obj, att) == 0) {
		state_attachment_invalid(att, "fuzz", &root);
		again = state_attachment_to_json(att);
		if (again) {
			json_object_to_json_string_ext(again,
						       JSON_C_TO_STRING_PLAIN);
			json_object_put(again);
		}
	}
	json_object_put(obj);
	free(att);
	free(text);
	return 0;
}
