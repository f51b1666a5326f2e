#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The documentation against what it documents (scripts/check-docs.py,
# docs/development.md "Documentation"): every key of the config schema is
# in oci-sockopt-hook.json(5) and nothing else is, with its enum values and
# default; every command of `oci-sockopt-hook --help` is in
# oci-sockopt-hook(1) and in the README's Commands table and nothing else
# is; the README stays within 300 lines, links every docs page and states
# no figure (they live in docs/performance.md); every relative link and
# anchor resolves; every test's header says what it proves (the map of the
# tests, `make suites`, is made from them) and names modules that exist;
# every module has a unit test or a reason not to, and no two suites share
# a number; the module map has a row for every module of hook/ and none
# for a module that is gone (scripts/check-modules.py). The check runs on the tree (it must pass), then on copies
# broken one way each (it must name the break), so that each of its checks
# is shown to fail. Both man pages render with
# go-md2man and man without a warning. Needs no root.
#
# Modules: (the docs)
# Root: no
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
BIN=$BUILD/oci-sockopt-hook
CHECK=$top/scripts/check-docs.py
[ -x "$BIN" ] || tap_skip_all "hook not built: $BIN (run make)"
for cmd in python3 go-md2man man; do
	command -v "$cmd" >/dev/null || tap_skip_all "$cmd is not installed (scripts/deps.sh)"
done

T=$(mktemp -d /tmp/sockopt-hook-docs.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT

out=$("$CHECK" "$top" "$BIN" 2>&1)
tap_ok $? "check-docs.py: the docs, man pages, schema, binary and README agree" ||
	tap_diag "$out"
tap_is "$(tail -n 1 <<<"$out")" "docs: 0 drift(s)" "check-docs.py reports no drift"
tap_like "$(wc -l <"$top/README.md")" '^ *([0-9]|[0-9][0-9]|[12][0-9][0-9]|300)$' \
	"README.md has at most 300 lines"

# copy NAME [DIR...]: a tree of its own for one broken variant, sharing
# what it does not edit (README.md, docs, schemas and the DIRs are
# copies). Sets C.
copy()
{
	local f name=$1

	shift
	C=$T/$name
	mkdir -p "$C"
	for f in "$top"/* "$top"/.[!.]*; do
		case " README.md docs schemas $* " in
		*" $(basename "$f") "*) cp -a "$f" "$C/" ;;
		*)
			case $(basename "$f") in
			build | .git) ;;
			*) ln -s "$f" "$C/" ;;
			esac
			;;
		esac
	done
}

# insert_before FILE LINE TEXT: TEXT and an empty line before the line LINE.
insert_before()
{
	python3 - "$@" <<'PY'
import sys
path, line, text = sys.argv[1:]
t = open(path).read()
assert "\n" + line + "\n" in t, line
t = t.replace("\n" + line + "\n", "\n" + text + "\n" + line + "\n", 1)
open(path, "w").write(t)
PY
}

# broken WANT [BINARY] DESC: check-docs.py on the copy $C fails, naming WANT.
broken()
{
	local got rc

	got=$("$CHECK" "$C" "${2:-$BIN}" 2>&1)
	rc=$?
	[ "$rc" = 1 ] && [[ $got == *"$1"* ]]
	tap_ok $? "$3" || tap_diag "exit $rc, want a line with: $1" "$got"
}

K=docs/man/oci-sockopt-hook.json.5.md
P=docs/man/oci-sockopt-hook.1.md

copy no-key
sed -i '/^\*\*log_format\*\*$/,/^$/d' "$C/$K"
broken "$K: lacks the schema key log_format" "" "a schema key missing from the .5 page is a drift"

copy extra-key
insert_before "$C/$K" "# EFFECTIVE POLICY" $'**annotations.allow_everything**\n: Boolean.\n'
broken "$K: annotations.allow_everything is no key of schemas/config.schema.json" "" \
	"a .5 key the schema lacks is a drift"

copy schema-key
jq '.properties.annotations.properties.allow_everything = {"type": "boolean"}' \
	"$top/schemas/config.schema.json" >"$C/schemas/config.schema.json"
broken "$K: lacks the schema key annotations.allow_everything" "" \
	"a key added to the schema alone is a drift"

copy enum
jq '.properties.on_unsupported.enum += ["ignore"]' "$top/schemas/config.schema.json" \
	>"$C/schemas/config.schema.json"
broken "$K: on_unsupported does not name \"ignore\"" "" "an enum value the .5 page does not name is a drift"

copy default
jq '.properties.log_level.default = "debug"' "$top/schemas/config.schema.json" \
	>"$C/schemas/config.schema.json"
broken "$K: log_level does not say its default debug" "" "a default the .5 page does not state is a drift"

copy no-command
sed -i '/^\*\*explain\*\* /,/^$/d' "$C/$P"
broken "$P: COMMANDS lacks explain" "" "a command missing from the .1 page is a drift"

copy readme-command
# shellcheck disable=SC2016 # the backquotes are Markdown's
sed -i '/^| `oci-sockopt-hook explain` /d' "$C/README.md"
broken "README.md: the Commands table lacks explain" "" "a command missing from the README's table is a drift"

copy extra-command
# the binary, with one more command in its --help
cat >"$T/fake-hook" <<EOF
#!/bin/sh
[ "\$*" = --help ] || exec "$BIN" "\$@"
"$BIN" --help | sed '/^Commands:\$/a\\  frobnicate     a command no page names'
EOF
chmod +x "$T/fake-hook"
broken "$P: COMMANDS lacks frobnicate" "$T/fake-hook" "a command of the binary that no page names is a drift"
broken "README.md: the Commands table lacks frobnicate" "$T/fake-hook" \
	"... and the README's table must name it too"

copy stale-command
insert_before "$C/$P" "# OPTIONS" $'**frobnicate**\n: Gone.\n'
broken "$P: frobnicate is no command of" "" "a .1 command the binary lacks is a drift"

copy long-readme
seq 300 >>"$C/README.md"
broken "README.md: $(($(wc -l <"$top/README.md") + 300)) lines, more than 300" "" \
	"a README over 300 lines is a drift"

copy readme-figure
insert_before "$C/README.md" "## Documentation" \
	"Beside a noisy neighbour the victim keeps 15.99 MB/s, p99 3.2 ms."
broken "the figure 15.99 MB/s: figures live in docs/performance.md alone" "" \
	"a figure copied into the README is a drift, named with its unit"
broken "the figure 3.2 ms: figures live in docs/performance.md alone" "" "... every one of them"

copy readme-table-figure
insert_before "$C/README.md" "## Documentation" \
	$'| pod | bytes queued |\n|---|---|\n| bypassed | 52428800 |'
broken "the figure 52428800: figures live in docs/performance.md alone" "" \
	"a number of a performance.md table, without a unit, in the README is a drift"

copy unlinked
echo "# A page" >"$C/docs/new-page.md"
broken "README.md: no link to docs/new-page.md" "" "a docs page the README does not link is a drift"

copy dead-link
echo "See [the guide](nowhere.md) and [this](install.md#no-such-heading)." >>"$C/docs/config.md"
broken "docs/config.md: link to nowhere.md: no such file" "" "a link to a missing file is a drift"
broken "docs/config.md: link to install.md#no-such-heading: no such heading" "" \
	"a link to a missing heading is a drift"

# The tests' headers (scripts/suites.py makes the map of the tests from
# them) against the tests and hook/.
M=tests/README.md
copy new-suite tests
touch "$C/tests/integration/99-new.sh"
broken "tests/integration/99-new.sh: its header says nothing: begin the file with a comment saying what it proves" "" \
	"a suite whose header says nothing is a drift"
broken "tests/integration/99-new.sh: its header has no \"Modules:\" line" "" \
	"... and one without a Modules: line"

copy bad-root tests
sed -i 's/^# Root: yes$/# Root: maybe/' "$C/tests/integration/10-runc-policy.sh"
broken "tests/integration/10-runc-policy.sh: \"Root: maybe\": say yes, no or partly" "" \
	"a suite's Root: line that is not yes, no or partly is a drift"

copy new-unit tests
printf '/*\n * A unit test of no module.\n */\n' >"$C/tests/unit/test_new.c"
broken "tests/unit/test_new.c: its header has no \"Modules:\" line" "" \
	"a unit test whose header names no module is a drift"

copy new-scenario tests
touch "$C/tests/node/scenarios/70-new.sh" "$C/tests/fuzz/fuzz_new.c" "$C/tests/vm/guest/new.sh" \
	"$C/tests/attacks/new.c"
broken "tests/node/scenarios/70-new.sh: its header says nothing" "" \
	"a node scenario whose header says nothing is a drift"
broken "tests/fuzz/fuzz_new.c: its header says nothing" "" "... a fuzz target"
broken "tests/vm/guest/new.sh: its header says nothing" "" "... a VM scenario"
broken "tests/attacks/new.c: its header says nothing" "" "... an attack program"

copy new-module hook
touch "$C/hook/lib/newmod.c"
broken "$M: hook module hook/lib/newmod.c has no unit test and is not under \"## Modules without a unit test\": add tests/unit/test_newmod.c whose header has the line \"Modules: \`newmod.c\`\"" "" \
	"a hook module with neither a unit test nor a reason is a drift"

copy renamed-module hook
mv "$C/hook/lib/number.c" "$C/hook/lib/numbers.c"
broken "tests/unit/test_number.c: its Modules: line names number.c, which is no module of hook/: rename it" "" \
	"a module a unit test's header names that is gone (renamed) is a drift"
broken "$M: hook module hook/lib/numbers.c has no unit test" "" "... and the new name is one"

copy gone-module hook
mv "$C/hook/stage/teardown.c" "$C/hook/stage/release.c"
broken "\"## Modules without a unit test\" names teardown.c, which is no module of hook/: rename it" "" \
	"a module the tests' map lists without a unit test that is gone is a drift"

copy both-module tests
# shellcheck disable=SC2016 # Markdown's backquotes
sed -i '/^| `attach.c` |/i | `number.c` | a row by mistake | 00 |' "$C/$M"
broken "hook module hook/lib/number.c has a unit test (test_number.c) and is under \"## Modules without a unit test\": remove that row" "" \
	"a module with a unit test and a reason not to have one is a drift"

out=$("$top/scripts/suites.py" "$top")
tap_ok $? "scripts/suites.py makes the map of the tests from their headers" || tap_diag "$out"
n=$(find "$top/tests/integration" -name '[0-9][0-9]-*.sh' | wc -l)
# shellcheck disable=SC2016 # Markdown's backquotes
tap_is "$(sed -n '/^## Integration suites$/,/^## Unit tests$/p' <<<"$out" |
	grep -c '^| `[0-9][0-9]-.*\.sh` | ')" "$n" \
	"... one row per integration suite"
# shellcheck disable=SC2016 # Markdown's backquotes
tap_like "$(grep '^| `10-runc-policy.sh` ' <<<"$out")" \
	'^\| `10-runc-policy.sh` \| The hook end to end under runc: .* nothing is left behind\. \| `prestart\.c`.* \| yes \|$' \
	"... its row the suite's header claim, its Modules: and Root: lines"

copy reason-table hook
sed -i 's/"the cgroup cannot be found, made or queried"/"the cgroup is gone"/' "$C/hook/lib/error.h"
broken "docs/cluster.md: the reasons table is not the one made from hook/lib/error.h" "" \
	"a reason whose meaning changed in hook/lib/error.h and not in the docs is a drift"

copy same-number tests
cp "$top/tests/integration/74-attacks.sh" "$C/tests/integration/74-more-attacks.sh"
broken "tests/integration: 74-attacks.sh and 74-more-attacks.sh share the number 74" "" \
	"two suites with one number are a drift"
cp "$top/tests/node/scenarios/70-daemonset.sh" "$C/tests/node/scenarios/70-more-daemonset.sh"
broken "tests/node/scenarios: 70-daemonset.sh and 70-more-daemonset.sh share the number 70" "" \
	"... and two node scenarios"

copy quick-suite Makefile
sed -i 's/^CHECK_QUICK_TESTS ?= /&99-gone /' "$C/Makefile"
broken "CHECK_QUICK_TESTS names 99-gone, which matches no suite of tests/integration/" "" \
	"a check-quick suite that does not exist is a drift"

# The module map: each folder's table of modules has a row per module of
# hook/ (scripts/check-modules.py, `make modules-check`), and a map copy
# without a module's row, or with a row for a module that is gone, fails.
MODS=$top/scripts/check-modules.py MAP=$top/docs/development.md
if [ -d "$BUILD/obj" ]; then
	out=$("$MODS" "$BUILD/obj" "$top/hook" "$MAP" 2>&1)
	tap_ok $? "check-modules.py: the map has a row for every module of hook/" ||
		tap_diag "$out"
	# shellcheck disable=SC2016 # backquotes of the markdown, not a command
	sed '/^| `sysctl.c` |/d' "$MAP" >"$T/map-missing.md"
	out=$("$MODS" "$BUILD/obj" "$top/hook" "$T/map-missing.md" 2>&1)
	[ $? = 1 ] && [[ $out == *"the table of hook/policy/ has no row for sysctl.c"* ]]
	tap_ok $? "check-modules.py: a module without its row in the map fails" ||
		tap_diag "$out"
	# shellcheck disable=SC2016 # backquotes of the markdown, not a command
	sed 's/^| `cg.c` | .*/&\n| `reaper.c` | the reaper |/' "$MAP" >"$T/map-gone.md"
	out=$("$MODS" "$BUILD/obj" "$top/hook" "$T/map-gone.md" 2>&1)
	[ $? = 1 ] && [[ $out == *"the table of hook/cgroup/ has a row for reaper.c, which is not a module of hook/cgroup/"* ]]
	tap_ok $? "check-modules.py: a row for a module that is gone fails" ||
		tap_diag "$out"
else
	tap_skip "the module map's checks" "no objects in $BUILD/obj (run make)"
fi

for page in oci-sockopt-hook.1 oci-sockopt-hook.json.5; do
	warn=$(go-md2man -in "$top/docs/man/$page.md" -out "$T/$page" 2>&1)
	tap_is "$warn" "" "go-md2man renders docs/man/$page.md without a warning"
	text=$(MANWIDTH=80 man -l "$T/$page" 2>/dev/null)
	[[ $text == *$'\nNAME\n'* ]] && [[ $text == *$'\nSEE ALSO\n'* ]]
	tap_ok $? "man -l renders $page with NAME and SEE ALSO" || tap_diag "$(head -20 <<<"$text")"
	tap_is "$(MANWIDTH=80 man --warnings -l "$T/$page" 2>&1 >/dev/null)" "" \
		"man --warnings -l $page: no groff warnings"
done

tap_done
