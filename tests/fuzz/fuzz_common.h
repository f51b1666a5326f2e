/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the libFuzzer targets: silence the hook's logger (errors are
 * the expected outcome of almost every input) and a fixed operator config
 * and OCI state to resolve fuzzed input against.
 */
#ifndef SH_FUZZ_COMMON_H
#define SH_FUZZ_COMMON_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "input/container.h"
#include "input/oci.h"
#include "lib/error.h"
#include "lib/log.h"
#include "policy/policy.h"

/* A fresh error for each call: the targets look only at return codes. */
#define FUZZ_ERR (&(struct sh_error){ 0 })

/* Every policy kind, container-scoped annotations and a default policy. */
#define FUZZ_OPERATOR_CONFIG                                                 \
	"{\"defaults\":{\"bypass_prot_mem\":false,\"policy\":\"base\"},"     \
	"\"annotations\":{\"allow_bypass_prot_mem\":true,"                   \
	"\"allow_policies\":[\"restricted\",\"bulk\",\"locked\",\"base\"]}," \
	"\"on_unsupported\":\"warn\",\"log_level\":\"debug\","               \
	"\"policies\":{"                                                     \
	"\"base\":{\"socket\":{\"mark\":1}},"                                \
	"\"restricted\":{\"socket\":{\"deny\":[{\"family\":\"AF_INET6\"},"   \
	"{\"type\":\"SOCK_RAW\"}],\"mark\":7,\"priority\":2},"               \
	"\"setsockopt\":[{\"level\":\"SOL_SOCKET\",\"option\":\"SO_MARK\","  \
	"\"action\":\"deny\"},{\"level\":\"SOL_SOCKET\",\"option\":"         \
	"\"SO_RCVBUF\",\"action\":\"clamp\",\"max\":65536},{\"level\":"      \
	"\"SOL_TCP\",\"option\":\"TCP_CONGESTION\",\"action\":\"force\","    \
	"\"value\":\"reno\"}],\"getsockopt\":[{\"level\":\"SOL_SOCKET\","    \
	"\"option\":\"SO_MARK\",\"action\":\"deny\"}]},"                     \
	"\"bulk\":{\"bypass_prot_mem\":true},"                               \
	"\"locked\":{\"default\":\"deny\",\"setsockopt\":[{\"level\":6,"     \
	"\"option\":1,\"action\":\"force\",\"value\":1}]},"                  \
	"\"hidden\":{}}}"

#define FUZZ_STATE                                                           \
	"{\"ociVersion\":\"1.0.2\",\"id\":\"fuzz\",\"status\":\"creating\"," \
	"\"pid\":1,\"bundle\":\"/fuzz/bundle\"}"

static inline void fuzz_quiet(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	/* LOG_ERR is 3: a negative level drops every message. */
	log_set_level(-1);
	/* policy_describe_text() writes to stdout; libFuzzer uses stderr. */
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
}

/* Parses a fixed config once; aborts if it ever stops parsing. */
static inline const struct sh_config *fuzz_fixed_config(void)
{
	static struct sh_config cfg;
	static int done;
	static const char text[] = FUZZ_OPERATOR_CONFIG;

	if (!done) {
		if (config_parse("fuzz-operator.json", text, sizeof(text) - 1,
				 &cfg, FUZZ_ERR))
			abort();
		done = 1;
	}
	return &cfg;
}

/*
 * Invariants: an input the hook accepts must mean what it says. A failed
 * one aborts, so that libFuzzer reports it as a crash with its input.
 */
#define FUZZ_ASSERT(cond)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                    \
			abort();                                               \
		}                                                              \
	} while (0)

/*
 * A JSON string with a NUL inside, which C code would see cut short.
 * -DFUZZ_IGNORE_NUL turns this check off, to look for other failures
 * while a NUL bug is being fixed.
 */
static inline bool fuzz_cut_by_nul(struct json_object *s)
{
#ifdef FUZZ_IGNORE_NUL
	return false;
#endif
	return json_object_is_type(s, json_type_string) &&
	       strlen(json_object_get_string(s)) !=
		       (size_t)json_object_get_string_len(s);
}

/* No string anywhere in an accepted document has a NUL inside. */
static inline void fuzz_assert_no_nul(struct json_object *obj)
{
	size_t n;

	if (json_object_is_type(obj, json_type_string)) {
		FUZZ_ASSERT(!fuzz_cut_by_nul(obj));
	} else if (json_object_is_type(obj, json_type_array)) {
		n = json_object_array_length(obj);
		for (size_t i = 0; i < n; i++)
			fuzz_assert_no_nul(json_object_array_get_idx(obj, i));
	} else if (json_object_is_type(obj, json_type_object)) {
		json_object_object_foreach(obj, key, val) {
			(void)key;
			fuzz_assert_no_nul(val);
		}
	}
}

/* What the hook took from an accepted OCI state. */
static inline void fuzz_assert_state(const struct oci_state *st)
{
	struct json_object *v;

	FUZZ_ASSERT(st->id && oci_valid_id(st->id));
	FUZZ_ASSERT(json_object_object_get_ex(st->state_root, "id", &v) &&
		    !fuzz_cut_by_nul(v));
	if (st->bundle) {
		FUZZ_ASSERT(st->bundle[0] == '/');
		FUZZ_ASSERT(json_object_object_get_ex(st->state_root, "bundle",
						      &v) &&
			    !fuzz_cut_by_nul(v));
	}
	FUZZ_ASSERT(st->pid >= 0);
}

/* The annotation a resolved policy came from is the whole value. */
static inline void fuzz_assert_annotation(const struct oci_state *st,
					  enum sh_source src, const char *key)
{
	struct json_object *v;

	if (src != SRC_ANNOTATION)
		return;
	FUZZ_ASSERT(json_object_object_get_ex(st->annotations, key, &v));
	FUZZ_ASSERT(!fuzz_cut_by_nul(v));
}

/* Resolves st against cfg, read as prestart reads it (container.c), and
 * walks every consumer of the result. */
static inline void fuzz_resolve(const struct sh_config *cfg,
				const struct oci_state *st)
{
	struct sh_effective eff;
	struct sh_container c;
	struct json_object *desc;

	container_read(st, &c);
	if (policy_resolve(cfg, &c, &eff, FUZZ_ERR))
		return;
	fuzz_assert_annotation(st, eff.policy_source, eff.policy_key);
	fuzz_assert_annotation(st, eff.bypass_source, eff.bypass_key);
	if (eff.policy_source == SRC_ANNOTATION)
		FUZZ_ASSERT(eff.policy &&
			    config_policy_allowed(cfg, eff.policy->name));
	for (int k = 0; k < SH_PROG_KINDS; k++)
		policy_needs(&eff, k);
	policy_is_empty(&eff);
	desc = policy_describe(&eff);
	if (desc) {
		policy_describe_text(desc);
		json_object_to_json_string_ext(desc, JSON_C_TO_STRING_PLAIN);
		json_object_put(desc);
	}
}

#endif /* SH_FUZZ_COMMON_H */
