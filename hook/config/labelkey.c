// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kubernetes label keys and values (apimachinery's IsQualifiedName and
 * IsValidLabelValue): a node label the API server would refuse makes
 * nfd-master drop the whole update, so `features` checks before writing.
 */
#include <ctype.h>
#include <string.h>

#include "config/labelkey.h"

#define LABELKEY_NAME_MAX 63
#define LABELKEY_PREFIX_MAX 253

static bool alnum(char c)
{
	return isascii((unsigned char)c) && isalnum((unsigned char)c);
}

/* 1 to 63 bytes of [A-Za-z0-9._-], alphanumeric at both ends. */
static bool name_valid(const char *s, size_t len)
{
	if (len < 1 || len > LABELKEY_NAME_MAX || !alnum(s[0]) ||
	    !alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!alnum(s[i]) && !strchr("-_.", s[i]))
			return false;
	return true;
}

/* One part of a DNS-1123 subdomain: [a-z0-9-], alphanumeric at both ends. */
static bool dns_label_valid(const char *s, size_t len)
{
	if (len < 1 || !alnum(s[0]) || !alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((!alnum(s[i]) && s[i] != '-') ||
		    isupper((unsigned char)s[i]))
			return false;
	return true;
}

static bool subdomain_valid(const char *s, size_t len)
{
	size_t start = 0;

	if (len < 1 || len > LABELKEY_PREFIX_MAX)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (!dns_label_valid(s + start, i - start))
			return false;
		start = i + 1;
	}
	return true;
}

bool labelkey_valid(const char *key)
{
	const char *slash = strchr(key, '/');

	if (!slash)
		return name_valid(key, strlen(key));
	return subdomain_valid(key, slash - key) &&
	       name_valid(slash + 1, strlen(slash + 1));
}

bool labelkey_value_valid(const char *value)
{
	return !*value || name_valid(value, strlen(value));
}
