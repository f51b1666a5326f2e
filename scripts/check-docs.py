#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The documentation against what it documents (docs/development.md,
"Documentation"): one line per drift, exit 1 if there is any.

  - keys: every key of schemas/config.schema.json (dotted, "NAME" for a
    policy name, "[]" for an array's items) is a term of the reference,
    docs/man/oci-sockopt-hook.json.5.md, and every term there is a key;
    each enum value appears there in quotes, each default as "default X"
    (or the quoted value with "the default");
  - commands: every command `oci-sockopt-hook --help` lists is a term of
    docs/man/oci-sockopt-hook.1.md's COMMANDS and a row of README.md's
    "## Commands" table, and neither names a command the binary lacks;
    every option of the help's usage lines is a term of OPTIONS, and
    where `oci-sockopt-hook CMD --help` works, every option it prints is
    in CMD's entry;
  - links: README.md has at most 300 lines and links every docs page;
    every relative link of README.md, docs/ and tests/README.md names a
    file that exists and, with #anchor, a heading of that file;
  - tests: every test's header says what it proves and has the lines
    its kind asks for (scripts/suites.py, which makes the map of the
    tests from the headers: `make suites`); every module a Modules: line
    or tests/README.md names exists; every module of hook/ has a unit
    test (a Modules: line of tests/unit/) or a row under "Modules
    without a unit test" (not both); every suite the Makefile's
    CHECK_QUICK_TESTS names exists; no two integration suites, and no
    two node scenarios, share a number;
  - figures: README.md (outside its code blocks) states no measured
    figure: no number with a unit of measure (MB/s, ms, KiB, pages, ...)
    and no number of docs/performance.md's tables with a decimal point or
    three digits; the figures live in performance.md, the README links;
  - reasons: docs/cluster.md's table of reason tokens is the one made
    from hook/lib/error.h's table (--reasons prints it), and the "error"
    row after it.

Usage: check-docs.py [SOURCE-DIR [BINARY]]   (default: . and build/oci-sockopt-hook)
       check-docs.py --reasons [SOURCE-DIR]   (the reasons table, to paste)
"""
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suites  # noqa: E402 (scripts/suites.py, beside this file)

README_MAX_LINES = 300
KEYS_PAGE = "docs/man/oci-sockopt-hook.json.5.md"
COMMANDS_PAGE = "docs/man/oci-sockopt-hook.1.md"
TESTS_PAGE = "tests/README.md"
NO_UNIT_TEST = "Modules without a unit test"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# --- the schema's keys ----------------------------------------------------

def resolve(schema, node):
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith("#/$defs/"):
            raise ValueError(f"unsupported $ref {ref}")
        node = schema["$defs"][ref[len("#/$defs/"):]]
    return node


def schema_keys(schema, node=None, prefix=""):
    """{dotted key: its schema node} for every property, at every depth."""
    node = resolve(schema, schema if node is None else node)
    keys = {}
    if node.get("type") == "array" and "items" in node:
        return schema_keys(schema, node["items"], prefix + "[]")
    for name, sub in node.get("properties", {}).items():
        key = f"{prefix}.{name}" if prefix else name
        keys[key] = resolve(schema, sub)
        keys.update(schema_keys(schema, sub, key))
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        key = f"{prefix}.NAME"
        keys[key] = resolve(schema, extra)
        keys.update(schema_keys(schema, extra, key))
    return keys


# --- Markdown: sections, definition lists, tables, links ------------------

def sections(text, level="#"):
    """{heading: body} of the headings of one level."""
    out, name, body = {}, None, []
    for line in text.splitlines():
        m = re.match(rf"^{level} (.+)$", line)
        if m:
            if name is not None:
                out[name] = "\n".join(body)
            name, body = m.group(1).strip(), []
        elif name is not None:
            body.append(line)
    if name is not None:
        out[name] = "\n".join(body)
    return out


def definitions(text):
    """[(term line, definition text)] of the definition lists in text."""
    lines = text.splitlines()
    out = []
    for i in range(1, len(lines)):
        if lines[i].startswith(": ") and lines[i - 1].strip():
            body = [lines[i][2:]]
            for more in lines[i + 1:]:
                if not more.strip() or more.startswith(": "):
                    break
                body.append(more)
            out.append((lines[i - 1], " ".join(body)))
    return out


def bold(term):
    return [b.replace("\\", "") for b in re.findall(r"\*\*(.+?)\*\*", term)]


def github_anchor(heading):
    text = re.sub(r"[`*]|\[|\]\([^)]*\)", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    seen, out = {}, set()
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        m = None if in_code else re.match(r"^#{1,6} (.+)$", line)
        if m:
            a = github_anchor(m.group(1))
            n = seen.get(a, 0)
            seen[a] = n + 1
            out.add(a if n == 0 else f"{a}-{n}")
    return out


def links(text):
    """Relative link targets of a Markdown text, outside code."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"^[a-z]+:", target):
            yield target


# --- the checks -----------------------------------------------------------

def check_keys(top):
    schema = json.loads(read(os.path.join(top, "schemas/config.schema.json")))
    want = schema_keys(schema)
    page = read(os.path.join(top, KEYS_PAGE))
    have = {}
    for term, body in definitions(sections(page).get("KEYS", "")):
        names = bold(term)
        if names:
            have[names[0]] = body
    bad = [f"{KEYS_PAGE}: lacks the schema key {k}" for k in want
           if k not in have]
    bad += [f"{KEYS_PAGE}: {k} is no key of schemas/config.schema.json"
            for k in have if k not in want]
    for key, node in want.items():
        body = have.get(key)
        if body is None:
            continue
        for value in node.get("enum", []):
            if f'"{value}"' not in body:
                bad.append(f'{KEYS_PAGE}: {key} does not name "{value}"')
        if "default" in node and node["default"] != "":
            d = node["default"]
            d = json.dumps(d) if isinstance(d, bool) else str(d)
            if (f"default {d}" not in body and
                    f'"{d}" (the default)' not in body):
                bad.append(f"{KEYS_PAGE}: {key} does not say its default {d}")
    return bad


def help_text(binary, *args):
    try:
        r = subprocess.run([binary, *args, "--help"], capture_output=True,
                           text=True, timeout=10, check=False)
    except OSError as e:
        return None, str(e)
    return (r.stdout if r.returncode == 0 else None), r.stderr


def binary_commands(text):
    """The commands and usage options `--help` prints."""
    cmds, opts, in_cmds = [], set(), False
    for line in text.splitlines():
        if line.rstrip().endswith("Commands:"):
            in_cmds = True
            continue
        if in_cmds:
            m = re.match(r"^\s+([A-Za-z][\w-]*)\s", line + " ")
            if m:
                cmds.append(m.group(1))
            elif not line.strip() and cmds:
                in_cmds = False
        elif line.lstrip().startswith(("Usage:", "oci-sockopt-hook")):
            opts.update(re.findall(r"--[a-z][a-z-]*", line))
    return cmds, opts


def readme_commands(readme):
    table = sections(readme, "##").get("Commands", "")
    out = set()
    for row in table.splitlines():
        if not row.startswith("|") or set(row) <= set("|-: "):
            continue
        first = row.split("|")[1]
        for span in re.findall(r"`([^`]+)`", first):
            word = span.replace("oci-sockopt-hook", "").split()
            if word and not word[0].startswith("-") and word[0] != "command":
                out.add(word[0])
    return out


def check_commands(top, binary):
    text, err = help_text(binary)
    if text is None:
        return [f"{binary} --help failed: {err.strip()}"]
    cmds, usage_opts = binary_commands(text)
    if not cmds:
        return [f"{binary} --help lists no commands"]
    page = read(os.path.join(top, COMMANDS_PAGE))
    secs = sections(page)
    entries = {}
    for term, body in definitions(secs.get("COMMANDS", "")):
        # The commands are the term's leading bold words ("**prestart**,
        # **createRuntime** [...]"); a bold word after them is a literal
        # operand ("**configure**|**unconfigure**").
        lead = re.match(r"\*\*[^*]+\*\*(?:,\s*\*\*[^*]+\*\*)*", term)
        for name in bold(lead.group(0) if lead else ""):
            if not name.startswith("-"):
                entries[name] = term + " " + body
    options = {bold(t)[0] for t, _ in definitions(secs.get("OPTIONS", ""))
               if bold(t)}
    readme = readme_commands(read(os.path.join(top, "README.md")))
    bad = []
    for c in cmds:
        if c not in entries:
            bad.append(f"{COMMANDS_PAGE}: COMMANDS lacks {c}")
        if c not in readme:
            bad.append(f"README.md: the Commands table lacks {c}")
        sub, _ = help_text(binary, c)
        if sub and c in entries:
            for opt in sorted(set(re.findall(r"--[a-z][a-z-]*", sub))):
                if opt != "--help" and opt not in entries[c]:
                    bad.append(f"{COMMANDS_PAGE}: {c} lacks its option {opt}")
    bad += [f"{COMMANDS_PAGE}: {c} is no command of {binary}"
            for c in entries if c not in cmds]
    bad += [f"README.md: the Commands table names {c}, no command of {binary}"
            for c in sorted(readme) if c not in cmds]
    bad += [f"{COMMANDS_PAGE}: OPTIONS lacks {o}" for o in sorted(usage_opts)
            if o not in options]
    return bad


def table_rows(body):
    """(header cells, [row cells]) of the Markdown tables in body, every
    row carrying its own table's header."""
    rows, header, last = [], None, None
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|"):
            header = last = None
        elif set(line) <= set("|-: "):
            header = last
        elif header is None:
            last = cells
        else:
            rows.append((header, cells))
    return rows


def hook_modules(top):
    """Every hook/**/*.c: {file name: path from the top}."""
    out = {}
    for d, _, files in os.walk(os.path.join(top, "hook")):
        for f in files:
            if f.endswith(".c"):
                out[f] = os.path.relpath(os.path.join(d, f), top)
    return out


def named_modules(cell, modules):
    """The modules a cell names (`x.c`, or a glob such as `config*.c`)."""
    return [(span, [m for m in modules if re.match(pat, m)])
            for span, pat in suites.modules_of(cell).items()]


def row_line(page, title, name):
    """The line of the first row under "## title" that names `name`."""
    lines = page.splitlines()
    start = next((i for i, line in enumerate(lines, 1)
                  if line == f"## {title}"), 0)
    for i, line in enumerate(lines[start:], start + 1):
        if line.startswith("## "):
            break
        if line.startswith("|") and f"`{name}`" in line:
            return i
    return start


def check_quick(top):
    """make check-quick's suites: a renamed one would drop out unseen."""
    mk = read(os.path.join(top, "Makefile"))
    quick = re.search(r"^CHECK_QUICK_TESTS \?= (.*)$", mk, re.M)
    line = mk[:quick.start()].count("\n") + 1 if quick else 0
    names = os.listdir(os.path.join(top, "tests/integration"))
    return [f"Makefile:{line}: CHECK_QUICK_TESTS names {pat}, which matches "
            f"no suite of tests/integration/: rename or remove it"
            for pat in (quick.group(1).split() if quick else [])
            if pat != "unit-" and not any(pat in s for s in names)]


def check_tests(top):
    """The tests' headers (scripts/suites.py, which makes the map of the
    tests from them) against hook/: each test says what it proves, each
    module a header or tests/README.md names exists, and each module has
    a unit test or a row under "Modules without a unit test"."""
    page = read(os.path.join(top, TESTS_PAGE))
    secs = sections(page, "##")
    modules = hook_modules(top)
    tables, bad = suites.tests(top)
    unit_mods = {}
    for title, folder, _, rows in tables:
        for f, _, tags in rows:
            for span, found in named_modules(tags.get("modules"), modules):
                if not found:
                    bad.append(f"{folder}/{f}: its Modules: line names "
                               f"{span}, which is no module of hook/: rename "
                               f"it to the module's new name, or remove it")
                if title == "Unit tests":
                    for m in found:
                        unit_mods.setdefault(m, []).append(f)
    no_unit = {}
    for _, r in table_rows(secs.get(NO_UNIT_TEST, "")):
        for span, found in named_modules(r[0], modules):
            if not found:
                bad.append(f"{TESTS_PAGE}:{row_line(page, NO_UNIT_TEST, span)}"
                           f": \"## {NO_UNIT_TEST}\" names {span}, which is "
                           f"no module of hook/: rename it to the module's "
                           f"new name, or remove it")
            for m in found:
                no_unit[m] = r[0]
    for m in sorted(modules):
        stem = m[:-2]
        if m not in unit_mods and m not in no_unit:
            bad.append(
                f"{TESTS_PAGE}: hook module {modules[m]} has no unit test "
                f"and is not under \"## {NO_UNIT_TEST}\": add "
                f"tests/unit/test_{stem}.c whose header has the line "
                f"\"Modules: `{m}`\", or the row "
                f"\"| `{m}` | why no unit test | exercised by |\" there")
        elif m in unit_mods and m in no_unit:
            bad.append(
                f"{TESTS_PAGE}:{row_line(page, NO_UNIT_TEST, m)}: hook "
                f"module {modules[m]} has a unit test "
                f"({', '.join(unit_mods[m])}) and is under "
                f"\"## {NO_UNIT_TEST}\": remove that row")
    return bad + check_quick(top) + check_prefixes(top)


def check_prefixes(top):
    """Each suite of tests/integration and each scenario of
    tests/node/scenarios has a number of its own in its folder:
    TESTS='NN-' and NODE_SCENARIOS='NN-' run it, and the docs name it by
    it."""
    bad = []
    for folder in ("tests/integration", "tests/node/scenarios"):
        seen = {}
        for f in sorted(os.listdir(os.path.join(top, folder))):
            if re.match(r"^\d\d-.*\.sh$", f):
                seen.setdefault(f[:2], []).append(f)
        bad += [f"{folder}: {' and '.join(names)} share the number "
                f"{n}: give one a number no suite has"
                for n, names in sorted(seen.items()) if len(names) > 1]
    return bad


def check_links(top):
    readme_path = os.path.join(top, "README.md")
    readme = read(readme_path)
    bad = []
    n = len(readme.splitlines())
    if n > README_MAX_LINES:
        bad.append(f"README.md: {n} lines, more than {README_MAX_LINES}")
    pages = []
    for d, _, files in os.walk(os.path.join(top, "docs")):
        pages += [os.path.join(d, f) for f in files if f.endswith(".md")]
    linked = {os.path.normpath(os.path.join(top, t.split("#")[0]))
              for t in links(readme) if t.split("#")[0]}
    bad += [f"README.md: no link to {os.path.relpath(p, top)}"
            for p in sorted(pages) if os.path.normpath(p) not in linked]
    tests_page = os.path.join(top, TESTS_PAGE)
    for src in [readme_path] + sorted(pages) + [tests_page]:
        text = read(src)
        for target in links(text):
            path, _, anchor = target.partition("#")
            dest = (os.path.normpath(os.path.join(os.path.dirname(src), path))
                    if path else src)
            where = os.path.relpath(src, top)
            if not os.path.exists(dest):
                bad.append(f"{where}: link to {target}: no such file")
            elif anchor and dest.endswith(".md") and \
                    anchor not in anchors(read(dest)):
                bad.append(f"{where}: link to {target}: no such heading")
    return bad


PERF_PAGE = "docs/performance.md"
NUMBER = r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]|\.\d)"
MEASURE = (r"(?<![\w.])\d+(?:\.\d+)?\s?"
           r"(?:[KMG]B/s|[mun]s|µs|KiB|MiB|GiB|[KMG]B|pages|%)(?!\w)")


def prose_lines(text):
    """[(line number, line)] of text outside its ``` code blocks."""
    out, fence = [], False
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            out.append((i, line))
    return out


def check_figures(top):
    perf = set()
    for line in read(os.path.join(top, PERF_PAGE)).splitlines():
        if line.startswith("|"):
            perf.update(n for n in re.findall(NUMBER, line)
                        if "." in n or len(n) >= 3)
    bad = []
    for i, line in prose_lines(read(os.path.join(top, "README.md"))):
        found = re.findall(MEASURE, line)
        found += [n for n in re.findall(NUMBER, line)
                  if n in perf and not any(n in f for f in found)]
        bad += [f"README.md:{i}: the figure {f}: figures live in "
                f"{PERF_PAGE} alone, link to it" for f in found]
    return bad


REASONS_H = "hook/lib/error.h"
REASONS_PAGE = "docs/cluster.md"
REASONS_HEAD = "| reason | event | exit status | when |\n|---|---|---|---|\n"
REASONS_ERROR = "| `error` | refused | 1 | anything no site classified |\n"


def reasons_table(top):
    """The Markdown table of hook/lib/error.h's SH_REASON_TABLE rows:
    X(NAME, "token", "event", "status", "meaning" "..."), in its order."""
    text = read(os.path.join(top, REASONS_H)).replace("\\\n", " ")
    start = text.index("#define SH_REASON_TABLE(X)")
    body = text[start:text.index("\n", start)]
    rows = []
    for m in re.finditer(r'X\(\s*(\w+)\s*,((?:\s*"(?:[^"\\]|\\.)*")+'
                         r'(?:\s*,(?:\s*"(?:[^"\\]|\\.)*")+){3})\s*\)', body):
        fields = [re.sub(r'"\s*"', "", f.strip())[1:-1]
                  for f in re.findall(r'(?:\s*"(?:[^"\\]|\\.)*")+',
                                      m.group(2))]
        token, event, status, meaning = fields
        rows.append(f"| `{token}` | {event} | {status} | {meaning} |\n")
    return REASONS_HEAD + "".join(rows) + REASONS_ERROR


def check_reasons(top):
    want = reasons_table(top)
    page = read(os.path.join(top, REASONS_PAGE))
    if want in page:
        return []
    return [f"{REASONS_PAGE}: the reasons table is not the one made from "
            f"{REASONS_H}: replace it with the output of "
            f"`scripts/check-docs.py --reasons`"]


def main():
    args = sys.argv[1:]
    if args and args[0] == "--reasons":
        sys.stdout.write(reasons_table(args[1] if len(args) > 1 else "."))
        return 0
    if len(args) > 2 or (args and args[0] in ("-h", "--help")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    top = args[0] if args else "."
    binary = args[1] if len(args) > 1 else os.path.join(
        top, "build", "oci-sockopt-hook")
    bad = (check_keys(top) + check_commands(top, binary) + check_links(top)
           + check_tests(top) + check_figures(top) + check_reasons(top))
    for line in bad:
        print(line)
    print(f"docs: {len(bad)} drift(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
