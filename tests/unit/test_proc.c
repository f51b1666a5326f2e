// SPDX-License-Identifier: GPL-2.0-only
/*
 * state.c: a process is a (pid, start time) pair; a zombie or a reused pid
 * is not the process that was recorded. Uses this test's own children.
 *
 * Modules: `state.c`
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "state/state.h"
#include "tap.h"

int main(void)
{
	uint64_t start = 0, start2 = 0;
	char state = 0;
	pid_t child;
	int fds[2];

	ok(state_proc_stat(getpid(), &state, &start) == 0 && state == 'R' &&
		   start > 0,
	   "this process: running, a start time (%c, %llu)", state,
	   (unsigned long long)start);
	ok(state_proc_running(getpid(), start),
	   "state_proc_running: this process is");
	ok(!state_proc_running(getpid(), start + 1),
	   "... but not with another start time (a reused pid)");
	ok(!state_proc_running(0, start) && !state_proc_running(-1, start),
	   "pid 0 and negative pids never are");
	ok(state_proc_stat(0x3fffffff, &state, &start2) == -ENOENT,
	   "a pid that does not exist: -ENOENT");

	/* A comm with spaces and ')' cannot shift the fields. */
	prctl(PR_SET_NAME, "a) b) c", 0, 0, 0);
	ok(state_proc_stat(getpid(), &state, &start2) == 0 && start2 == start,
	   "a name with ') ' in it: the same start time");

	if (pipe(fds))
		return 1;
	child = fork();
	if (child == 0) {
		char c;

		close(fds[1]);
		(void)!read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	ok(state_proc_stat(child, &state, &start2) == 0 && start2 >= start,
	   "a child: its start time, not before ours");
	ok(state_proc_running(child, start2), "the child is running");
	close(fds[1]);
	/* Wait until it is a zombie (not reaped yet). */
	for (int i = 0; i < 500; i++) {
		if (state_proc_stat(child, &state, &start) == 0 &&
		    state_proc_exiting(state))
			break;
		usleep(10000);
	}
	ok(state_proc_exiting(state) && state == 'Z',
	   "the exited child is a zombie");
	ok(!state_proc_running(child, start2), "and not running");
	waitpid(child, NULL, 0);
	ok(state_proc_stat(child, &state, &start) == -ENOENT &&
		   !state_proc_running(child, start2),
	   "reaped: gone");
	ok(state_proc_exiting('X') && !state_proc_exiting('S') &&
		   !state_proc_exiting('D'),
	   "X is exiting too; S and D are not");
	return tap_done();
}
