// SPDX-License-Identifier: GPL-2.0-only
/*
 * The plan of `runtime configure` (wiring.h): every file with its old and
 * new text, known before the first write. Applying it writes each new
 * text beside its file and renames it over, the runtime's drop-in last,
 * so that a runtime restarting meanwhile never reads a drop-in naming a
 * base spec that is not there yet; a failed step puts back every file
 * already replaced. The plan's dry run prints it as a diff (the last part
 * of this file).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "wiring/toml/toml.h"
#include "wiring/wiring.h"

#define WIRING_FILE_MAX (1 << 20)

char *wiring_read(const char *path, int *r)
{
	char *text = NULL;
	size_t len;

	*r = fileio_read_at(AT_FDCWD, path, 1, WIRING_FILE_MAX, &text, &len);
	return *r ? NULL : text;
}

static struct wiring_file *plan_slot(struct wiring_plan *plan, const char *path,
				     char *text, struct sh_error *err)
{
	struct wiring_file *f;

	if (plan->nr_files == SH_WIRING_MAX_FILES) {
		free(text);
		error_set(err, -E2BIG, "runtime: more than %d files",
			  SH_WIRING_MAX_FILES);
		return NULL;
	}
	f = &plan->files[plan->nr_files];
	*f = (struct wiring_file){ .path = strdup(path), .text = text };
	if (!f->path) {
		free(text);
		error_set(err, -ENOMEM, "runtime: out of memory");
		return NULL;
	}
	plan->nr_files++;
	return f;
}

static int plan_add(struct wiring_plan *plan, const char *path, char *text,
		    mode_t mode, struct sh_error *err)
{
	struct wiring_file *f = plan_slot(plan, path, text, err);
	int r;

	if (!f)
		return err->code;
	f->mode = mode;
	f->old = wiring_read(path, &r);
	if (r && r != -ENOENT)
		return error_errno(err, r, "cannot read %.200s", path);
	return 0;
}

int wiring_plan_link(struct wiring_plan *plan, const char *path,
		     const char *target, struct sh_error *err)
{
	char *text = target ? strdup(target) : NULL;
	struct wiring_file *f;
	char now[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (target && !text)
		return error_set(err, -ENOMEM, "runtime: out of memory");
	f = plan_slot(plan, path, text, err);
	if (!f)
		return err->code;
	f->link = true;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ?
			       0 :
			       error_errno(err, -errno, "cannot read %.200s",
					   path);
	if (!S_ISLNK(st.st_mode))
		return error_set(err, -EEXIST,
				 "%.200s is not a symbolic link: left alone",
				 path);
	n = readlink(path, now, sizeof(now) - 1);
	if (n < 0)
		return error_errno(err, -errno, "cannot read %.200s", path);
	now[n] = '\0';
	f->old = strdup(now);
	return f->old ? 0 : error_set(err, -ENOMEM, "runtime: out of memory");
}

struct wiring_file *wiring_plan_find(struct wiring_plan *plan, const char *path)
{
	for (int i = 0; i < plan->nr_files; i++)
		if (!strcmp(plan->files[i].path, path))
			return &plan->files[i];
	return NULL;
}

int wiring_plan_write(struct wiring_plan *plan, const char *path, char *text,
		      mode_t mode, struct sh_error *err)
{
	if (!text)
		return error_set(err, -ENOMEM, "runtime: out of memory");
	return plan_add(plan, path, text, mode, err);
}

int wiring_plan_remove(struct wiring_plan *plan, const char *path,
		       struct sh_error *err)
{
	return plan_add(plan, path, NULL, 0, err);
}

int wiring_plan_remove_ours(struct wiring_plan *plan, const char *path,
			    bool (*is_ours)(const char *text),
			    const char *not_ours, struct sh_error *err)
{
	_cleanup_free_ char *text = NULL;
	int r;

	text = wiring_read(path, &r);
	if (r == -ENOENT)
		return wiring_plan_remove(plan, path, err);
	if (r)
		return error_errno(err, r, "cannot read %s", path);
	if (!is_ours(text))
		return error_set(err, -EPERM, "%s %s: left alone", path,
				 not_ours);
	return wiring_plan_remove(plan, path, err);
}

void wiring_plan_prune(struct wiring_plan *plan, const char *dir)
{
	for (int i = 0; i < SH_WIRING_MAX_PRUNE; i++) {
		if (!strcmp(plan->prune[i], dir))
			return;
		if (!plan->prune[i][0]) {
			snprintf(plan->prune[i], sizeof(plan->prune[i]), "%s",
				 dir);
			return;
		}
	}
}

void wiring_plan_note(struct wiring_plan *plan, const char *fmt, ...)
{
	va_list ap;

	if (plan->nr_notes == SH_WIRING_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(plan->notes[plan->nr_notes++], SH_WIRING_NOTE_MAX, fmt, ap);
	va_end(ap);
}

bool wiring_file_changes(const struct wiring_file *f)
{
	if (!f->text || !f->old)
		return f->text || f->old;
	return strcmp(f->text, f->old) != 0;
}

int wiring_plan_changes(const struct wiring_plan *plan)
{
	int n = 0;

	for (int i = 0; i < plan->nr_files; i++)
		n += wiring_file_changes(&plan->files[i]);
	return n + plan->actions;
}

int wiring_plan_runtime_changes(const struct wiring_plan *plan)
{
	int n = 0;

	for (int i = 0; i < plan->nr_files; i++)
		n += !plan->files[i].unit &&
		     wiring_file_changes(&plan->files[i]);
	return n;
}

static const char *verb(const struct wiring_file *f, bool dry_run)
{
	if (!wiring_file_changes(f))
		return f->text ? "unchanged" : "absent";
	if (!f->text)
		return dry_run ? "would remove" : "removed";
	if (!f->old)
		return dry_run ? "would create" : "created";
	return dry_run ? "would update" : "updated";
}

void wiring_plan_print(const struct wiring_plan *plan, FILE *out, bool dry_run)
{
	for (int i = 0; i < plan->nr_files; i++) {
		const struct wiring_file *f = &plan->files[i];

		if (f->link && f->text) {
			fprintf(out, "%s: %s (-> %s)\n", f->path,
				verb(f, dry_run), f->text);
			continue;
		}
		fprintf(out, "%s: %s\n", f->path, verb(f, dry_run));
		if (dry_run && wiring_file_changes(f) && f->text && !f->copy &&
		    wiring_diff_print(out, f->old, f->text, f->path))
			fprintf(out, "(too large to show a diff)\n");
	}
	for (int i = 0; i < SH_WIRING_MAX_PRUNE; i++)
		if (plan->pruned[i])
			fprintf(out, "%s: removed (empty)\n", plan->prune[i]);
	for (int i = 0; i < plan->nr_notes; i++)
		fprintf(out, "%s\n", plan->notes[i]);
}

/* path's text through a temp file beside it, renamed over it. */
static int replace(const char *path, const char *text, mode_t mode)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (asprintf(&tmp, "%s.oci-sockopt-hook.tmp", path) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -errno;
	r = fileio_write_all(fd, text, strlen(text));
	if (!r && (fchmod(fd, mode) < 0 || fsync(fd) < 0))
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

/* path as a symbolic link to target, through a temp link renamed over. */
static int replace_link(const char *path, const char *target)
{
	_cleanup_free_ char *tmp = NULL;

	if (asprintf(&tmp, "%s.oci-sockopt-hook.tmp", path) < 0)
		return -ENOMEM;
	unlink(tmp);
	if (symlink(target, tmp) < 0)
		return -errno;
	if (rename(tmp, path) < 0) {
		int r = -errno;

		unlink(tmp);
		return r;
	}
	return 0;
}

static int put(const struct wiring_file *f, const char *text)
{
	if (text && f->link)
		return replace_link(f->path, text);
	if (text)
		return replace(f->path, text, f->mode ? f->mode : 0644);
	return unlink(f->path) < 0 && errno != ENOENT ? -errno : 0;
}

/* mkdir -p of a file's directory, mode 0755. */
static int make_dir_of(const char *path, struct sh_error *err)
{
	_cleanup_free_ char *dir = strdup(path);
	char *slash;

	if (!dir)
		return error_set(err, -ENOMEM, "runtime: out of memory");
	for (slash = strchr(dir + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return error_errno(err, -errno, "cannot make %.200s",
					   dir);
		*slash = '/';
	}
	return 0;
}

int wiring_plan_apply(struct wiring_plan *plan, struct sh_error *err)
{
	int i, r;

	for (i = 0; i < plan->nr_files; i++) {
		const struct wiring_file *f = &plan->files[i];

		if (!wiring_file_changes(f))
			continue;
		if (f->text && make_dir_of(f->path, err))
			return err->code;
		r = put(f, f->text);
		if (r) {
			error_errno(err, r, "cannot write %.200s", f->path);
			goto undo;
		}
	}
	for (i = 0; i < SH_WIRING_MAX_PRUNE; i++)
		plan->pruned[i] = plan->prune[i][0] &&
				  rmdir(plan->prune[i]) == 0;
	return 0;
undo:
	/* The files before the one that failed get their old text back. */
	for (i--; i >= 0; i--)
		if (wiring_file_changes(&plan->files[i]) &&
		    put(&plan->files[i], plan->files[i].old))
			error_note(err, "%.200s left as written",
				   plan->files[i].path);
	return r;
}

void wiring_plan_free(struct wiring_plan *plan)
{
	for (int i = 0; i < plan->nr_files; i++) {
		free(plan->files[i].path);
		free(plan->files[i].text);
		free(plan->files[i].old);
	}
	plan->nr_files = 0;
}

char *wiring_toml_text(struct json_object *doc, const char *fmt, ...)
{
	_cleanup_free_ char *about = NULL, *header = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&about, fmt, ap);
	va_end(ap);
	if (n < 0) {
		about = NULL;
		return NULL;
	}
	if (asprintf(&header, SH_WIRING_MARK "\n%s", about) < 0) {
		header = NULL;
		return NULL;
	}
	return toml_write_text(header, doc);
}

int wiring_hook_binary(const char **hook, char *buf, struct sh_error *err)
{
	struct stat st;

	if (!*hook) {
		if (!realpath("/proc/self/exe", buf))
			return error_errno(
				err, -errno,
				"cannot tell where this binary is: use --hook-path");
		*hook = buf;
	}
	if ((*hook)[0] != '/' || stat(*hook, &st) < 0)
		return error_set(
			err, -ENOENT,
			"--hook-path %.200s: need the absolute path of an existing binary",
			*hook);
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0100) || st.st_uid != 0 ||
	    (st.st_mode & 022))
		return error_set(
			err, -EPERM,
			"%.200s: the hook runs as root for every container: it must be an executable owned by root and writable by no one else",
			*hook);
	return 0;
}

/*
 * A unified line diff of a file's old and new text, for `runtime
 * configure --dry-run`: what an operator reviews before the runtime's
 * config changes. Files are small (a drop-in, a base spec): a longest
 * common subsequence table over lines is enough, capped in size.
 */
#define DIFF_MAX_LINES 2000 /* a table of 8 MB at most */
#define DIFF_CONTEXT 3

struct lines {
	const char **at;
	size_t *len;
	size_t n;
};

static int split(const char *text, struct lines *l)
{
	size_t cap = 0;

	l->n = 0;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (l->n == DIFF_MAX_LINES)
			return -EFBIG;
		if (l->n == cap) {
			const char **at;
			size_t *lens;

			cap = cap ? cap * 2 : 64;
			/* Each array kept in l until its bigger copy is had:
			 * the caller frees whichever it holds. */
			at = realloc(l->at, cap * sizeof(*l->at));
			if (!at)
				return -ENOMEM;
			l->at = at;
			lens = realloc(l->len, cap * sizeof(*l->len));
			if (!lens)
				return -ENOMEM;
			l->len = lens;
		}
		l->at[l->n] = p;
		l->len[l->n++] = len;
		p = nl ? nl + 1 : p + len;
	}
	return 0;
}

static bool same(const struct lines *a, size_t i, const struct lines *b,
		 size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->at[i], b->at[j], a->len[i]);
}

/* The edit script: ' ', '-', '+' per step, and the line each names. */
struct edit {
	char op;
	size_t line;
};

static int script(const struct lines *a, const struct lines *b,
		  struct edit *ret, size_t *n)
{
	size_t w = b->n + 1;
	_cleanup_free_ uint16_t *lcs = calloc((a->n + 1) * w, sizeof(*lcs));
	size_t i = 0, j = 0;

	if (!lcs)
		return -ENOMEM;
	for (size_t x = a->n; x-- > 0;)
		for (size_t y = b->n; y-- > 0;)
			lcs[x * w + y] = same(a, x, b, y) ?
						 lcs[(x + 1) * w + y + 1] + 1 :
					 lcs[(x + 1) * w + y] >
							 lcs[x * w + y + 1] ?
						 lcs[(x + 1) * w + y] :
						 lcs[x * w + y + 1];
	*n = 0;
	while (i < a->n || j < b->n) {
		if (i < a->n && j < b->n && same(a, i, b, j)) {
			ret[(*n)++] = (struct edit){ ' ', i++ };
			j++;
		} else if (j < b->n &&
			   (i == a->n ||
			    lcs[i * w + j + 1] > lcs[(i + 1) * w + j])) {
			ret[(*n)++] = (struct edit){ '+', j++ };
		} else {
			ret[(*n)++] = (struct edit){ '-', i++ };
		}
	}
	return 0;
}

static void print_line(FILE *out, char op, const struct lines *l, size_t i)
{
	fprintf(out, "%c%.*s\n", op, (int)l->len[i], l->at[i]);
}

/* Hunks: each change with DIFF_CONTEXT unchanged lines around it. */
static void print_hunks(FILE *out, const struct edit *e, size_t n,
			const struct lines *a, const struct lines *b)
{
	size_t k = 0;

	while (k < n) {
		size_t start, end, next;

		while (k < n && e[k].op == ' ')
			k++;
		if (k == n)
			return;
		start = k > DIFF_CONTEXT ? k - DIFF_CONTEXT : 0;
		for (end = k, next = k; next < n; next++) {
			if (e[next].op != ' ')
				end = next;
			else if (next - end > 2 * DIFF_CONTEXT)
				break;
		}
		end = end + DIFF_CONTEXT + 1 < n ? end + DIFF_CONTEXT + 1 : n;
		fputs("@@\n", out);
		for (size_t x = start; x < end; x++)
			print_line(out, e[x].op, e[x].op == '+' ? b : a,
				   e[x].line);
		k = end;
	}
}

int wiring_diff_print(FILE *out, const char *old, const char *new_text,
		      const char *path)
{
	struct lines a = { 0 }, b = { 0 };
	_cleanup_free_ struct edit *e = NULL;
	size_t n = 0;
	int r = split(old, &a) ?: split(new_text, &b);

	if (r)
		goto free_lines;
	e = calloc(a.n + b.n + 1, sizeof(*e));
	r = e ? script(&a, &b, e, &n) : -ENOMEM;
	if (r)
		goto free_lines;
	fprintf(out, "--- %s%s\n+++ %s%s\n", old ? "" : "/dev/null",
		old ? path : "", new_text ? "" : "/dev/null",
		new_text ? path : "");
	print_hunks(out, e, n, &a, &b);
free_lines:
	free(a.at);
	free(a.len);
	free(b.at);
	free(b.len);
	return r;
}

/*
 * The runtimes' own tools, run by `runtime configure` (wiring.h):
 * `containerd --version`, `containerd config dump`, `ctr oci spec`,
 * `systemctl restart`. Their word is the truth about the node: the
 * config a runtime would load is what its own loader makes of the files,
 * not what we would guess from them.
 *
 * A view shows a command one directory as it would be with one file
 * changed: in a mount namespace of the child's own, a tmpfs over the
 * directory holds copies of its files, less that one or with its new
 * text. So `containerd config dump` tells what containerd would load with
 * the drop-in as planned, before the node's directory is touched.
 */

#define EXEC_OUT_MAX (4 << 20)
#define EXEC_ERR_MAX 512
#define EXEC_TIMEOUT_MS 60000
#define EXEC_VIEW_FILE_MAX (1 << 20)

/* One entry of the real directory into the view. */
static int copy_entry(int from, int to, const char *name)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	char link[4096];
	struct stat st;
	ssize_t n;
	size_t len;
	int r;

	if (fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(from, name, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = '\0';
		return symlinkat(link, to, name) < 0 ? -errno : 0;
	}
	if (!S_ISREG(st.st_mode))
		return 0; /* a glob of *.toml never loads a directory */
	r = fileio_read_at(from, name, 1, EXEC_VIEW_FILE_MAX, &text, &len);
	if (r)
		return r;
	fd = openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    st.st_mode & 07777);
	return fd < 0 ? -errno : fileio_write_all(fd, text, len);
}

static int fill_view(int from, int to, const struct wiring_view *v)
{
	_cleanup_closedir_ DIR *d = fdopendir(dup(from));
	_cleanup_close_ int fd = -1;
	struct dirent *e;
	int r;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, v->name))
			continue;
		r = copy_entry(from, to, e->d_name);
		if (r)
			return r;
	}
	if (!v->text)
		return 0;
	fd = openat(to, v->name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fileio_write_all(fd, v->text, strlen(v->text));
}

/* In the child: the view in a mount namespace of its own. */
static int make_view(const struct wiring_view *v)
{
	_cleanup_close_ int from =
		open(v->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int to = -1;

	if (from < 0 || unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", v->dir, "tmpfs", MS_NOSUID | MS_NODEV,
		  "mode=0755,size=16m") < 0)
		return -errno;
	to = open(v->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return to < 0 ? -errno : fill_view(from, to, v);
}

static void child(char *const argv[], const struct wiring_view *view, int out,
		  int err)
{
	int r;

	if (dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0)
		_exit(126);
	if (view && view->dir && (r = make_view(view))) {
		dprintf(STDERR_FILENO, "cannot show %s with %s changed: %s\n",
			view->dir, view->name, strerror(-r));
		_exit(126);
	}
	execvp(argv[0], argv);
	dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

struct sink {
	int fd;
	char *buf;
	size_t len, max;
	bool keep_tail; /* stderr: its last bytes are the reason */
};

/* Keeps the last s->max bytes of what came. */
static void keep_tail(struct sink *s, const char *data, size_t n)
{
	if (n >= s->max) {
		memcpy(s->buf, data + n - s->max, s->max);
		s->len = s->max;
		return;
	}
	if (s->len + n > s->max) {
		size_t drop = s->len + n - s->max;

		memmove(s->buf, s->buf + drop, s->len - drop);
		s->len -= drop;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
}

/* One read into the sink; 0 at EOF. */
static ssize_t drain(struct sink *s)
{
	char tmp[4096];
	ssize_t n = read(s->fd, tmp, sizeof(tmp));

	if (n <= 0)
		return n < 0 && errno == EINTR ? 1 : n < 0 ? -errno : 0;
	if (s->keep_tail) {
		keep_tail(s, tmp, n);
	} else {
		if (s->len + n > s->max)
			return -EFBIG;
		memcpy(s->buf + s->len, tmp, n);
		s->len += n;
	}
	s->buf[s->len] = '\0';
	return n;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Reads both pipes to their end, or until the deadline. */
static int collect(struct sink s[2])
{
	long long end = now_ms() + EXEC_TIMEOUT_MS;
	struct pollfd p[2] = { { s[0].fd, POLLIN, 0 }, { s[1].fd, POLLIN, 0 } };

	while (p[0].fd >= 0 || p[1].fd >= 0) {
		int left = (int)(end - now_ms());
		int n = left > 0 ? poll(p, 2, left) : 0;

		if (n == 0)
			return -ETIMEDOUT;
		if (n < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < 2 && n > 0; i++) {
			ssize_t got;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			got = drain(&s[i]);
			if (got < 0)
				return (int)got;
			if (got == 0)
				p[i].fd = -1;
		}
	}
	return 0;
}

static const char *last_line(char *text)
{
	size_t n = strlen(text);
	char *nl;

	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		text[--n] = '\0';
	nl = strrchr(text, '\n');
	return nl ? nl + 1 : text;
}

static int finish(char *const argv[], pid_t pid, int r, struct sink *err_sink,
		  struct sh_error *err)
{
	int status = 0;

	if (r)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r == -ETIMEDOUT)
		return error_set(err, r, "%s did not finish in %d s", argv[0],
				 EXEC_TIMEOUT_MS / 1000);
	if (r)
		return error_errno(err, r, "cannot read the output of %s",
				   argv[0]);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	return error_set(
		err, -EIO, "%s %s failed (%s %d): %.300s", argv[0],
		argv[1] ? argv[1] : "", WIFEXITED(status) ? "exit" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		last_line(err_sink->buf));
}

int wiring_exec_run(char *const argv[], const struct wiring_view *view,
		    char **ret, struct sh_error *err)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	_cleanup_free_ char *obuf = malloc(EXEC_OUT_MAX + 1);
	_cleanup_free_ char *ebuf = malloc(EXEC_ERR_MAX + 1);
	struct sink s[2] = {
		{ -1, obuf, 0, EXEC_OUT_MAX, false },
		{ -1, ebuf, 0, EXEC_ERR_MAX, true },
	};
	pid_t pid = -1;
	int r = 0;

	if (!obuf || !ebuf)
		return error_set(err, -ENOMEM, "runtime: out of memory");
	obuf[0] = ebuf[0] = '\0';
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 ||
	    (pid = fork()) < 0)
		r = error_errno(err, -errno, "cannot run %s", argv[0]);
	if (pid == 0)
		child(argv, view, po[1], pe[1]);
	closep(&po[1]);
	closep(&pe[1]);
	s[0].fd = po[0];
	s[1].fd = pe[0];
	if (r)
		goto close_read;
	r = finish(argv, pid, collect(s), &s[1], err);
close_read:
	closep(&po[0]);
	closep(&pe[0]);
	if (r)
		return r;
	if (ret)
		*ret = TAKE_PTR(obuf);
	return 0;
}

int wiring_exec_toml(char *const argv[], const struct wiring_view *view,
		     struct json_object **ret, struct sh_error *err)
{
	_cleanup_free_ char *raw = NULL;
	char terr[SH_TOML_ERR_MAX];
	int r = wiring_exec_run(argv, view, &raw, err);

	if (r)
		return r;
	if (toml_parse(raw, strlen(raw), ret, terr))
		return error_set(err, -EINVAL, "cannot read `%s %s`: %s",
				 argv[0], argv[1] ? argv[1] : "", terr);
	return 0;
}
