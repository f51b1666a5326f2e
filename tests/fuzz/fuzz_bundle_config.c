// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the bundle's config.json, from which the hook takes
 * the annotations, merged under those of a fixed, valid OCI state, the
 * pid of the pod sandbox whose namespaces it joins (prestart.c), the
 * mounts that reach the cgroup2 tree, against a fixed mountinfo, and its
 * linux.sysctl against each policy's rules (sysctl.c).
 *
 * Modules: `oci.c`, `sysctl.c`
 */
#include "input/bundle.h"
#include "fuzz_common.h"
#include "lib/mountinfo.h"
#include "policy/sysctl.h"

static const char fixed_mountinfo[] =
	"31 22 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
	"90 24 0:38 / /run/a\\040b rw - cgroup2 none rw,nsdelegate\n";

static const char state_text[] = FUZZ_STATE;
static const char state_ann_text[] =
	"{\"id\":\"fuzz-ann\",\"pid\":2,\"bundle\":\"/b\",\"annotations\":"
	"{\"sockopt-hook.io/bypass-prot-mem\":\"false\",\"k\":\"v\"}}";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	fuzz_fixed_config();
	return 0;
}

static void one(const char *state, size_t state_len, const uint8_t *data,
		size_t size)
{
	struct oci_state st;

	if (oci_parse_state(state, state_len, &st, FUZZ_ERR))
		abort(); /* the fixed state must always parse */
	if (oci_parse_bundle_config("/fuzz/bundle/config.json",
				    (const char *)data, size, &st,
				    FUZZ_ERR) == 0) {
		const struct sh_config *cfg = fuzz_fixed_config();
		struct mountinfo mi = { .text = fixed_mountinfo };
		struct bundle_cg_reach reach;

		fuzz_resolve(cfg, &st);
		if (bundle_joined_pid(&st) < 0)
			abort(); /* a pid, or 0 */
		bundle_cgroup_reach(&st, "/sys/fs/cgroup/unified", &mi, &reach);
		if ((reach.fresh || reach.bound) != !!reach.why[0])
			abort(); /* a reach always names its mount */
		for (size_t i = 0; i < cfg->nr_policies; i++)
			FUZZ_ASSERT(sysctl_check(&cfg->policies[i], &st,
						 FUZZ_ERR) <= 0);
	}
	oci_state_free(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* oci_load_bundle() refuses more than this before parsing. */
	if (size > SH_MAX_BUNDLE_CONFIG)
		return 0;
	one(state_text, sizeof(state_text) - 1, data, size);
	one(state_ann_text, sizeof(state_ann_text) - 1, data, size);
	return 0;
}
