// SPDX-License-Identifier: GPL-2.0-only
/*
 * share.c, its hash: a policy's copies are shared by the hash of what the
 * programs were loaded with (FNV-1a, 64 bits), so it must be the published
 * function, seeded per build, and change with any byte. Finding and
 * publishing copies needs BPF: 45-preload.sh and 71-parallel.sh run them.
 *
 * Modules: `share.c`
 */
#include <string.h>

#include "prog/share.h"
#include "tap.h"

int main(void)
{
	const char a[] = "restricted", b[] = "restrictee";

	/* The FNV-1a test vectors (Fowler, Noll, Vo). */
	ok(share_hash(0, "", 0) == 0xcbf29ce484222325ULL,
	   "no bytes: the FNV-1a 64 offset basis");
	ok(share_hash(0, "a", 1) == 0xaf63dc4c8601ec8cULL, "\"a\"");
	ok(share_hash(0, "foobar", 6) == 0x85944171f73967e8ULL, "\"foobar\"");
	ok(share_hash(share_hash(0, "foo", 3), "bar", 3) ==
		   share_hash(0, "foobar", 6),
	   "hashing in parts, each seeded with the last, is hashing the whole");
	ok(share_hash(0, a, sizeof(a)) != share_hash(0, b, sizeof(b)),
	   "one byte apart: another hash");
	ok(share_hash(1, a, sizeof(a)) != share_hash(2, a, sizeof(a)),
	   "another seed (another build): another hash");
	ok(share_hash(7, a, 0) == 7, "a seed with no bytes is itself");
	return tap_done();
}
