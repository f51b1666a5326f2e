/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the unit tests share: capturing the hook's one-line errors so tests
 * can assert on them, a temporary directory of the test's own (never
 * /run: unit tests need no root), whole files read back, the log read
 * back, a container from an OCI state's text, a JSON member by its path.
 */
#ifndef SH_UNIT_HELPERS_H
#define SH_UNIT_HELPERS_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "config/config.h"
#include "input/container.h"
#include "input/oci.h"
#include "lib/error.h"
#include "lib/log.h"
#include "policy/policy.h"
#include "tap.h"

static char captured[4096];
static int saved_stderr = -1;
static FILE *capture_file;

static inline void capture_start(void)
{
	fflush(stderr);
	capture_file = tmpfile();
	saved_stderr = dup(STDERR_FILENO);
	dup2(fileno(capture_file), STDERR_FILENO);
}

/* Returns what was written to stderr since capture_start(). */
static inline const char *capture_end(void)
{
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	rewind(capture_file);
	n = fread(captured, 1, sizeof(captured) - 1, capture_file);
	captured[n] = '\0';
	fclose(capture_file);
	return captured;
}

/* A failed call reported as the hook's commands report it: one line. */
static inline int reported(int r, const struct sh_error *err)
{
	if (r)
		error_report(err, r);
	return r;
}

static inline int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Parses an operator config as the hook does; a failure is reported. */
static inline int parse_config(const char *text, struct sh_config *cfg)
{
	struct sh_error err = { 0 };

	return reported(config_parse("t.json", text, strlen(text), cfg, &err),
			&err);
}

/* The same, with what it says on stderr kept in *said. */
static inline int parse_config_said(const char *text, struct sh_config *cfg,
				    const char **said)
{
	int r;

	capture_start();
	r = parse_config(text, cfg);
	*said = capture_end();
	return r;
}

/* Expects the config refused, with one error line that holds want. */
static inline void config_refused(const char *text, const char *want,
				  const char *what)
{
	struct sh_config cfg;
	const char *err;
	int r = parse_config_said(text, &cfg, &err);

	ok(r < 0 && strstr(err, want) && count_lines(err) == 1, "refuses %s",
	   what);
	if (r == 0)
		config_free(&cfg);
	else if (!strstr(err, want))
		printf("#   got: %s", err);
}

/* An OCI state with these annotations ("{...}" JSON object text), parsed
 * as the hook parses its stdin; a failure is reported. */
static inline int state_with_annotations(const char *annotations,
					 struct oci_state *st)
{
	struct sh_error err = { 0 };
	char text[8192];
	int n = snprintf(
		text, sizeof(text),
		"{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"created\",\"pid\":1,\"bundle\":\"/nonexistent\",\"annotations\":%s}",
		annotations);

	return reported(oci_parse_state(text, (size_t)n, st, &err), &err);
}

/* The effective policy of a container with these annotations under cfg,
 * as prestart resolves it; st must outlive eff. */
static inline int effective_for(const struct sh_config *cfg,
				const char *annotations, struct oci_state *st,
				struct sh_effective *eff)
{
	struct sh_error err = { 0 };
	struct sh_container c;
	int r = state_with_annotations(annotations, st);

	if (r)
		return r;
	container_read(st, &c);
	return reported(policy_resolve(cfg, &c, eff, &err), &err);
}

static char unit_dir[256];

__attribute__((unused)) static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Removes the test's directory and everything in it. */
static inline void tmpdir_remove(void)
{
	if (unit_dir[0])
		nftw(unit_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	unit_dir[0] = '\0';
}

/* A new empty directory of the test's own under $TMPDIR (or /tmp), mode
 * 0700, removed at exit; its path is unit_dir. */
static inline const char *tmpdir_make(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(unit_dir, sizeof(unit_dir), "%s/sockopt-unit.XXXXXX",
		 base && *base ? base : "/tmp");
	if (!mkdtemp(unit_dir)) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(tmpdir_remove);
	return unit_dir;
}

/* unit_dir/name in a buffer that lives until the next call with that buf. */
static inline const char *tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", unit_dir, name);
	return buf;
}

#define TMP_PATH(name) tmp_path((char[512]){ 0 }, 512, (name))

/* Writes text to path (created with mode); 0 or -1. */
static inline int write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	int r;

	if (!f)
		return -1;
	r = fputs(text, f) < 0 ? -1 : 0;
	if (fclose(f))
		r = -1;
	return r ?: chmod(path, mode);
}

/* The whole file, NUL-terminated, from the heap (free it), or NULL. */
static inline char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, used = 0, n;

	if (!f)
		return NULL;
	do {
		if (used + 4096 + 1 > cap) {
			char *more = realloc(buf, cap = used + 8192);

			if (!more) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = more;
		}
		n = fread(buf + used, 1, cap - used - 1, f);
		used += n;
	} while (n > 0);
	fclose(f);
	buf[used] = '\0';
	return buf;
}

/*
 * The log as a test reads it back: log_capture_begin() sends the hook's
 * log to a file of the test's own (unit_dir/log.capture; it makes the
 * directory if the test has none) in format; log_capture_end() closes it,
 * puts the text format back and returns what was written (from the heap,
 * free it), leaving the file empty for the next capture.
 */
static inline void log_capture_begin(enum log_format format)
{
	if (!unit_dir[0])
		tmpdir_make();
	if (truncate(TMP_PATH("log.capture"), 0) && errno != ENOENT)
		abort();
	if (log_set_file(TMP_PATH("log.capture")))
		abort();
	log_set_format(format);
}

static inline char *log_capture_end(void)
{
	char *text;

	log_close();
	log_set_format(LOG_FORMAT_TEXT);
	text = read_file(TMP_PATH("log.capture"));
	if (!text || truncate(TMP_PATH("log.capture"), 0))
		abort();
	return text;
}

/* The container an OCI state's text describes, as prestart reads it; the
 * state is parsed into *st (free it with oci_state_free()), and a state
 * the parser refuses ends the test. */
static inline void container_of_state(const char *state, struct oci_state *st,
				      struct sh_container *c)
{
	struct sh_error err = { 0 };

	if (reported(oci_parse_state(state, strlen(state), st, &err), &err))
		abort();
	container_read(st, c);
}

/* The member of o at path ("programs.0.state": names, and digits for an
 * array's items) as text: a string as it is, anything else as JSON
 * ("null" for null); NULL when there is no such member. The text lives
 * until the next call. */
static inline const char *json_path(struct json_object *o, const char *path)
{
	static char out[1024];
	char key[64];
	const char *dot;

	while (o && *path) {
		dot = strchr(path, '.');
		snprintf(key, sizeof(key), "%.*s",
			 (int)(dot ? dot - path : (long)strlen(path)), path);
		if (json_object_is_type(o, json_type_array)) {
			o = json_object_array_get_idx(o, key[0] - '0');
			if (!o)
				return NULL;
		} else if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		path = dot ? dot + 1 : "";
	}
	if (!o)
		return "null";
	snprintf(out, sizeof(out), "%s",
		 json_object_is_type(o, json_type_string) ?
			 json_object_get_string(o) :
			 json_object_to_json_string_ext(
				 o, JSON_C_TO_STRING_PLAIN));
	return out;
}

/* What one command printed and returned (run_command()). */
struct command_run {
	int rc;
	char out[16384];
	char err[4096];
};

/*
 * Runs a command as main() would after the global options: its run
 * function with argv "NAME WORDS..." (words split at spaces), config as
 * --config before the command (or NULL), --json when json. Its stdout and
 * stderr are kept in *run.
 */
#include "cmd/cli.h"
__attribute__((unused)) static void run_command(const struct cli_command *cmd,
						const char *config, bool json,
						const char *words,
						struct command_run *run)
{
	struct cli_global g = { .config = config, .json = json };
	char copy[1024], *argv[32], *save = NULL;
	int argc = 0, saved_out = dup(STDOUT_FILENO);
	FILE *out = tmpfile();
	size_t n;

	snprintf(copy, sizeof(copy), "%s", words);
	argv[argc++] = (char *)cmd->name;
	for (char *w = strtok_r(copy, " ", &save); w && argc < 31;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	fflush(stdout);
	dup2(fileno(out), STDOUT_FILENO);
	capture_start();
	run->rc = cmd->run(cmd, &g, argc, argv);
	fflush(stdout);
	snprintf(run->err, sizeof(run->err), "%s", capture_end());
	dup2(saved_out, STDOUT_FILENO);
	close(saved_out);
	rewind(out);
	n = fread(run->out, 1, sizeof(run->out) - 1, out);
	run->out[n] = '\0';
	fclose(out);
}

#endif /* SH_UNIT_HELPERS_H */
