// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading /proc/self/mountinfo (proc(5)): "ID PARENT MAJ:MIN ROOT
 * MOUNT-POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER-OPTIONS", where
 * the kernel writes a space, tab, newline or backslash in a path as \ and
 * three octal digits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/mountinfo.h"

/* Grows with every mount of every container: far more than a host has. */
#define MOUNTINFO_MAX (64U << 20)

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && is_octal(s[1]) && is_octal(s[2]) &&
		    is_octal(s[3])) {
			*out++ = (char)(((s[1] - '0') << 6) |
					((s[2] - '0') << 3) | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

int mountinfo_parse_line(char *line, struct mountinfo_entry *e)
{
	char *sep = strstr(line, " - ");
	char *save = NULL, *tok;
	int field = 0;

	memset(e, 0, sizeof(*e));
	if (!sep)
		return -EINVAL;
	*sep = '\0';
	for (tok = strtok_r(line, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 3)
			e->root = tok;
		else if (field == 4)
			e->mnt = tok;
	}
	save = NULL;
	e->fstype = strtok_r(sep + 3, " \n", &save);
	if (field <= 4 || !e->fstype || !strtok_r(NULL, " \n", &save))
		return -EINVAL;
	e->super_opts = strtok_r(NULL, " \n", &save);
	if (!e->super_opts)
		e->super_opts = "";
	unescape(e->root);
	unescape(e->mnt);
	return 0;
}

const char *mountinfo_text(struct mountinfo *m)
{
	size_t len;
	int r;

	if (m->text || m->error)
		return m->text;
	r = fileio_read_at(AT_FDCWD, "/proc/self/mountinfo", 0, MOUNTINFO_MAX,
			   &m->owned, &len);
	if (r) {
		m->error = r;
		return NULL;
	}
	m->text = m->owned;
	return m->text;
}

void mountinfo_done(struct mountinfo *m)
{
	free(m->owned);
	memset(m, 0, sizeof(*m));
}

int mountinfo_each(const char *text,
		   int (*fn)(const struct mountinfo_entry *e, void *data),
		   void *data)
{
	while (*text) {
		size_t n = strcspn(text, "\n");
		_cleanup_free_ char *line = strndup(text, n);
		struct mountinfo_entry e;
		int r;

		if (!line)
			return -ENOMEM;
		text += n + (text[n] == '\n');
		if (mountinfo_parse_line(line, &e))
			continue;
		r = fn(&e, data);
		if (r)
			return r;
	}
	return 0;
}

bool mountinfo_has_opt(const char *opts, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = opts; *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncmp(p, name, len))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

static int nsdelegate_of(const struct mountinfo_entry *e, void *data)
{
	if (strcmp(e->fstype, "cgroup2"))
		return 0;
	*(bool *)data = mountinfo_has_opt(e->super_opts, "nsdelegate");
	return 1;
}

bool mountinfo_cgroup2_nsdelegate(const char *text)
{
	bool has = false;

	return mountinfo_each(text, nsdelegate_of, &has) == 1 && has;
}
