// SPDX-License-Identifier: GPL-2.0-only
/*
 * The TOML reader and writer (hook/wiring/toml/): TOML 1.0's valid forms
 * that runtime configs hold (integers in four bases with _, floats and
 * inf, every string form and escape, arrays, inline tables, dotted and
 * quoted keys, tables and arrays of tables, containerd's config versions 2
 * and 3), each refusal with its line (a key set twice, a table defined
 * twice, dates, bad numbers and escapes, control characters, a NUL,
 * nesting deeper than 32), the writer's escapes, keys and tables, and the
 * round trip parse -> write -> parse that `runtime configure` relies on.
 *
 * Modules: `toml.c`
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "tap.h"
#include "wiring/toml/toml.h"

/* text with its newlines as \n, for a test's one-line name. */
static const char *shown(const char *text)
{
	static char buf[4][96];
	static int next;
	char *out = buf[next++ % 4];
	size_t n = 0;

	for (; *text && n < sizeof(buf[0]) - 3; text++) {
		if (*text == '\n' || *text == '\r') {
			out[n++] = '\\';
			out[n++] = *text == '\n' ? 'n' : 'r';
		} else {
			out[n++] = *text;
		}
	}
	out[n] = '\0';
	return out;
}

static struct json_object *parse(const char *text, char *err)
{
	struct json_object *o = NULL;

	if (toml_parse(text, strlen(text), &o, err))
		return NULL;
	return o;
}

/* text parses to the JSON want (compared as JSON values). */
static void parses_to(const char *text, const char *want)
{
	char err[SH_TOML_ERR_MAX];
	struct json_object *got = parse(text, err);
	struct json_object *exp = json_tokener_parse(want);

	ok(got && exp && json_object_equal(got, exp), "%s -> %s", shown(text),
	   want);
	if (got && exp && !json_object_equal(got, exp))
		tap_diag("  got %s", json_object_to_json_string(got));
	else if (!got)
		tap_diag("  error: %s", err);
	json_object_put(got);
	json_object_put(exp);
}

/* text is refused, with want in the message. */
static void refused(const char *text, const char *want)
{
	char err[SH_TOML_ERR_MAX];
	struct json_object *got = parse(text, err);

	ok(!got && strstr(err, want), "refused: %s (%s)", shown(text), want);
	if (got || !strstr(err, want))
		tap_diag("  got %s / '%s'",
			 got ? json_object_to_json_string(got) : "error", err);
	json_object_put(got);
}

static void test_values(void)
{
	parses_to("a = 1\nb = -2\nc = +3\nd = 1_000",
		  "{\"a\":1,\"b\":-2,\"c\":3,\"d\":1000}");
	parses_to("h = 0xdead_beef\no = 0o17\nb = 0b101",
		  "{\"h\":3735928559,\"o\":15,\"b\":5}");
	parses_to("m = -9223372036854775808", "{\"m\":-9223372036854775808}");
	parses_to("t = true\nf = false", "{\"t\":true,\"f\":false}");
	parses_to("f = 0.02\ng = -1.5e3\nh = 6E-1",
		  "{\"f\":0.02,\"g\":-1500.0,\"h\":0.6}");
	parses_to("s = \"a\\tb\\\"\\\\\\u00e9\\U0001F600\"",
		  "{\"s\":\"a\\tb\\\"\\\\\\u00e9\\ud83d\\ude00\"}");
	parses_to("s = 'C:\\\\x'", "{\"s\":\"C:\\\\\\\\x\"}");
	parses_to("s = \"\"\"\nl1\nl2 \\\n   l3\"\"\"",
		  "{\"s\":\"l1\\nl2 l3\"}");
	parses_to("s = '''\nraw \\n'''", "{\"s\":\"raw \\\\n\"}");
	parses_to("s = \"\"\"a\"\"\"\"\"", "{\"s\":\"a\\\"\\\"\"}");
	parses_to("a = [ 1, [2, 3], {x = \"y\"}, ]",
		  "{\"a\":[1,[2,3],{\"x\":\"y\"}]}");
	parses_to("a = [\n  1, # one\n  2\n]", "{\"a\":[1,2]}");
	parses_to("a = {}\nb = { c.d = 1, e = [] }",
		  "{\"a\":{},\"b\":{\"c\":{\"d\":1},\"e\":[]}}");
	parses_to("a = 1\r\nb = 2\r\n", "{\"a\":1,\"b\":2}");
	parses_to("# only a comment", "{}");
	parses_to("", "{}");
}

static void test_keys_and_tables(void)
{
	parses_to("\"a.b\" = 1\n'c d'.e = 2\nf . g = 3",
		  "{\"a.b\":1,\"c d\":{\"e\":2},\"f\":{\"g\":3}}");
	parses_to(
		"[plugins.\"io.containerd.grpc.v1.cri\".containerd]\nx = 1",
		"{\"plugins\":{\"io.containerd.grpc.v1.cri\":{\"containerd\":{\"x\":1}}}}");
	parses_to(
		"[plugins.'io.containerd.cri.v1.runtime']\n[plugins]\nv = 1",
		"{\"plugins\":{\"io.containerd.cri.v1.runtime\":{},\"v\":1}}");
	parses_to("[[a]]\nk = 1\n[[a]]\nk = 2\n[a.sub]\nz = 0",
		  "{\"a\":[{\"k\":1},{\"k\":2,\"sub\":{\"z\":0}}]}");
	parses_to("[a.b]\n[a]\nc = 1", "{\"a\":{\"b\":{},\"c\":1}}");
}

static void test_invalid(void)
{
	refused("a = 1\na = 2", "line 2: key 'a' is set twice");
	refused("[a]\n[a]", "line 2: table 'a' is defined twice");
	refused("a.b = 1\n[a]", "table 'a' is defined twice");
	refused("[a]\nb = 1\n[a.b]", "'b' is not a table");
	refused("[x]\ny.z = 1\n[x.y]", "table 'y' is defined twice");
	refused("a = 1\n[a.b]", "'a' is a value, not a table");
	refused("[[a]]\n[a]", "'a' is not a table");
	refused("a = 1\n[[a]]", "'a' is not an array of tables");
	refused("d = 1979-05-27", "dates and times are not supported");
	refused("d = 07:32:00", "dates and times are not supported");
	refused("a = 01", "leading zero");
	refused("a = 1_", "misplaced '_'");
	refused("a = _1", "misplaced '_'");
	refused("a = 1__2", "misplaced '_'");
	refused("a = 0x_1", "misplaced '_'");
	refused("a = 0x-1", "bad number");
	refused("a = .5", "bad float");
	refused("a = 5.", "bad float");
	refused("a = 1e", "bad float");
	refused("a = 9223372036854775808", "does not fit in 64 bits");
	refused("a = tru", "bad number");
	refused("a = \"x", "not closed");
	refused("a = \"x\n\"", "control character 0x0a");
	refused("a = \"\\q\"", "unknown escape");
	refused("a = \"\\ud800\"", "no scalar value");
	refused("a = \"\\u12\"", "needs 4 hex digits");
	refused("a = '''x", "not closed");
	refused("a = \"\"\"x\"\"\"\"\"\"", "unexpected");
	refused("a = [1,,2]", "a value is missing");
	refused("a = [1 2]", "expected ',' or ']'");
	refused("a = {x = 1,}", "a key is missing");
	refused("a = {x = 1", "expected ',' or '}'");
	refused("a = 1 b = 2", "unexpected 'b'");
	refused("a =", "a value is missing");
	refused("= 1", "a key is missing");
	refused("a", "expected '='");
	refused("[a", "expected ']'");
	refused("[[a]", "expected ']]'");
	refused("\"\"\"k\"\"\" = 1", "multi-line");
	refused("a = 1 # \x01", "control character in a comment");
}

static void test_limits(void)
{
	char deep[200] = "a = ";
	char err[SH_TOML_ERR_MAX];
	struct json_object *o = NULL;

	for (int i = 0; i < 40; i++)
		strcat(deep, "[");
	refused(deep, "nested deeper than 32");
	ok(toml_parse("a = \"x\0y\"", 9, &o, err) == -EINVAL &&
		   strstr(err, "NUL"),
	   "a NUL byte is refused (%s)", err);
	refused("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.A.B.C.D.E.F.G = 1",
		"more than 32 parts");
}

static char *write_doc(struct json_object *o, int *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	*r = toml_write_doc(m, o);
	fclose(m);
	return buf;
}

/* text -> object -> TOML -> object: the same object. */
static void round_trip(const char *text)
{
	char err[SH_TOML_ERR_MAX];
	struct json_object *a = parse(text, err), *b = NULL;
	int r = -1;
	char *out = a ? write_doc(a, &r) : NULL;

	b = out && !r ? parse(out, err) : NULL;
	ok(a && b && json_object_equal(a, b), "round trip: %s", shown(text));
	if (!(a && b && json_object_equal(a, b)))
		tap_diag("  written: %s / %s", out ? out : "-", err);
	free(out);
	json_object_put(a);
	json_object_put(b);
}

static void test_write(void)
{
	struct json_object *o = json_tokener_parse(
		"{\"k\":\"a\\\"b\\\\c\\nd\\u0001\",\"bare-key_1\":1,"
		"\"dotted.key\":true,\"t\":{\"x\":[1,{\"y\":2}]},\"e\":{}}");
	struct json_object *n = json_tokener_parse("{\"x\":null}");
	int r;
	char *out = write_doc(o, &r);

	is_str(out,
	       "k = \"a\\\"b\\\\c\\nd\\u0001\"\nbare-key_1 = 1\n"
	       "\"dotted.key\" = true\n\n[t]\nx = [1, {y = 2}]\n\n[e]\n",
	       "written: escapes, bare and quoted keys, inline tables, empty tables");
	free(out);
	out = write_doc(n, &r);
	ok(r == -EINVAL, "null has no TOML form: -EINVAL");
	free(out);
	json_object_put(o);
	json_object_put(n);
	round_trip(
		"a = 1\n[x.y]\nb = \"q\\u00e9\"\nc = [1, 2.5e3, inf, -inf, 0x1f, 1_000, 0.02]\n"
		"d = \"\"\"\nl1\"\"\"\nf = {g = 1, h.i = true}\n[[arr]]\nk = 1\n[[arr]]\nk = 2\n"
		"[arr.sub]\nz = 0\n");
	round_trip(
		"version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
		"runtime_type = \"io.containerd.runc.v2\"\npod_annotations = []\n"
		"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
		"SystemdCgroup = true\n");
	round_trip(
		"version = 3\n[plugins.'io.containerd.gc.v1.scheduler']\npause_threshold = 0.02\n"
		"[[plugins.'io.containerd.transfer.v1.local'.unpack_config]]\nplatform = 'linux/amd64'\n");
}

static void test_get(void)
{
	char err[SH_TOML_ERR_MAX];
	struct json_object *o = parse("[a.b]\nc = 'x'\n", err);
	const char *path[] = { "a", "b", "c", NULL };
	const char *missing[] = { "a", "x", "c", NULL };
	const char *through[] = { "a", "b", "c", "d", NULL };

	is_str(json_object_get_string(toml_get(o, path)), "x",
	       "toml_get a.b.c");
	ok(!toml_get(o, missing) && !toml_get(o, through),
	   "toml_get: a missing key, a path through a value");
	json_object_put(o);
}

int main(void)
{
	test_values();
	test_keys_and_tables();
	test_invalid();
	test_limits();
	test_write();
	test_get();
	return tap_done();
}
