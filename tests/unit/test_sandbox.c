// SPDX-License-Identifier: GPL-2.0-only
/*
 * prestart.c's check that the cgroup of the pid a container joins is the
 * sandbox's: named after the sandbox id, exactly, in each shape
 * containerd and CRI-O make, never by a part of the name a pod could
 * choose ("crio", "scope", a prefix of the id).
 *
 * Modules: `prestart.c`
 */
#include <string.h>

#include "stage/prestart.h"
#include "tap.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define SLICE                                        \
	"/kubepods.slice/kubepods-besteffort.slice/" \
	"kubepods-besteffort-pod1b2c.slice"

static void is(const char *rel, const char *id, bool want, const char *what)
{
	ok(prestart_sandbox_cgroup_named(rel, id) == want, "%s: %s", what,
	   want ? "the sandbox's" : "not the sandbox's");
}

int main(void)
{
	is(SLICE "/cri-containerd-" ID ".scope", ID, true,
	   "containerd, systemd");
	is("/kubepods/besteffort/pod1b2c/" ID, ID, true,
	   "containerd, cgroupfs");
	is("/k8s.io/" ID, ID, true, "containerd, no cgroup parent");
	is(SLICE "/crio-" ID ".scope", ID, true, "CRI-O, systemd");
	is("/kubepods/besteffort/pod1b2c/crio-" ID, ID, true,
	   "CRI-O, cgroupfs");
	is(SLICE "/crio-" ID ".scope/container", ID, true,
	   "CRI-O, systemd, crun's container child");
	is("/sh-test-sb", "sh-test-sb", true, "runc without a parent: <id>");

	is(SLICE "/crio-" ID ".scope", "crio", false, "a planted id 'crio'");
	is(SLICE "/crio-" ID ".scope", "scope", false, "a planted id 'scope'");
	is(SLICE "/cri-containerd-" ID ".scope", "cri-containerd", false,
	   "a planted id 'cri-containerd'");
	is(SLICE "/crio-" ID ".scope", "0123456789abcdef", false,
	   "a prefix of the id");
	is(SLICE "/crio-" ID ".scope", "89abcdef", false, "a suffix of the id");
	is("/sht1-liar-sb", "sb", false, "a substring of a runc cgroup's name");
	is(SLICE "/crio-" ID ".scope", "", false, "an empty id");
	is(SLICE "/crio-" ID ".scope", "kubepods-besteffort-pod1b2c.slice",
	   false, "an ancestor's name");
	is("/crio-" ID ".scope/x/container", ID, false,
	   "crun's child only right below the sandbox's cgroup");
	is("/container", "container", true, "a cgroup that is just <id>");
	is("/container", "x", false, "a bare 'container' at the top");
	is("/", ID, false, "the root cgroup");
	return tap_done();
}
