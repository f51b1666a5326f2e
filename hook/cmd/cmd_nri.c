// SPDX-License-Identifier: GPL-2.0-only
/*
 * `oci-sockopt-hook nri`: the NRI plugin, a long-running process that
 * delivers pods' sockopt-hook.io/ annotations and the hook to every
 * container a CRI runtime (containerd 2.x, CRI-O) creates, with no runtime
 * handler, base spec or pod_annotations (nri_deliver.c says what it adds).
 *
 * Two ways to run, as containerd/nri pkg/stub: connected to the runtime's
 * socket (--socket, default /var/run/nri/nri.sock), reconnecting after
 * the runtime restarts; or pre-registered, launched by the runtime from
 * /opt/nri/plugins/NN-name with the connection on the fd that
 * NRI_PLUGIN_SOCKET names: then the plugin ends with the connection, and
 * the runtime starts it anew.
 *
 * One copy per node: a second one would have the runtime fail every
 * container both annotate (NRI refuses two plugins setting one key), so
 * the plugin holds a lock in the state directory and a second copy
 * refuses to register. nri.status there says whether, and to which
 * runtime, the plugin is registered (`features` reads it).
 *
 * With nri.attach "plugin", under containerd, the plugin attaches itself
 * at StartContainer: it runs the hook's prestart on the state the hook
 * would get (the task's pid, containerd's bundle of the container under
 * nri.bundle_dir) and refuses the start where the hook would refuse it;
 * containers get only the poststop hook. Elsewhere (CRI-O, which only
 * logs a StartContainer error) they get the hook as with "hook".
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "config/config.h"
#include "input/oci.h"
#include "lib/cleanup.h"
#include "lib/context.h"
#include "lib/log.h"
#include "lib/number.h"
#include "nri/nri_plugin.h"
#include "nri/nri_status.h"
#include "prog/share.h"

#define DEFAULT_SOCKET "/var/run/nri/nri.sock"
#define READ_CHUNK (64u << 10)
/* containerd waits 5 s for a plugin to register; we wait a little more
 * for Configure and Synchronize before trying again. */
#define REGISTER_WAIT_MS 10000
#define BACKOFF_MIN_MS 100
/* the runtime's request timeout is 2 s: a reply later than that is lost */
#define SEND_TIMEOUT_S 5
#define BACKOFF_MAX_MS 2000

struct nri_cmd {
	const char *config_path;
	const char *config_arg; /* --config for the hook, or NULL */
	const char *socket; /* NULL: pre-registered */
	int fd; /* the connection */
	int sig; /* signalfd */
	bool stop; /* a signal came */
	struct stat cfg_stat; /* the config as last read */
	bool cfg_seen;
	struct nri_deliver_config deliver;
	char hook_path[4096];
	bool attach_plugin; /* nri.attach "plugin" */
	char bundle_dir[4096];
	/* the hooks' environment: the plugin's own directories */
	char *hook_env[3];
	char env_buf[3][4096 + 64];
	struct nri_status status;
	/* the config of the plugin's own attaches (nri.attach "plugin") */
	struct config_cache attach_cfg;
};

static struct nri_cmd *cmd_of(struct nri_plugin *p)
{
	return p->data;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The operator config as the next container needs it, read again when
 * the file changed. A config the hook would refuse still gets the hook
 * on every container: it then refuses them with its reason (fail-closed),
 * instead of the plugin starting them unpoliced. */
static void load_config(struct nri_cmd *c)
{
	struct sh_error err = { 0 };
	struct sh_config cfg;
	struct stat st;
	int r;

	if (stat(c->config_path, &st) < 0)
		memset(&st, 0, sizeof(st));
	if (c->cfg_seen && same_file(&st, &c->cfg_stat))
		return;
	c->cfg_seen = true;
	c->cfg_stat = st;
	snprintf(c->hook_path, sizeof(c->hook_path), "%s",
		 config_nri_hook_path(&(struct sh_config){ 0 }));
	c->attach_plugin = false;
	r = config_load(c->config_path, &cfg, &err);
	if (r) {
		error_report(&err, r);
		log_warn(
			"every container gets the hook, which refuses it until the operator config is fixed");
		c->deliver.every_container = true;
		return;
	}
	log_set_level(cfg.log_level);
	log_set_stderr_level(cfg.log_level);
	c->deliver.every_container = config_has_defaults(&cfg) ||
				     cfg.require.nr_handlers || cfg.require.nri;
	snprintf(c->hook_path, sizeof(c->hook_path), "%s",
		 config_nri_hook_path(&cfg));
	c->attach_plugin = cfg.nri_attach_plugin;
	snprintf(c->bundle_dir, sizeof(c->bundle_dir), "%s",
		 config_nri_bundle_dir(&cfg));
	log_info(
		"operator config %s: the hook %s goes to %s", cfg.path,
		c->hook_path,
		c->deliver.every_container ?
			"every container (defaults or require_annotations)" :
			"containers whose pod has sockopt-hook.io/ keys for them");
	config_free(&cfg);
}

static const struct nri_deliver_config *deliver_config(struct nri_plugin *p)
{
	struct nri_cmd *c = cmd_of(p);

	load_config(c);
	c->deliver.hook_path = c->hook_path;
	c->deliver.config_arg = c->config_arg;
	c->deliver.plugin_attaches = p->attaching;
	return &c->deliver;
}

/* Only containerd fails a start on a StartContainer error; the mode is
 * the session's, from the config as it is at Configure. */
static bool attaches(struct nri_plugin *p)
{
	struct nri_cmd *c = cmd_of(p);
	bool yes;

	load_config(c);
	yes = c->attach_plugin && !strcmp(p->runtime, "containerd");
	if (c->attach_plugin && !yes)
		log_warn(
			"nri.attach is \"plugin\", but %s does not fail a start on the plugin's error: containers get the hook",
			LOG_Q(p->runtime));
	log_info("this session: %s",
		 yes ? "the plugin attaches at StartContainer" :
		       "containers get the hook");
	return yes;
}

/* The state the hook gets from runc at createRuntime, made from what
 * containerd says at StartContainer: the task's pid, the bundle. */
static int start_state(struct nri_cmd *c, const nri_container *ctr,
		       struct oci_state *st, struct sh_error *err)
{
	_cleanup_json_ struct json_object *o = NULL;
	char bundle[4096 + 256];
	const char *text;

	if (!ctr->id || !oci_valid_id(ctr->id))
		return error_set(
			err, -EINVAL,
			"StartContainer for an invalid container id %s",
			LOG_Q(ctr->id ? ctr->id : ""));
	snprintf(bundle, sizeof(bundle), "%s/%s", c->bundle_dir, ctr->id);
	o = json_object_new_object();
	if (!o ||
	    json_object_object_add(o, "ociVersion",
				   json_object_new_string("1.0.2")) ||
	    json_object_object_add(o, "id", json_object_new_string(ctr->id)) ||
	    json_object_object_add(o, "status",
				   json_object_new_string("created")) ||
	    json_object_object_add(o, "pid", json_object_new_int64(ctr->pid)) ||
	    json_object_object_add(o, "bundle", json_object_new_string(bundle)))
		return error_set(err, -ENOMEM, "out of memory");
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	return oci_parse_state(text, strlen(text), st, err);
}

static int start(struct nri_plugin *p, const nri_pod *pod,
		 const nri_container *ctr, char *why, size_t why_len)
{
	struct nri_cmd *c = cmd_of(p);
	struct sh_error err = { 0 };
	struct oci_state st = { 0 };
	int r = start_state(c, ctr, &st, &err);

	(void)pod;
	if (r)
		error_report(&err, r);
	else
		r = cmd_stages_attach_state("StartContainer", c->config_arg,
					    &c->attach_cfg, &st, &err);
	log_set_context("nri");
	if (r)
		snprintf(why, why_len, "oci-sockopt-hook: %s", err.msg);
	oci_state_free(&st);
	return r;
}

static int write_all(struct nri_plugin *p, const uint8_t *buf, size_t len)
{
	struct nri_cmd *c = cmd_of(p);

	while (len) {
		ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

/* The pre-registered plugin's connection: the fd NRI_PLUGIN_SOCKET names
 * (containerd passes it as fd 3), a socket. */
static int inherited_fd(const char *text, struct sh_error *err)
{
	long long fd;
	struct stat st;

	if (number_parse(text, 3, 1 << 20, &fd) || fstat((int)fd, &st) < 0 ||
	    !S_ISSOCK(st.st_mode))
		return error_set(
			err, -EINVAL,
			"NRI_PLUGIN_SOCKET=%s is not an open socket: a pre-registered plugin gets one from the runtime",
			LOG_Q(text));
	if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0)
		return error_errno(err, -errno, "NRI_PLUGIN_SOCKET=%lld", fd);
	return (int)fd;
}

static int connect_socket(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return -errno;
	return take_fd(&fd);
}

/* Sleeps ms, or less when a signal comes (then c->stop). */
static void wait_ms(struct nri_cmd *c, int ms)
{
	struct pollfd pfd = { .fd = c->sig, .events = POLLIN };
	struct signalfd_siginfo si;

	if (poll(&pfd, 1, ms) > 0 && read(c->sig, &si, sizeof(si)) > 0)
		c->stop = true;
}

/* Connects, trying again until the runtime's socket answers. */
static int connect_retry(struct nri_cmd *c)
{
	int backoff = BACKOFF_MIN_MS, said = 0;

	while (!c->stop) {
		int fd = connect_socket(c->socket);

		if (fd >= 0)
			return fd;
		if (fd == -ENAMETOOLONG)
			return fd;
		if (said != fd)
			log_info("waiting for the runtime's NRI socket %s: %s",
				 c->socket, strerror(-fd));
		said = fd;
		wait_ms(c, backoff);
		backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
							 backoff * 2;
	}
	return -EINTR;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Reads what the runtime sent: 1 to go on, 0 when the connection ended
 * cleanly, a negative errno on a failure (p->error set). */
static int read_input(struct nri_cmd *c, struct nri_plugin *p)
{
	static uint8_t buf[READ_CHUNK];
	ssize_t n = read(c->fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (n < 0) {
		snprintf(p->error, sizeof(p->error),
			 "cannot read from the runtime: %s", strerror(errno));
		return -errno;
	}
	if (n == 0) {
		log_info("the runtime closed the NRI connection");
		return 0;
	}
	return nri_plugin_input(p, buf, n) ?: 1;
}

static void registered(struct nri_cmd *c, struct nri_plugin *p)
{
	c->status.since = (long long)time(NULL);
	nri_status_write(&c->status, p, /* registered= */ true);
	log_info("registered with %s %s as %s-%s (request timeout %lld ms)",
		 p->runtime, p->runtime_version, p->idx, p->name,
		 (long long)p->request_timeout_ms);
}

/* Polls the connection and the signals until the session ends. */
static int serve(struct nri_cmd *c, struct nri_plugin *p)
{
	long long deadline = now_ms() + REGISTER_WAIT_MS;
	struct pollfd pfd[2] = { { .fd = c->fd, .events = POLLIN },
				 { .fd = c->sig, .events = POLLIN } };
	int r = 1;

	while (r > 0 && !c->stop && !p->shutdown) {
		bool was = p->synchronized;
		long long left = deadline - now_ms();
		int n = poll(pfd, 2, was ? -1 : (left > 0 ? (int)left : 0));

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0 && !was) {
			snprintf(
				p->error, sizeof(p->error),
				"the runtime did not configure and synchronize the plugin within %d ms",
				REGISTER_WAIT_MS);
			return -ETIMEDOUT;
		}
		if (pfd[1].revents)
			wait_ms(c, 0);
		if (pfd[0].revents)
			r = read_input(c, p);
		if (!was && p->synchronized)
			registered(c, p);
	}
	if (p->shutdown)
		log_info("the runtime is shutting down");
	return r < 0 ? r : 0;
}

static int session(struct nri_cmd *c, const char *name, const char *idx)
{
	/* A runtime that stops reading must not hang the plugin in send():
	 * the session ends, and a new one begins. */
	struct timeval tv = { .tv_sec = SEND_TIMEOUT_S };
	struct nri_plugin p;
	int r = nri_plugin_init(&p, name, idx, write_all, deliver_config);

	if (setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		log_warn("cannot set a send timeout on the NRI connection: %s",
			 strerror(errno));

	p.data = c;
	p.attaches = attaches;
	p.start = start;
	if (r)
		goto end;
	r = nri_plugin_register(&p);
	if (r)
		goto end;
	r = serve(c, &p);
end:
	/* Every session ends here, failed or not: report, then start over. */
	if (r)
		log_error("NRI session ended: %s",
			  p.error[0] ? p.error : strerror(-r));
	if (p.synchronized)
		log_info(
			"%llu containers seen, %llu given the hook, %llu pod keys copied, %llu starts passed, %llu refused",
			(unsigned long long)p.stats.containers,
			(unsigned long long)p.stats.hooked,
			(unsigned long long)p.stats.copied,
			(unsigned long long)(p.stats.started - p.stats.refused),
			(unsigned long long)p.stats.refused);
	if (p.synchronized && p.attaching)
		log_info(
			"so far: the operator config read %llu times for the plugin's attaches, pins checked %llu times",
			c->attach_cfg.reads, share_kept_checks());
	nri_status_write(&c->status, &p, /* registered= */ false);
	nri_plugin_free(&p);
	return r;
}

static int block_signals(struct nri_cmd *c, struct sh_error *err)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return error_errno(err, -errno, "sigprocmask");
	c->sig = signalfd(-1, &set, SFD_CLOEXEC);
	if (c->sig < 0)
		return error_errno(err, -errno, "signalfd");
	return 0;
}

/* Socket mode: sessions until a signal; pre-registered: the one. */
static int sessions(struct nri_cmd *c, const char *name, const char *idx,
		    int inherited)
{
	int r;

	if (inherited >= 0) {
		c->fd = inherited;
		r = session(c, name, idx);
		close(c->fd);
		return r;
	}
	while (!c->stop) {
		c->fd = connect_retry(c);
		if (c->fd < 0 && c->stop)
			return 0;
		if (c->fd < 0) {
			log_error("cannot connect to %s: %s", c->socket,
				  strerror(-c->fd));
			return c->fd;
		}
		log_info("connected to %s", c->socket);
		session(c, name, idx);
		close(c->fd);
		wait_ms(c, BACKOFF_MIN_MS);
	}
	return 0;
}

/* The name and index to register with: NRI's environment (a
 * pre-registered plugin, or an operator's), else ours; checked before
 * anything connects, so that a bad one is one line, not a retry loop. */
static int identity(const char **name, const char **idx, struct sh_error *err)
{
	const char *env_name = getenv("NRI_PLUGIN_NAME");
	const char *env_idx = getenv("NRI_PLUGIN_IDX");
	struct nri_plugin check;
	int r;

	*name = env_name && env_name[0] ? env_name : NRI_PLUGIN_NAME;
	*idx = env_idx && env_idx[0] ? env_idx : NRI_PLUGIN_IDX;
	r = nri_plugin_init(&check, *name, *idx, write_all, deliver_config);
	if (r)
		error_set(err, r, "%s", check.error);
	nri_plugin_free(&check);
	return r;
}

/* Where the connection comes from: the runtime's fd, or the socket. */
static int setup_mode(struct nri_cmd *c, const char *socket_path,
		      int *inherited, struct sh_error *err)
{
	const char *env_fd = getenv("NRI_PLUGIN_SOCKET");

	if (!env_fd || !env_fd[0]) {
		c->socket = socket_path ? socket_path : DEFAULT_SOCKET;
		c->status.mode = "socket";
		c->status.socket = c->socket;
		return 0;
	}
	*inherited = inherited_fd(env_fd, err);
	if (*inherited < 0)
		return *inherited;
	c->status.mode = "pre-registered";
	/* the runtime drops a launched plugin's stdout and stderr */
	log_open(1);
	return 0;
}

/* The directories the plugin was told to use (its environment), for the
 * hooks it delivers: the same attachments, pins and keys as the plugin's. A
 * value too long for one is left out (the hook then uses its default, as
 * with no variable). */
static void hook_env(struct nri_cmd *c)
{
	const struct sh_context *ctx = context_get();
	const struct {
		const char *name, *value;
	} vars[] = {
		{ "OCI_SOCKOPT_HOOK_STATE_DIR", context_value(ctx->state_dir) },
		{ "OCI_SOCKOPT_HOOK_PIN_DIR", context_value(ctx->pin_dir) },
		{ "OCI_SOCKOPT_HOOK_KEYS_CGROUP",
		  context_value(ctx->keys_cgroup) },
	};
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		int len;

		if (!vars[i].value)
			continue;
		len = snprintf(c->env_buf[n], sizeof(c->env_buf[n]), "%s=%s",
			       vars[i].name, vars[i].value);
		if (len < 0 || (size_t)len >= sizeof(c->env_buf[n])) {
			log_warn("%s is too long to pass to the hook",
				 vars[i].name);
			continue;
		}
		c->hook_env[n] = c->env_buf[n];
		n++;
	}
	c->deliver.hook_env = c->hook_env;
	c->deliver.n_hook_env = n;
}

static int nri(const char *config, const char *socket_path)
{
	struct nri_cmd c = { .fd = -1, .sig = -1 };
	struct sh_error err = { 0 };
	const char *name, *idx;
	int inherited = -1, r;

	c.status.lock_fd = -1;
	c.config_path = config_path(config);
	if (strcmp(c.config_path, SH_DEFAULT_CONFIG))
		c.config_arg = c.config_path;
	log_set_context("nri");
	log_set_stderr_level(LOG_INFO);
	hook_env(&c);
	r = identity(&name, &idx, &err);
	if (r)
		goto fail;
	r = setup_mode(&c, socket_path, &inherited, &err);
	if (r)
		goto fail;
	r = nri_status_lock(&c.status, &err);
	if (r)
		goto fail;
	r = block_signals(&c, &err);
	if (r)
		goto fail;
	load_config(&c);
	share_keep(/* on= */ true);
	r = sessions(&c, name, idx, inherited);
	inherited = -1; /* sessions() closed it */
	goto out;
fail:
	error_report(&err, r);
out:
	if (inherited >= 0)
		close(inherited);
	if (c.sig >= 0)
		close(c.sig);
	nri_status_unlock(&c.status);
	config_cache_free(&c.attach_cfg);
	return r ? -1 : 0;
}

enum { OPT_SOCKET = CLI_OPT_OWN };

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	const char *socket_path = NULL;
	struct cli_parser p;
	int id;

	cli_start(&p, cmd, global, argc, argv);
	while ((id = cli_next(&p)) > 0)
		if (id == OPT_SOCKET)
			socket_path = p.value;
	if (id)
		return cli_exit(id);
	return nri(p.config, socket_path);
}

static const struct cli_option options[] = {
	CLI_CONFIG,
	{ OPT_SOCKET, "socket", "PATH",
	  "the runtime's NRI socket (default " DEFAULT_SOCKET ")" },
	{ 0 },
};

const struct cli_command cmd_nri_command = {
	.name = "nri",
	.summary =
		"the NRI plugin: pods' annotations and the hook for every container",
	.description =
		"A long-running NRI plugin for containerd 2.x and CRI-O: registers\n"
		"with the runtime as 50-oci-sockopt-hook and gives every workload\n"
		"container its pod's sockopt-hook.io/ annotations (never a\n"
		"node.sockopt-hook.io/ key) and this hook at createRuntime and\n"
		"poststop. Reconnects when the runtime restarts. Run by the runtime\n"
		"from /opt/nri/plugins (NRI_PLUGIN_SOCKET set, no command), it uses\n"
		"that connection and ends with it. One copy per node.\n",
	.options = options,
	.run = run,
};
