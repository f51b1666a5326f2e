/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_OCI_H
#define SH_OCI_H

#include <stdbool.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "lib/error.h"
#include "lib/sh_types.h"

#define SH_MAX_STATE_SIZE (1 << 20)
#define SH_MAX_BUNDLE_CONFIG (8 << 20)
/* "<bundle, cut at 128>/config.json" in messages. */
#define SH_OCI_BUNDLE_NAME_MAX 160

struct oci_state {
	const char *id;
	const char *status;
	const char *bundle; /* NULL when absent */
	pid_t pid; /* 0 when absent (podman's poststop) */
	struct json_object *annotations; /* merged: config.json, then state */
	struct json_object *state_root;
	struct json_object *config_root;
	/* The hook's own --cdi-device (container.h), or NULL: not freed. */
	const char *cdi_device;
};

int oci_parse_state(const char *text, size_t len, struct oci_state *st,
		    struct sh_error *err);
int oci_read_state(int fd, struct oci_state *st, struct sh_error *err);
/* Reads the bundle's config.json; its annotations join the state's. */
int oci_load_bundle(struct oci_state *st, struct sh_error *err);
int oci_parse_bundle_config(const char *what, const char *text, size_t len,
			    struct oci_state *st, struct sh_error *err);
const char *oci_annotation(const struct oci_state *st, const char *key);
bool oci_valid_id(const char *id);
void oci_state_free(struct oci_state *st);

#endif /* SH_OCI_H */
