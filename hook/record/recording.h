/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Record mode, one recording from start to file: its provenance (kept in
 * the state directory while it runs), and the file it ends in,
 * <record.dir>/<record>/<namespace>_<pod>_<container>_<id>.json, a valid
 * operator config:
 *
 *   { "recordings": [ { provenance, "footprint": [...], ... } ],
 *     "policies": { "<record>": { proposed policy } } }
 *
 * The config parser reads "recordings" as a note and checks nothing in it;
 * `record merge` reads it back.
 */
#ifndef SH_RECORDING_H
#define SH_RECORDING_H

#include <json-c/json.h>

#include "config/config.h"
#include "policy/policy.h"
#include "prog/load.h"
#include "record/footprint.h"
#include "state/state.h"

/* The recording file's name: namespace, pod, container (or the id's first
 * twelve characters), and the first twelve digits of the recording id;
 * "-" for a name the runtime did not give. */
#define SH_RECORDING_FILE_MAX 256
void recording_file_name(const struct sh_attachment *att, char *buf,
			 size_t len);

/* At prestart: pins the tables and writes the provenance known now (the
 * running policy as the config has it, the kernel, the hook's version, the
 * start time). Nothing when the container is not recorded. */
int recording_start(const struct sh_loaded *l, const struct sh_attachment *att,
		    const struct sh_effective *eff, const struct sh_config *cfg,
		    struct sh_error *err);
/* Undoes recording_start (prestart failed after it). */
void recording_abort(const struct sh_attachment *att);

/* The provenance of a recording and its footprint so far (with "ended"
 * when it is over): NULL, with err, when it cannot be known. */
struct json_object *recording_provenance(const struct sh_attachment *att,
					 const struct footprint *fp, bool ended,
					 struct sh_error *err);
/* The whole file: recordings (taken) and the proposal for fp under the
 * running policy, named name. NULL, with err in one line, when the config
 * parser does not take it. */
struct json_object *recording_document(struct json_object *recordings,
				       const struct footprint *fp,
				       struct json_object *running,
				       const char *name, struct sh_error *err);
/* The running policy in a provenance object (not taken), or NULL. */
struct json_object *recording_running(struct json_object *prov);

/*
 * For a container that is gone: writes its recording file and removes its
 * pins. 0 when written, when there was nothing to write, or when it never
 * can be (said in one line); -EAGAIN when record.dir cannot be trusted or
 * written now (said in one line): the pins and the state record stay for a
 * later gc.
 */
int recording_save(const struct sh_attachment *att);

#endif /* SH_RECORDING_H */
