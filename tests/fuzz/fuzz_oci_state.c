// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the OCI state the runtime writes on the hook's stdin.
 *
 * Modules: `oci.c`, `strictjson.c`
 */
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	fuzz_fixed_config();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_state st;

	/* oci_read_state() refuses more than this before parsing. */
	if (size > SH_MAX_STATE_SIZE)
		return 0;
	if (oci_parse_state((const char *)data, size, &st, FUZZ_ERR) == 0) {
		fuzz_assert_state(&st);
		oci_annotation(&st, SH_ANNOTATION_POLICY);
		oci_annotation(&st, SH_ANNOTATION_BYPASS);
		fuzz_resolve(fuzz_fixed_config(), &st);
	}
	oci_state_free(&st);
	return 0;
}
