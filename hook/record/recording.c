// SPDX-License-Identifier: GPL-2.0-only
/*
 * A recording from prestart to its file. At prestart the running policy
 * is copied as the config has it (the operator may change the config
 * before the container ends), with what else is known then, into
 * "recording-<id>" in the state directory. Whoever releases the container
 * (poststop, gc, the reaper) builds the file from that and the pinned
 * tables, has the config parser check it, and writes it once under
 * record.dir, which is trusted as the state directory is (trust.h). Until
 * it is written, nothing is removed: a record.dir that cannot be trusted
 * or written leaves the pins and the state record for the next gc.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "config/names.h"
#include "input/strictjson.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "lib/trust.h"
#include "lib/version.h"
#include "record/recording.h"
#include "state/state.h"

#define RECORDING_PREFIX "recording-"
#define RECORDING_NAME_MAX (sizeof(RECORDING_PREFIX) + 16)
#define RECORDING_TIME_MAX 32
#define RECORDING_SHORT_ID 12

static void sidecar_name(const struct sh_attachment *att, char *buf, size_t len)
{
	char id[17];

	footprint_recording_id(att, id);
	snprintf(buf, len, RECORDING_PREFIX "%s", id);
}

/* Only [A-Za-z0-9.-] of a name the runtime chose, at most max bytes;
 * '-' for the rest, and for a name it did not give. */
static size_t put_part(char *buf, size_t len, const char *name, size_t max)
{
	size_t n = 0;

	if (!name || !*name)
		name = "-";
	for (; name[n] && n < max && n + 1 < len; n++)
		buf[n] = strchr("abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-",
				name[n]) ?
				 name[n] :
				 '-';
	buf[n] = '\0';
	return n;
}

void recording_file_name(const struct sh_attachment *att, char *buf, size_t len)
{
	char ns[64], pod[101], ctr[64], id[17], who[RECORDING_SHORT_ID + 1];

	put_part(ns, sizeof(ns), att->k8s_namespace, 63);
	put_part(pod, sizeof(pod), att->pod, 100);
	snprintf(who, sizeof(who), "%s", att->id);
	put_part(ctr, sizeof(ctr), att->container[0] ? att->container : who,
		 63);
	footprint_recording_id(att, id);
	snprintf(buf, len, "%s_%s_%s_%.*s.json", ns, pod, ctr,
		 RECORDING_SHORT_ID, id);
}

static void now_text(char buf[RECORDING_TIME_MAX])
{
	time_t t = time(NULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm) ||
	    !strftime(buf, RECORDING_TIME_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, RECORDING_TIME_MAX, "%lld", (long long)t);
}

/* The running policy's config JSON, shared with cfg, or NULL. */
static struct json_object *policy_config(const struct sh_effective *eff,
					 const struct sh_config *cfg)
{
	struct json_object *policies, *p;

	if (!eff->policy ||
	    !json_object_object_get_ex(cfg->root, "policies", &policies) ||
	    !json_object_object_get_ex(policies, eff->policy->name, &p))
		return NULL;
	return p;
}

static int write_sidecar(const struct sh_attachment *att,
			 const struct sh_effective *eff,
			 const struct sh_config *cfg, struct sh_error *err)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	struct json_object *running = policy_config(eff, cfg);
	char name[RECORDING_NAME_MAX], started[RECORDING_TIME_MAX];
	const char *text;
	struct utsname u;

	if (!o)
		return error_set(err, -ENOMEM, "out of memory");
	now_text(started);
	jsonw_str_or_null(o, "policy", att->policy);
	jsonw_str_or_null(o, "mode", att->audit ? "audit" : "enforce");
	jsonw_str_or_null(o, "kernel", uname(&u) == 0 ? u.release : NULL);
	jsonw_str_or_null(o, "hook_version", SH_VERSION);
	jsonw_str_or_null(o, "started", started);
	json_object_object_add(o, "policy_config",
			       running ? json_object_get(running) : NULL);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	sidecar_name(att, name, sizeof(name));
	return state_attr_replace(name, text, strlen(text), err);
}

static void remove_sidecar(const struct sh_attachment *att)
{
	struct sh_error err = { 0 };
	_cleanup_close_ int dir = state_dir_open(/* create= */ false, &err);
	char name[RECORDING_NAME_MAX];

	sidecar_name(att, name, sizeof(name));
	if (dir >= 0)
		state_file_unlink_at(dir, name);
}

/* record.dir/<record>, trusted, made when missing: an fd. */
static int open_out_dir(const struct sh_attachment *att, struct sh_error *err)
{
	_cleanup_close_ int top = -1, dir = -1;
	char path[SH_RECORD_DIR_MAX + SH_POLICY_NAME_MAX + 2];

	if (!names_record_ok(att->footprint) || att->footprint_dir[0] != '/')
		return error_set(err, -EINVAL, "its record is invalid");
	top = trust_open_dir_path("record.dir", att->footprint_dir,
				  /* create= */ true, 0750, err);
	if (top < 0)
		return top;
	snprintf(path, sizeof(path), "%s/%s", att->footprint_dir,
		 att->footprint);
	dir = trust_open_dir_at(top, att->footprint, "record.dir", path,
				/* create= */ true, 0750, err);
	return dir < 0 ? dir : take_fd(&dir);
}

int recording_start(const struct sh_loaded *l, const struct sh_attachment *att,
		    const struct sh_effective *eff, const struct sh_config *cfg,
		    struct sh_error *err)
{
	int r;

	if (!att->footprint[0])
		return 0;
	/* Refused now rather than found out when the container is gone. */
	r = open_out_dir(att, err);
	if (r < 0)
		return r;
	close(r);
	r = footprint_pin(l, att, err);
	if (r)
		goto abort;
	r = write_sidecar(att, eff, cfg, err);
	if (r) {
		error_errno(err, r, "cannot write the provenance of %s in %s",
			    att->id, state_dir());
		goto abort;
	}
	return 0;
abort:
	recording_abort(att);
	return r;
}

void recording_abort(const struct sh_attachment *att)
{
	if (!att->footprint[0])
		return;
	footprint_unpin(att);
	remove_sidecar(att);
}

static struct json_object *read_sidecar(const struct sh_attachment *att,
					struct sh_error *err)
{
	char name[RECORDING_NAME_MAX];
	_cleanup_free_ char *text = NULL;
	struct json_object *o = NULL;
	size_t len;
	int r;

	sidecar_name(att, name, sizeof(name));
	r = state_attr_read(name, SH_MAX_FILE_SIZE, &text, &len, err);
	if (r == -ENOENT && !att->policy[0])
		return json_object_new_object(); /* an older hook's: no policy */
	if (r == -ENODATA) {
		/* An earlier release kept it as the file's content; so could
		 * a uid 0 without capabilities, and the two look alike. */
		error_set(
			err, -ENODATA,
			"its provenance %s in %s, which holds its running policy, is not the attribute " SH_ATTACHMENT_XATTR
			" that only the hook, with CAP_SYS_ADMIN, writes (an earlier release kept it as the file's content, which a uid 0 without capabilities can write too): not read; record the workload again under this release",
			name, state_dir());
		return NULL;
	}
	if (r) {
		error_errno(
			err, r,
			"its provenance %s in %s, which holds its running policy, cannot be read",
			name, state_dir());
		return NULL;
	}
	if (strictjson_parse(name, text, len, &o, err))
		return NULL;
	if (json_object_is_type(o, json_type_object))
		return o;
	json_object_put(o);
	error_set(err, -EBADMSG, "its provenance %s is not an object", name);
	return NULL;
}

static void copy_key(struct json_object *to, struct json_object *from,
		     const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(from, key, &v);
	json_object_object_add(to, key, json_object_get(v));
}

struct json_object *recording_provenance(const struct sh_attachment *att,
					 const struct footprint *fp, bool ended,
					 struct sh_error *err)
{
	_cleanup_json_ struct json_object *side = read_sidecar(att, err);
	struct json_object *o;
	char now[RECORDING_TIME_MAX];

	if (!side)
		return NULL;
	o = json_object_new_object();
	jsonw_str_or_null(o, "record", att->footprint);
	jsonw_str_or_null(o, "namespace", att->k8s_namespace);
	jsonw_str_or_null(o, "pod", att->pod);
	jsonw_str_or_null(o, "container", att->container);
	jsonw_str_or_null(o, "container_id", att->id);
	jsonw_str_or_null(o, "policy", att->policy);
	copy_key(o, side, "mode");
	copy_key(o, side, "kernel");
	copy_key(o, side, "hook_version");
	copy_key(o, side, "started");
	now_text(now);
	jsonw_str_or_null(o, "ended", ended ? now : NULL);
	footprint_json_add(o, fp);
	copy_key(o, side, "policy_config");
	return o;
}

struct json_object *recording_running(struct json_object *prov)
{
	struct json_object *p = NULL;

	json_object_object_get_ex(prov, "policy_config", &p);
	return json_object_is_type(p, json_type_object) ? p : NULL;
}

struct json_object *recording_document(struct json_object *recordings,
				       const struct footprint *fp,
				       struct json_object *running,
				       const char *name, struct sh_error *err)
{
	_cleanup_json_ struct json_object *doc = json_object_new_object();
	_cleanup_json_ struct json_object *prop = NULL;
	struct json_object *policies = NULL;
	struct sh_error why = { 0 };
	struct sh_config cfg;
	const char *text;

	json_object_object_add(doc, "recordings", recordings);
	prop = footprint_policy_propose(fp, running, name, &why);
	if (!prop || !json_object_object_get_ex(prop, "policies", &policies)) {
		error_set(err, why.code ?: -ENOMEM,
			  "no policy can be proposed: %s", why.msg);
		return NULL;
	}
	json_object_object_add(doc, "policies", json_object_get(policies));
	/* The same parser as the operator's config: what it refuses is
	 * never written. */
	text = json_object_to_json_string(doc);
	if (config_parse("the proposed policy", text, strlen(text), &cfg,
			 &why)) {
		error_set(err, why.code, "%s", why.msg);
		return NULL;
	}
	config_free(&cfg);
	return TAKE_PTR(doc);
}

/* The file for what fp holds: 0 written (or already there), else -errno
 * with err; -ESTALE when it never can be. */
static int write_file(int dir, const struct sh_attachment *att,
		      const struct footprint *fp, const char *name,
		      struct sh_error *err)
{
	_cleanup_json_ struct json_object *doc = NULL;
	struct json_object *prov, *recordings;
	const char *text;
	int r;

	prov = recording_provenance(att, fp, /* ended= */ true, err);
	if (!prov)
		return -ESTALE;
	recordings = json_object_new_array();
	json_object_array_add(recordings, prov);
	doc = recording_document(recordings, fp, recording_running(prov),
				 att->footprint, err);
	if (!doc)
		return -ESTALE;
	text = json_object_to_json_string_ext(
		doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			     JSON_C_TO_STRING_NOSLASHESCAPE);
	r = fileio_create_at(dir, name, text, strlen(text), 0640);
	if (r == -EEXIST) {
		log_info("recording of %s is already in %s/%s/%s", att->id,
			 att->footprint_dir, att->footprint, name);
		return 0;
	}
	if (r)
		return error_errno(err, r, "cannot write %s/%s/%s",
				   att->footprint_dir, att->footprint, name);
	log_info("recorded the footprint of %s (record '%s') into %s/%s/%s%s",
		 att->id, att->footprint, att->footprint_dir, att->footprint,
		 name,
		 fp->overflow[SH_PROG_SET] || fp->overflow[SH_PROG_SOCK] ?
			 " (incomplete: a footprint table overflowed)" :
			 "");
	return 0;
}

int recording_save(const struct sh_attachment *att)
{
	_cleanup_free_ struct footprint *fp = NULL;
	struct sh_error err = { 0 };
	_cleanup_close_ int dir = -1;
	char name[SH_RECORDING_FILE_MAX];
	int r = 0;

	if (!att->footprint[0])
		return 0;
	/* Locked: two releasers of one container (poststop and the reaper)
	 * write it once. */
	dir = open_out_dir(att, &err);
	if (dir >= 0 && flock(dir, LOCK_EX) < 0)
		r = error_errno(&err, -errno, "cannot lock %s/%s",
				att->footprint_dir, att->footprint);
	if (dir < 0 || r) {
		log_warn("recording of %s kept in its pins for gc: %s", att->id,
			 err.msg);
		return -EAGAIN;
	}
	fp = malloc(sizeof(*fp));
	r = fp ? footprint_read(att, fp, &err) : -ENOMEM;
	if (r == -ENOENT) {
		/* Another releaser wrote it. */
		log_debug("recording of %s: %s", att->id, err.msg);
		remove_sidecar(att);
		return 0;
	}
	if (r)
		goto done;
	recording_file_name(att, name, sizeof(name));
	r = write_file(dir, att, fp, name, &err);
done:
	if (r && r != -ESTALE) {
		log_warn("recording of %s kept in its pins for gc: %s", att->id,
			 fp ? err.msg : strerror(-r));
		return -EAGAIN;
	}
	if (r)
		log_warn("recording of %s (record '%s') not written: %s",
			 att->id, att->footprint, err.msg);
	recording_abort(att);
	return 0;
}
