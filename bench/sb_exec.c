// SPDX-License-Identifier: GPL-2.0-only
/*
 * sockbench exec: wall time of fork + exec + wait of each command, the
 * commands interleaved within every round. Commands are separated by "::";
 * ":::" also starts a new group. Every round runs the groups in a new
 * random order (a fixed seed: runs are reproducible), so that no variant
 * always runs first, nor always after the same other one: what a
 * variant leaves the kernel to finish (freeing a cgroup, its programs)
 * lands on each of the others alike, where a rotation (A B C, B C A, ...)
 * would always hand it to the same successor. Commands within a group
 * keep their order (set up, measure, tear down).
 * One line per round on stdout: each command's nanoseconds, in the order
 * given, separated by spaces.
 * Every command gets STDIN (opened afresh each time) on fd 0, or FILE when
 * its first word is "<FILE"; /dev/null on fd 1; ERRLOG (appended) or
 * /dev/null on fd 2. Words NAME=VALUE before the program (after "<FILE")
 * set its environment, as env(1) would without the extra exec: a hook
 * runs with the pin directory of its variant. A command that exits
 * non-zero stops the run with an error that names it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sockbench.h"

/* Benchmark 1 alone times 69 commands a round (bench/start.sh, nine
 * groups); room for a few more groups. */
#define SB_MAX_CMDS 128

static int redirect(int fd, const char *path, int flags)
{
	int src = open(path, flags | O_CLOEXEC, 0644);

	if (src < 0 || dup2(src, fd) < 0)
		return -1;
	close(src);
	return 0;
}

/* A word that sets the environment: NAME=VALUE, NAME not a path. */
static bool is_assignment(const char *word)
{
	const char *eq = strchr(word, '=');

	return eq && eq != word && !memchr(word, '/', (size_t)(eq - word));
}

static void child(char **cmd, const char *in, const char *errlog)
{
	if (redirect(0, in, O_RDONLY) || redirect(1, "/dev/null", O_WRONLY) ||
	    redirect(2, errlog, O_WRONLY | O_APPEND | O_CREAT))
		_exit(126);
	for (; cmd[0] && cmd[1] && is_assignment(cmd[0]); cmd++) {
		if (putenv(cmd[0]))
			_exit(126);
	}
	execvp(cmd[0], cmd);
	_exit(127);
}

/* Runs one command; *ns gets its wall time. */
static int run_one(char **cmd, const char *in, const char *errlog, uint64_t *ns)
{
	uint64_t t0 = sb_now_ns();
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		sb_err("fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0)
		child(cmd, in, errlog);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	*ns = sb_now_ns() - t0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	sb_err("'%s%s%s' failed (%s %d; see %s)", cmd[0], cmd[1] ? " " : "",
	       cmd[1] ? cmd[1] : "",
	       WIFEXITED(status) ? "exit status" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
	       errlog);
	return -EIO;
}

/* The commands, and the group each belongs to. */
struct sb_cmds {
	char **cmd[SB_MAX_CMDS];
	int group[SB_MAX_CMDS];
	int n;
	int groups;
};

/* Splits argv at "::" (next command) and ":::" (next group). */
static int split_cmds(int argc, char **argv, struct sb_cmds *c)
{
	c->n = 0;
	c->groups = 1;
	for (int i = 0; i < argc; i++) {
		if (c->n == SB_MAX_CMDS)
			return -E2BIG;
		c->group[c->n] = c->groups - 1;
		c->cmd[c->n++] = &argv[i];
		while (i < argc && strcmp(argv[i], "::") &&
		       strcmp(argv[i], ":::"))
			i++;
		if (i < argc && !strcmp(argv[i], ":::"))
			c->groups++;
		if (i < argc)
			argv[i] = NULL;
		if (c->cmd[c->n - 1][0] == NULL)
			return -EINVAL;
	}
	return c->n ? 0 : -EINVAL;
}

static int run_cmd(char **cmd, const char *in, const char *errlog, uint64_t *ns)
{
	if (cmd[0][0] == '<' && cmd[1])
		return run_one(cmd + 1, cmd[0] + 1, errlog, ns);
	return run_one(cmd, in, errlog, ns);
}

/* xorshift64: enough to shuffle a few groups, the same on every run. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* ORDER gets a random permutation of the groups (Fisher-Yates). */
static void shuffle_groups(int *order, int groups, uint64_t *state)
{
	for (int g = 0; g < groups; g++)
		order[g] = g;
	for (int g = groups - 1; g > 0; g--) {
		int k = (int)(next_random(state) % (uint64_t)(g + 1));
		int t = order[g];

		order[g] = order[k];
		order[k] = t;
	}
}

/* One round: the groups in the order ORDER gives. */
static int run_round(const struct sb_cmds *c, const int *order, const char *in,
		     const char *errlog, uint64_t *ns)
{
	for (int g = 0; g < c->groups; g++) {
		for (int i = 0; i < c->n; i++) {
			if (c->group[i] != order[g])
				continue;
			if (run_cmd(c->cmd[i], in, errlog, &ns[i]))
				return -EIO;
		}
	}
	return 0;
}

int sb_exec(int argc, char **argv)
{
	const char *in = "/dev/null", *errlog = "/dev/null";
	uint64_t ns[SB_MAX_CMDS], seed = 0x9e3779b97f4a7c15ULL;
	int order[SB_MAX_CMDS];
	struct sb_cmds cmds;
	long rounds = 10;
	int c, err;

	optind = 0;
	while ((c = getopt(argc, argv, "+r:i:e:")) != -1) {
		switch (c) {
		case 'r':
			if (sb_parse_long(optarg, 1, 1000000, &rounds))
				return -EINVAL;
			break;
		case 'i':
			in = optarg;
			break;
		case 'e':
			errlog = optarg;
			break;
		default:
			return -EINVAL;
		}
	}
	err = split_cmds(argc - optind, argv + optind, &cmds);
	if (err == -E2BIG) {
		sb_err("exec: more than %d commands", SB_MAX_CMDS);
		return err;
	}
	if (err) {
		sb_err("usage: exec [-r ROUNDS] [-i STDIN] [-e ERRLOG] -- [<FILE] [NAME=VALUE]... CMD... [:: ...] [::: ...]");
		return -EINVAL;
	}
	for (long r = 0; r < rounds; r++) {
		shuffle_groups(order, cmds.groups, &seed);
		if (run_round(&cmds, order, in, errlog, ns))
			return -EIO;
		for (int i = 0; i < cmds.n; i++)
			printf("%s%llu", i ? " " : "",
			       (unsigned long long)ns[i]);
		putchar('\n');
		fflush(stdout);
	}
	return 0;
}
