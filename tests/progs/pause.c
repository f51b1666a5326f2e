// SPDX-License-Identifier: GPL-2.0-only
/*
 * pause: the pod sandbox's process for the CRI tests (tests/cri/), in the
 * image that containerd's sandbox_image names. It sleeps until SIGTERM or
 * SIGINT and exits 0, as the Kubernetes pause container does; children
 * that get reparented to it (it is PID 1 of the pod) are reaped.
 */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_child(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(void)
{
	struct sigaction stop = { .sa_handler = on_stop };
	struct sigaction child = { .sa_handler = on_child,
				   .sa_flags = SA_NOCLDSTOP | SA_RESTART };
	sigset_t stops, wait_mask;

	/* Blocked until sigsuspend: a signal that comes between the check of
	 * stop_requested and the wait is not lost. */
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	if (sigprocmask(SIG_BLOCK, &stops, &wait_mask) ||
	    sigaction(SIGTERM, &stop, NULL) || sigaction(SIGINT, &stop, NULL) ||
	    sigaction(SIGCHLD, &child, NULL))
		return 1;
	sigdelset(&wait_mask, SIGTERM);
	sigdelset(&wait_mask, SIGINT);
	while (!stop_requested)
		sigsuspend(&wait_mask);
	return 0;
}
