// SPDX-License-Identifier: GPL-2.0-only
/*
 * poststop, gc and the reaper all end here: an attachment is released only
 * when its container is gone, through one open of its cgroup, and the
 * index of shared copies is swept of what no attachment uses.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cg.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "lib/timing.h"
#include "prog/attach.h"
#include "prog/generic.h"
#include "prog/pin.h"
#include "prog/share.h"
#include "record/recording.h"
#include "stage/teardown.h"
#include "state/state.h"
#include "state/stats.h"

/* Enough for every program of a full node's containers; beyond it the
 * sweep keeps every index entry rather than guess. */
#define GC_LIVE_MAX 256

static bool init_alive(const struct sh_attachment *att)
{
	return state_proc_running(att->pid, att->pid_start);
}

/* Drops the attachment, unless it now belongs to a newer container: an
 * attachment is replaced by a rename, a new file, never rewritten in place,
 * so the file it was read from tells without reading it again. */
static int drop_attachment(const struct sh_attachment *att)
{
	struct sh_attachment now;

	const char *key = att->key[0] ? att->key : att->id;

	if (att->file_ino)
		return state_remove_read(att);
	if (state_read(key, &now) == 0 &&
	    (now.pid != att->pid || now.pid_start != att->pid_start ||
	     now.cg.id != att->cg.id))
		return 0;
	return state_remove(key);
}

/* rmdir takes a path: only while it still names our cgroup. */
static void remove_made_cgroup(const struct sh_attachment *att)
{
	_cleanup_close_ int again = -1;
	struct sh_error err = { 0 };
	struct cg_root root;

	if (!att->cg.created)
		return;
	again = cg_open_attached(&att->cg);
	if (again < 0)
		return;
	if (cg_find_root(&root, &err) ||
	    cg_make_remove(&root, att->cg.rel, &err))
		log_warn("%s", err.msg);
}

/*
 * Never detaches from a container that still runs: a populated cgroup
 * whose recorded init is alive (or, for the reaper, any populated one).
 * An unreadable cgroup.events counts as populated.
 */
static int release_cgroup(int fd, const struct sh_attachment *att,
			  bool only_empty)
{
	struct sh_error err = { 0 };
	bool populated = true;
	int r = cg_populated_at(fd, &populated);

	if (r == -ENOENT)
		return 0;
	if (!r && populated && (only_empty || init_alive(att)))
		r = -EBUSY;
	if (r)
		return r;
	if (attach_detach(fd, &att->progs, &err))
		log_warn("%s", err.msg);
	remove_made_cgroup(att);
	return 0;
}

/* Undoes one attachment through one open of its cgroup (fd, or -errno). */
static int release_at(int fd, const struct sh_attachment *att, bool only_empty)
{
	int r = 0;

	if (fd >= 0)
		r = release_cgroup(fd, att, only_empty);
	else if (fd != -ENOENT && fd != -ESTALE)
		r = fd; /* cannot tell: keep the attachment */
	if (r)
		return r;
	/* Record mode: before the attachment goes; a recording that cannot be
	 * written now keeps it for the next gc. */
	r = recording_save(att);
	if (r)
		return r;
	return drop_attachment(att);
}

int teardown_release(const struct sh_attachment *att)
{
	_cleanup_close_ int fd = cg_open_attached(&att->cg);

	return release_at(fd, att, /* only_empty= */ false);
}

/* The attachment as it is now, if it is still this container's: `apply` may
 * have replaced its programs since the reaper read it. */
static const struct sh_attachment *current(const struct sh_attachment *att,
					   struct sh_attachment *now)
{
	if (state_read(att->key[0] ? att->key : att->id, now) == 0 &&
	    now->pid == att->pid && now->pid_start == att->pid_start &&
	    now->cg.id == att->cg.id)
		return now;
	return att;
}

/* att as it is: the caller read it just now. */
static int release_empty_as_read(const struct sh_attachment *att)
{
	_cleanup_close_ int fd = cg_open_attached(&att->cg);
	int r = release_at(fd, att, /* only_empty= */ true);

	return r ? r : fd < 0;
}

int teardown_release_empty(const struct sh_attachment *att)
{
	struct sh_attachment now;

	return release_empty_as_read(current(att, &now));
}

/*
 * One attachment of the stopped container's id. Ids are unique per runtime
 * root, not per node, and poststop has no pid to tell them apart: a
 * attachment is released only when its cgroup is gone or holds nothing, so
 * that a poststop never detaches another root's container of the same
 * id, even one whose init has exited while its cgroup still holds
 * processes (gc or the reaper releases that one once it is empty).
 */
static int release_one(const struct sh_attachment *att, void *data)
{
	const struct oci_state *st = data;
	/* The walk read att just now: a second reading (current()) would
	 * parse the same attachment again for a window no shorter. One that
	 * `apply` replaced since has another inode, and drop_attachment()
	 * keeps it for gc. */
	int r = release_empty_as_read(att);

	if (r == -EBUSY)
		log_warn(
			"container %s still runs in cgroup %s (init pid %d): its policy stays attached until it is gone",
			st->id, att->cg.rel, att->pid);
	else if (r == -EAGAIN)
		; /* its recording waits for gc: said */
	else if (r < 0)
		log_warn("cannot release %s: %s", st->id, strerror(-r));
	else {
		log_info("released cgroup %s", att->cg.rel);
		stats_log_add(STATS_POSTSTOP, STATS_RELEASED, NULL,
			      timing_elapsed());
	}
	return 0;
}

static void release_container(const struct oci_state *st)
{
	state_foreach_id(st->id, release_one, (void *)st);
}

int teardown_poststop(const struct oci_state *st, struct sh_error *err)
{
	/* An unsafe state directory is refused and left alone. */
	int r = state_dir_check(err);

	if (r)
		return r;
	release_container(st);
	timing_mark("release");
	/* The full scan reads every attachment: O(containers). Here it runs at
	 * most once per interval, for nodes where nothing runs `gc`. */
	if (state_stamp_renew(TEARDOWN_GC_STAMP, TEARDOWN_GC_INTERVAL) == 1) {
		r = teardown_gc(err);
		timing_mark("gc");
	}
	return r < 0 ? r : 0;
}

/* Gone: the cgroup vanished (or is a new one), or it is empty and the
 * container's init is dead. fd is one open of the recorded cgroup. */
static bool attachment_stale(int fd, const struct sh_attachment *att)
{
	bool populated = true;

	if (fd == -ENOENT || fd == -ESTALE)
		return true;
	if (fd < 0 || cg_populated_at(fd, &populated))
		return false;
	return !populated && !init_alive(att);
}

struct gc_pass {
	int released;
	size_t nr_live;
	struct {
		enum bpf_attach_type type;
		uint64_t hash;
	} live[GC_LIVE_MAX];
	bool overflow; /* too many to track: sweep nothing */
};

static void note_live(struct gc_pass *gc, const struct sh_attachment *att)
{
	for (int i = 0; i < att->progs.nr; i++) {
		if (gc->nr_live == ARRAY_SIZE(gc->live)) {
			gc->overflow = true;
			return;
		}
		gc->live[gc->nr_live].type = att->progs.prog[i].type;
		gc->live[gc->nr_live++].hash = att->progs.prog[i].hash;
	}
}

static int gc_visit(const struct sh_attachment *att, void *data)
{
	struct gc_pass *gc = data;
	_cleanup_close_ int fd = cg_open_attached(&att->cg);

	if (!attachment_stale(fd, att)) {
		note_live(gc, att);
		return 0;
	}
	if (release_at(fd, att, /* only_empty= */ false) == 0) {
		log_info("gc: released state of container %s (cgroup %s)",
			 att->id, att->cg.rel);
		/* Not a hook run: no latency sample. */
		stats_log_add(STATS_POSTSTOP, STATS_RELEASED, NULL, -1);
		gc->released++;
	}
	return 0;
}

static int index_in_use(const char *type, uint64_t hash, void *data)
{
	struct gc_pass *gc = data;

	if (gc->overflow)
		return 1;
	for (size_t i = 0; i < gc->nr_live; i++)
		if (gc->live[i].hash == hash &&
		    !strcmp(kind_type_name(gc->live[i].type), type))
			return 1;
	return 0;
}

/* The generic programs' rules of attachments that are gone. */
static void sweep_generic(void)
{
	struct sh_error err = { 0 };
	_cleanup_close_ int pins = pin_dir_open(/* create= */ false, &err);

	if (pins >= 0)
		generic_sweep(pins);
}

/*
 * Mark and sweep: release attachments of containers that are gone, then drop
 * the index of shared copies that no live container uses any more, and
 * the generic programs' rules of attachments that are gone.
 */
int teardown_gc(struct sh_error *err)
{
	_cleanup_free_ struct gc_pass *gc = NULL;
	int r = state_dir_check(err);

	if (r)
		return r;
	gc = calloc(1, sizeof(*gc));
	if (!gc)
		return error_set(err, -ENOMEM, "gc: %s", strerror(ENOMEM));
	state_foreach(gc_visit, gc);
	share_sweep(index_in_use, gc);
	sweep_generic();
	return gc->released;
}

/*
 * cgroup v2 has no release agent, and a cgroup the runtime does not know
 * about is removed by nobody. This reaper is the one process the hook
 * leaves running, and only for cgroups it created: it sleeps in inotify
 * on cgroup.events and exits as soon as the container is gone. It never
 * detaches the policy from a cgroup that still holds a process.
 */

/*
 * Without inotify the reaper reads cgroup.events this often. The limit of
 * inotify instances is per user, and root in a container without a user
 * namespace is the host's root: a container can use them all up, and then
 * a reaper that gave up waiting would release a running container. One
 * small read a second per such container costs nothing measurable, and a
 * container's cgroup is still released within a second of its end.
 */
#define REAPER_POLL_SECONDS 1

struct watch {
	int fd; /* inotify, or -1: poll */
	int err; /* why not inotify */
};

/* Set up before the hook returns, so no change to cgroup.events is missed. */
static void watch_start(struct watch *w, const char *abs)
{
	char events[PATH_MAX + sizeof("/cgroup.events")];

	snprintf(events, sizeof(events), "%s/cgroup.events", abs);
	w->err = 0;
	w->fd = inotify_init1(IN_CLOEXEC);
	if (w->fd >= 0 && inotify_add_watch(w->fd, events, IN_MODIFY) >= 0)
		return;
	w->err = errno;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

static void watch_next(struct watch *w)
{
	struct timespec pause = { REAPER_POLL_SECONDS, 0 };
	char buf[4096];

	if (w->fd < 0) {
		nanosleep(&pause, NULL);
		return;
	}
	if (read(w->fd, buf, sizeof(buf)) < 0 && errno != EINTR) {
		log_warn("reaper: inotify failed (%s): polling",
			 strerror(errno));
		close(w->fd);
		w->fd = -1;
	}
}

/* Returns when the cgroup is empty or gone; waits while it cannot tell. */
static void wait_until_empty(struct watch *w, const char *abs)
{
	bool populated = true;
	int r;

	while ((r = cg_populated(abs, &populated)) != -ENOENT &&
	       (r || populated))
		watch_next(w);
}

/* Closes every fd from 3 up but keep_a and keep_b (-1: none). */
static void close_all_but(int keep_a, int keep_b)
{
	int keep[2] = { keep_a < keep_b ? keep_a : keep_b,
			keep_a < keep_b ? keep_b : keep_a };
	int from = 3;

	for (int k = 0; k < 2; k++) {
		if (keep[k] < from)
			continue;
		if (keep[k] > from)
			close_range(from, keep[k] - 1, 0);
		from = keep[k] + 1;
	}
	close_range(from, ~0U, 0);
}

/*
 * The runtime waits for EOF on our stdout/stderr: let go at once. Keep the
 * pipe to the hook and the log file; syslog reconnects (a stale syslog fd
 * number would be written to after it is reused).
 */
static void detach_stdio(int keep)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	if (null > 2)
		close(null);
	close_all_but(keep, log_detach());
	log_open(1);
}

/*
 * Out of the runtime's cgroup, which may be shared or removed, into the
 * cgroup2 root, which nobody removes; then the watch. Tells the hook when
 * done: from then on nothing the container does goes unseen.
 */
static void settle(int ready_fd, struct watch *w, const char *abs)
{
	struct sh_error err = { 0 };
	struct cg_root root;
	char path[PATH_MAX];
	int fd;

	detach_stdio(ready_fd);
	setsid();
	if (chdir("/") == 0 && cg_find_root(&root, &err) == 0 &&
	    cg_path(&root, "/cgroup.procs", path, sizeof(path)) == 0) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) < 0)
			log_debug("reaper: stays in the runtime's cgroup");
		if (fd >= 0)
			close(fd);
	}
	watch_start(w, abs);
	if (w->fd < 0)
		log_warn(
			"reaper: cannot watch %s/cgroup.events (%s): polling it every %d s",
			abs, strerror(w->err), REAPER_POLL_SECONDS);
	if (write(ready_fd, "r", 1) < 0)
		log_debug("reaper: the hook is gone");
	close(ready_fd);
}

static void reaper_main(const struct sh_attachment *att, int ready_fd)
{
	struct sh_error err = { 0 };
	struct watch w;
	int r;

	settle(ready_fd, &w, att->cg.abs);
	prctl(PR_SET_NAME, "sockopt-reaper", 0, 0, 0);
	/* The last check is in the release itself, which refuses while the
	 * cgroup holds a process: then wait again. */
	do {
		wait_until_empty(&w, att->cg.abs);
		r = teardown_release_empty(att);
	} while (r == -EBUSY);
	if (r == 0) {
		log_info("reaper: released cgroup %s of container %s",
			 att->cg.rel, att->id);
		stats_log_add(STATS_POSTSTOP, STATS_RELEASED, NULL, -1);
	} else if (r == 1)
		log_debug("reaper: cgroup %s was already released",
			  att->cg.rel);
	/* Drops the index of copies nobody uses any more. */
	teardown_gc(&err);
}

int teardown_reaper_spawn(const struct sh_attachment *att, struct sh_error *err)
{
	int pipefd[2], status;
	char byte;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return error_errno(err, -errno,
				   "cannot start the cgroup reaper");
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		/* Double fork: the reaper must not be the runtime's child. */
		if (fork() == 0)
			reaper_main(att, pipefd[1]);
		_exit(0);
	}
	close(pipefd[1]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 ||
	    read(pipefd[0], &byte, 1) != 1) {
		error_set(err, -ECHILD, "cannot start the cgroup reaper: %s",
			  pid < 0 ? strerror(errno) : "it died at birth");
		close(pipefd[0]);
		return -ECHILD;
	}
	close(pipefd[0]);
	return 0;
}
