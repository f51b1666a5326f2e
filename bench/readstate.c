// SPDX-License-Identifier: GPL-2.0-only
/*
 * readstate: the cheapest hook that does what every OCI hook must, read
 * the container's state from stdin to the end, and exits 0. The baseline
 * of `make bench` for crun (crun 1.8 fails a hook that exits before crun
 * has written the state, as /bin/true may) and, next to /bin/true, for
 * runc: what the runtime's delivery of the state costs. Static, as the
 * hook is, so that the two exec alike.
 */
#include <errno.h>
#include <unistd.h>

int main(void)
{
	char buf[4096];
	ssize_t n;

	do {
		n = read(0, buf, sizeof(buf));
	} while (n > 0 || (n < 0 && errno == EINTR));
	return n < 0;
}
