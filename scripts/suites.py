#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The map of the tests, made from the tests themselves: one Markdown
table per kind of test (tests/README.md says what each kind is), one
row per file, its text the file's header claim.

A test's header is its first comment: in a shell script the comment
lines after the shebang, in C the first /* */ block. Its first paragraph
(up to an empty comment line) is the claim the row shows, lines joined;
the lines "Modules: ..." (the hook modules it exercises, as `x.c`) and
"Root: yes|no|partly" anywhere in the header fill those columns and are
not part of the claim. The header is the one home of the claim: nothing
here or in tests/README.md repeats it.

Usage: suites.py [--check] [SOURCE-DIR]   (default: .)
  prints the tables on stdout; a test whose header has no claim, or
  lacks a column its kind has, is one line on stderr and exit 1 (with
  --check, only those lines, no tables).

Also a module: check-docs.py imports tests() and modules_of().
"""
import os
import re
import sys

# (title, folder, file pattern, columns after the name and the claim)
KINDS = [
    ("Integration suites", "tests/integration", r"^\d\d-.*\.sh$",
     ("modules", "root")),
    ("Unit tests", "tests/unit", r"^test_.*\.c$", ("modules",)),
    ("Fuzz targets", "tests/fuzz", r"^fuzz_.*\.c$", ("modules",)),
    ("Attack programs", "tests/attacks", r"^.*\.c$", ()),
    ("Node scenarios", "tests/node/scenarios", r"^.*\.sh$", ()),
    ("VM scenarios", "tests/vm/guest", r"^(?!lib\.sh$).*\.sh$", ()),
]
TAG = re.compile(r"^(Modules|Root|node-timeout):\s*(.*)$")


def header(path):
    """The text of the file's first comment, comment markers removed."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = []
    if path.endswith(".c"):
        m = re.search(r"/\*(.*?)\*/", text, re.S)
        for line in (m.group(1).splitlines() if m else []):
            lines.append(re.sub(r"^\s*\* ?", "", line))
    else:
        for i, line in enumerate(text.splitlines()):
            if i == 0 and line.startswith("#!"):
                continue
            if not line.startswith("#"):
                break
            if re.match(r"^# ?(SPDX-License-Identifier|shellcheck)", line):
                continue
            lines.append(re.sub(r"^# ?", "", line))
    return "\n".join(lines).strip("\n")


def parse(path):
    """(claim, {tag: value}) of one test file."""
    tags, prose = {}, []
    for line in header(path).splitlines():
        m = TAG.match(line.strip())
        if m:
            tags[m.group(1).lower()] = m.group(2).strip()
        else:
            prose.append(line)
    text = "\n".join(prose).strip("\n")
    para = re.split(r"\n\s*\n", text, maxsplit=1)[0] if text else ""
    claim = " ".join(w.strip() for w in para.splitlines() if w.strip())
    return claim.replace("|", "\\|"), tags


def tests(top):
    """[(title, folder, columns, [(file, claim, tags)])], and the
    problems, one line each."""
    out, bad = [], []
    for title, folder, pattern, cols in KINDS:
        rows = []
        for f in sorted(os.listdir(os.path.join(top, folder))):
            if not re.match(pattern, f):
                continue
            path = os.path.join(folder, f)
            claim, tags = parse(os.path.join(top, path))
            if not claim:
                bad.append(f"{path}: its header says nothing: begin the "
                           f"file with a comment saying what it proves")
            for c in cols:
                if not tags.get(c):
                    bad.append(f"{path}: its header has no \"{c.title()}:\" "
                               f"line")
            if "root" in cols and tags.get("root") and \
                    tags["root"] not in ("yes", "no", "partly"):
                bad.append(f"{path}: \"Root: {tags['root']}\": say yes, no "
                           f"or partly")
            rows.append((f, claim, tags))
        out.append((title, folder, cols, rows))
    return out, bad


def modules_of(cell):
    """The modules a "Modules:" line names (`x.c`, or a glob `config*.c`),
    as regular expressions by their written form."""
    return {span: "^" + re.escape(span).replace(r"\*", ".*") + "$"
            for span in re.findall(r"`([^`]+\.c)`", cell or "")}


def markdown(tables):
    parts = ["<!-- Made by scripts/suites.py from the tests' headers "
             "(make suites); not kept in the tree. -->\n"]
    for title, folder, cols, rows in tables:
        parts.append(f"\n## {title}\n\n`{folder}/`\n\n")
        parts.append("| " + " | ".join(("test", "what it proves") + cols) +
                     " |\n")
        parts.append("|---|---|" + "---|" * len(cols) + "\n")
        for f, claim, tags in rows:
            cells = [f"`{f}`", claim] + [tags.get(c, "") for c in cols]
            parts.append("| " + " | ".join(cells) + " |\n")
    return "".join(parts)


def main():
    args = sys.argv[1:]
    check = bool(args) and args[0] == "--check"
    if check:
        args = args[1:]
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    tables, bad = tests(args[0] if args else ".")
    for line in bad:
        print(line, file=sys.stderr)
    if not check:
        sys.stdout.write(markdown(tables))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
