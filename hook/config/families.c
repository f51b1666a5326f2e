// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the kernel offers of the families in families.h, from three files
 * the kernel and depmod keep: /proc/net/protocols (a family's struct proto
 * is registered once its module is in), modules.alias ("alias net-pf-N
 * MODULE": socket() loads it on demand) and the module files themselves
 * (or modules.builtin). kernel.modules_disabled stops every load.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "config/families.h"
#include "lib/cleanup.h"
#include "lib/context.h"
#include "lib/fileio.h"

#define PROTOCOLS_MAX (64 << 10)
#define ALIAS_MAX (16 << 20) /* modules.alias: about 1 MiB on Debian */

static const struct family_def {
	const char *name;
	int family;
	const char *module;
	const char *dir; /* under kernel/net/ */
	const char *proto; /* its struct proto's name */
} defs[FAMILIES_MAX] = {
	{ "AF_SMC", 43, "smc", "smc", "SMC" },
	{ "AF_RDS", 21, "rds", "rds", "RDS" },
	{ "AF_RXRPC", 33, "rxrpc", "rxrpc", "RXRPC" },
	{ "AF_TIPC", 30, "tipc", "tipc", "TIPC" },
};

const char *families_state_name(enum family_state state)
{
	switch (state) {
	case FAMILY_LOADED:
		return "loaded";
	case FAMILY_AUTOLOAD:
		return "loaded on demand";
	case FAMILY_MODULE:
		return "module present";
	default:
		return "absent";
	}
}

static char *read_text(const char *path, size_t max)
{
	char *text = NULL;
	size_t len;

	return fileio_read_at(AT_FDCWD, path, 0, max, &text, &len) ? NULL :
								     text;
}

/* A line of text that starts with word followed by a blank. */
static bool has_line(const char *text, const char *word)
{
	size_t n = strlen(word);
	const char *p = text;

	while (*p) {
		if (!strncmp(p, word, n) && (p[n] == ' ' || p[n] == '\t'))
			return true;
		p += strcspn(p, "\n");
		p += *p == '\n';
	}
	return false;
}

static void modules_dir(char *buf, size_t len)
{
	const char *env = context_value(context_get()->modules_dir);
	struct utsname u;

	if (env)
		snprintf(buf, len, "%s", env);
	else if (uname(&u) == 0)
		snprintf(buf, len, "/lib/modules/%s", u.release);
	else
		buf[0] = '\0';
}

static bool module_file(const char *dir, const struct family_def *d,
			const char *builtin)
{
	static const char *const suffixes[] = { "", ".xz", ".zst", ".gz" };
	char path[PATH_MAX], rel[PATH_MAX / 2];
	struct stat st;

	snprintf(rel, sizeof(rel), "kernel/net/%s/%s.ko", d->dir, d->module);
	if (builtin && strstr(builtin, rel))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		snprintf(path, sizeof(path), "%s/%s%s", dir, rel, suffixes[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return true;
	}
	return false;
}

static bool loads_disabled(void)
{
	_cleanup_free_ char *v =
		read_text("/proc/sys/kernel/modules_disabled", 64);

	return v && atoi(v) == 1;
}

int families_probe(struct family_seen out[FAMILIES_MAX])
{
	char dir[PATH_MAX / 2], path[PATH_MAX];
	_cleanup_free_ char *protocols =
		read_text("/proc/net/protocols", PROTOCOLS_MAX);
	_cleanup_free_ char *alias = NULL, *builtin = NULL;
	bool no_loads = loads_disabled();
	int offered = 0;

	modules_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/modules.alias", dir);
	alias = read_text(path, ALIAS_MAX);
	snprintf(path, sizeof(path), "%s/modules.builtin", dir);
	builtin = read_text(path, ALIAS_MAX);
	for (int i = 0; i < FAMILIES_MAX; i++) {
		const struct family_def *d = &defs[i];
		char word[32];

		out[i] = (struct family_seen){ d->name, d->family, d->module,
					       FAMILY_ABSENT };
		snprintf(word, sizeof(word), "alias net-pf-%d ", d->family);
		if (protocols && has_line(protocols, d->proto))
			out[i].state = FAMILY_LOADED;
		else if (no_loads || !module_file(dir, d, builtin))
			continue;
		else if (alias && strstr(alias, word))
			out[i].state = FAMILY_AUTOLOAD;
		else
			out[i].state = FAMILY_MODULE;
		offered++;
	}
	return offered;
}

void families_text(const struct family_seen seen[FAMILIES_MAX], char *buf,
		   size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < FAMILIES_MAX && used < len; i++) {
		if (seen[i].state == FAMILY_ABSENT)
			continue;
		used += snprintf(buf + used, len - used, "%s%s (%s)",
				 used ? ", " : "", seen[i].name,
				 families_state_name(seen[i].state));
	}
}

void families_warning(const struct family_seen seen[FAMILIES_MAX], char *buf,
		      size_t len)
{
	char list[FAMILIES_TEXT_MAX];

	families_text(seen, list, sizeof(list));
	if (!list[0]) {
		buf[0] = '\0';
		return;
	}
	snprintf(
		buf, len,
		"this kernel offers %s: such sockets carry TCP or UDP through sockets the kernel makes itself, which no cgroup program of ours sees (no socket deny, mark or priority applies): give workloads a seccomp profile that allows only the socket families they need (examples/seccomp-socket-allowlist.json), or keep the modules from loading (modprobe.d: install <module> /bin/false)",
		list);
}
