// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runtimes' own tools, run by `runtime configure` (wiring_exec.h):
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
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
#include "wiring/wiring_exec.h"

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
		    char **out, struct sh_error *err)
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
	if (out)
		*out = TAKE_PTR(obuf);
	return 0;
}

int wiring_exec_toml(char *const argv[], const struct wiring_view *view,
		     struct json_object **out, struct sh_error *err)
{
	_cleanup_free_ char *raw = NULL;
	char terr[SH_TOML_ERR_MAX];
	int r = wiring_exec_run(argv, view, &raw, err);

	if (r)
		return r;
	if (toml_parse(raw, strlen(raw), out, terr))
		return error_set(err, -EINVAL, "cannot read `%s %s`: %s",
				 argv[0], argv[1] ? argv[1] : "", terr);
	return 0;
}
