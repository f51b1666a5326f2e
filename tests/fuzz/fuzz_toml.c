// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the TOML reader and writer (`runtime configure` reads
 * the runtimes' config files and `containerd config dump` with them). A
 * document that parses must write back to TOML that parses to the same
 * object, except for nan, which equals nothing.
 *
 * Modules: `toml.c`
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "fuzz_common.h"
#include "wiring/toml/toml.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[SH_TOML_ERR_MAX], err2[SH_TOML_ERR_MAX];
	struct json_object *doc = NULL, *again = NULL;
	char *out = NULL;
	size_t len = 0;
	FILE *m;
	int r;

	if (size > 1 << 20)
		return 0;
	if (toml_parse((const char *)data, size, &doc, err)) {
		FUZZ_ASSERT(err[0] && strlen(err) < SH_TOML_ERR_MAX);
		return 0;
	}
	m = open_memstream(&out, &len);
	FUZZ_ASSERT(m);
	r = toml_write_doc(m, doc);
	fclose(m);
	FUZZ_ASSERT(r == 0);
	r = toml_parse(out, len, &again, err2);
	if (r)
		fprintf(stderr, "written TOML does not parse: %s\n%s\n", err2,
			out);
	FUZZ_ASSERT(r == 0);
	if (!strstr(out, "nan"))
		FUZZ_ASSERT(json_object_equal(doc, again));
	json_object_put(doc);
	json_object_put(again);
	free(out);
	return 0;
}
