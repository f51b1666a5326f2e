// SPDX-License-Identifier: GPL-2.0-only
/*
 * pin.c, what needs no BPF filesystem: pin names, where the pin directory
 * is, that a directory on another filesystem is refused (and one the call
 * made is removed again), and how a listing tells our pins, temp pins and
 * other files apart. Pinning itself (bpf_obj_pin) needs root and bpffs:
 * 45-preload.sh runs it.
 *
 * Modules: `pin.c`
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "lib/context.h"
#include "prog/pin.h"
#include "tap.h"

struct listing {
	int ours, others;
	char types[256];
	uint64_t hash;
};

static int visit(int dir, const char *name, const char *type, uint64_t hash,
		 void *data)
{
	struct listing *l = data;

	(void)dir;
	(void)name;
	if (type) {
		l->ours++;
		strncat(l->types, type,
			sizeof(l->types) - strlen(l->types) - 2);
		strcat(l->types, " ");
		l->hash = hash;
	} else {
		l->others++;
	}
	return 0;
}

static int stop_at_first(int dir, const char *name, const char *type,
			 uint64_t hash, void *data)
{
	(void)dir;
	(void)name;
	(void)type;
	(void)hash;
	(*(int *)data)++;
	return -EINTR;
}

int main(void)
{
	struct sh_error err = { 0 };
	struct listing l = { 0 };
	char name[SH_PIN_NAME_MAX], dir[512];
	int fd, n = 0;

	tmpdir_make();
	pin_name(name, sizeof(name), "setsockopt", 0x1234abcdULL);
	is_str(name, "setsockopt-000000001234abcd",
	       "pin_name: kind and 16 hex digits (bpffs takes no dots)");
	ok(pin_is_temp("tmp-42") && !pin_is_temp("setsockopt-0000000000000001"),
	   "pin_is_temp: the tmp- prefix only");

	context_set(&(struct sh_context){ 0 });
	is_str(pin_dir(), "/sys/fs/bpf/oci-sockopt-hook",
	       "pin_dir: under /sys/fs/bpf by default");
	snprintf(dir, sizeof(dir), "%s/pins", unit_dir);
	context_set(&(struct sh_context){ .pin_dir = dir });
	is_str(pin_dir(), dir, "OCI_SOCKOPT_HOOK_PIN_DIR moves it");

	ok(pin_dir_open(false, &err) == -ENOENT,
	   "no directory, no create: -ENOENT");
	memset(&err, 0, sizeof(err));
	ok(pin_dir_open(true, &err) == -ENOTSUP &&
		   strstr(err.msg, "is not on a BPF filesystem"),
	   "a directory on another filesystem: -ENOTSUP, saying so");
	ok(access(dir, F_OK) < 0,
	   "... and the directory it made for that is removed again");
	mkdir(dir, 0700);
	memset(&err, 0, sizeof(err));
	ok(pin_dir_open(true, &err) == -ENOTSUP && access(dir, F_OK) == 0,
	   "a directory that was there is refused and left alone");

	/* A listing, on a plain directory. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	write_file(TMP_PATH("pins/setsockopt-00000000000000ff"), "", 0600);
	write_file(TMP_PATH("pins/sock_create-0123456789abcdef"), "", 0600);
	write_file(TMP_PATH("pins/tmp-123"), "", 0600);
	write_file(TMP_PATH("pins/other-tool-prog"), "", 0600);
	write_file(TMP_PATH("pins/setsockopt-123"), "", 0600);
	write_file(TMP_PATH("pins/frobnicate-00000000000000ff"), "", 0600);
	write_file(TMP_PATH("pins/getsockopt-00000000000000fg"), "", 0600);
	ok(pin_foreach(fd, visit, &l, &err) == 0, "pin_foreach lists them");
	ok(l.ours == 2 && l.others == 5,
	   "ours: kind-16 hex digits of a known kind (2); the rest are not (%d, %d)",
	   l.ours, l.others);
	ok(strstr(l.types, "setsockopt ") && strstr(l.types, "sock_create "),
	   "each of ours with its kind: %s", l.types);
	ok(pin_foreach(fd, stop_at_first, &n, &err) == -EINTR && n == 1,
	   "a visitor's error stops the walk and is returned");
	ok(pin_remove(fd, "tmp-123", &err) == 0 &&
		   access(TMP_PATH("pins/tmp-123"), F_OK) < 0,
	   "pin_remove removes");
	ok(pin_remove(fd, "tmp-123", &err) == 0,
	   "... and a missing one is fine");
	close(fd);
	return tap_done();
}
