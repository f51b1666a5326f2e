// SPDX-License-Identifier: GPL-2.0-only
/* What the kernel offers of the families no cgroup program sees, read
 * from a module tree of the test's own (OCI_SOCKOPT_HOOK_MODULES_DIR).
 *
 * Modules: `families.c`
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/context.h"
#include "config/families.h"
#include "tap.h"

static char root[] = "/tmp/families-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[256], dir[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(dir, 0700);
		*p = '/';
	}
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The state of name, unless the running kernel has it loaded (then the
 * module tree does not matter): "loaded" is accepted too. */
static bool state_is(const struct family_seen *seen, const char *name,
		     enum family_state want)
{
	for (int i = 0; i < FAMILIES_MAX; i++)
		if (!strcmp(seen[i].name, name))
			return seen[i].state == want ||
			       seen[i].state == FAMILY_LOADED;
	return false;
}

int main(void)
{
	struct family_seen seen[FAMILIES_MAX];
	char text[FAMILIES_TEXT_MAX], warning[1024];

	if (!mkdtemp(root))
		return 1;
	context_set(&(struct sh_context){ .modules_dir = root });
	put("kernel/net/smc/smc.ko.xz", "");
	put("kernel/net/rds/rds.ko.zst", "");
	put("modules.alias", "alias net-pf-430 other\nalias net-pf-43 smc\n");
	put("modules.builtin", "kernel/net/tipc/tipc.ko\n");
	families_probe(seen);
	ok(state_is(seen, "AF_SMC", FAMILY_AUTOLOAD),
	   "smc.ko.xz with a net-pf-43 alias: loaded on demand");
	ok(state_is(seen, "AF_RDS", FAMILY_MODULE),
	   "rds.ko.zst without an alias: module present");
	ok(state_is(seen, "AF_RXRPC", FAMILY_ABSENT),
	   "no rxrpc module: absent (net-pf-430 is not net-pf-43's)");
	ok(state_is(seen, "AF_TIPC", FAMILY_AUTOLOAD) ||
		   state_is(seen, "AF_TIPC", FAMILY_MODULE),
	   "tipc in modules.builtin: offered");
	families_text(seen, text, sizeof(text));
	ok(strstr(text, "AF_SMC (") && strstr(text, "AF_RDS (") &&
		   !strstr(text, "AF_RXRPC"),
	   "the text names what is offered: %s", text);
	families_warning(seen, warning, sizeof(warning));
	ok(strstr(warning, "this kernel offers AF_SMC") &&
		   strstr(warning, "seccomp-socket-allowlist.json"),
	   "the warning names them and the seccomp example");
	context_set(
		&(struct sh_context){ .modules_dir = "/nonexistent-modules" });
	families_probe(seen);
	ok(state_is(seen, "AF_SMC", FAMILY_ABSENT) &&
		   state_is(seen, "AF_RDS", FAMILY_ABSENT),
	   "no module tree: absent (unless loaded)");
	snprintf(warning, sizeof(warning), "rm -rf %s", root);
	if (system(warning) != 0)
		tap_diag("cannot remove %s", root);
	return tap_done();
}
