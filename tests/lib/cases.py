#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The bad-input corpus's case files (tests/bad-inputs/*.cases, format in
tests/bad-inputs/README.md): one file per family of cases, each case a
line "=== NAME" and its files, each a line "--- FILE" and its content.

  cases.py unpack CORPUS DIR   writes DIR/NAME/FILE for every case of
                               CORPUS/*.cases, as 60-bad-inputs.sh runs them
  cases.py list CORPUS         prints the case names, one a line

A file's content is its lines up to the next "---" or "===" line, each
ending in a newline, less the empty lines at its end (they separate
files and cases). "--- FILE noeol" drops the last newline;
"--- FILE escaped" reads \\xNN as that byte and \\\\ as a backslash (for NUL
bytes, bytes that are not UTF-8 and trailing blanks). Lines before the
first case are the family's comment ("#" lines) or empty.

A malformed file (an unknown FILE, a case named twice or without its
expect, an expect that is not one line) is one line on stderr, exit 1.
"""
import os
import re
import sys

FILES = ("expect", "state.json", "config.json", "operator.json", "args",
         "setup", "run")
FLAGS = ("noeol", "escaped")


class Bad(Exception):
    pass


def unescape(data, where):
    out, i = bytearray(), 0
    while i < len(data):
        c = data[i:i + 1]
        if c != b"\\":
            out += c
            i += 1
        elif data[i + 1:i + 2] == b"\\":
            out += b"\\"
            i += 2
        elif re.match(rb"x[0-9a-fA-F]{2}", data[i + 1:i + 4]):
            out.append(int(data[i + 2:i + 4], 16))
            i += 4
        else:
            raise Bad(f"{where}: a backslash that is neither \\\\ nor \\xNN")
    return bytes(out)


def parse(path):
    """[(name, {file: bytes})] of one .cases file, in its order."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    cases, case, block = [], None, None

    def close():
        if block is None:
            return
        name, flags, body, start = block
        while body and body[-1] == b"":
            body.pop()
        data = b"".join(line + b"\n" for line in body)
        if "noeol" in flags:
            data = data[:-1]
        if "escaped" in flags:
            data = unescape(data, f"{path}:{start}")
        case[1][name] = data

    for n, line in enumerate(lines, 1):
        if line.startswith(b"=== "):
            close()
            block = None
            name = line[4:].decode()
            if not re.match(r"^\d{3}-[A-Za-z0-9_.-]+$", name):
                raise Bad(f"{path}:{n}: case name {name!r}: want NNN-words")
            case = (name, {})
            cases.append(case)
        elif line.startswith(b"--- "):
            if case is None:
                raise Bad(f"{path}:{n}: a file before the first case")
            close()
            words = line[4:].decode().split()
            if not words or words[0] not in FILES:
                raise Bad(f"{path}:{n}: {line.decode()!r}: want --- one of "
                          f"{', '.join(FILES)}")
            if words[0] in case[1]:
                raise Bad(f"{path}:{n}: {words[0]} twice in {case[0]}")
            bad = [w for w in words[1:] if w not in FLAGS]
            if bad:
                raise Bad(f"{path}:{n}: {bad[0]!r}: want {' or '.join(FLAGS)}")
            block = (words[0], set(words[1:]), [], n)
        elif block is not None:
            block[2].append(line)
        elif line.strip() and not line.startswith(b"#"):
            raise Bad(f"{path}:{n}: text outside a file: begin it with "
                      f"'--- FILE' or make it a comment")
    close()
    for name, files in cases:
        want = files.get("expect")
        if want is None:
            raise Bad(f"{path}: case {name} has no expect")
        if want.count(b"\n") != 1 or not want.endswith(b"\n"):
            raise Bad(f"{path}: case {name}: its expect is not one line")
    return cases


def corpus(top):
    out, seen = [], {}
    for f in sorted(os.listdir(top)):
        if not f.endswith(".cases"):
            continue
        path = os.path.join(top, f)
        for name, files in parse(path):
            if name in seen:
                raise Bad(f"{path}: case {name} is also in {seen[name]}")
            seen[name] = path
            out.append((name, files))
    if not out:
        raise Bad(f"{top}: no case (no *.cases file)")
    return sorted(out)


def main():
    args = sys.argv[1:]
    try:
        if len(args) == 3 and args[0] == "unpack":
            for name, files in corpus(args[1]):
                d = os.path.join(args[2], name)
                os.makedirs(d)
                for f, data in files.items():
                    with open(os.path.join(d, f), "wb") as out:
                        out.write(data)
        elif len(args) == 2 and args[0] == "list":
            for name, _ in corpus(args[1]):
                print(name)
        else:
            print(__doc__.strip(), file=sys.stderr)
            return 2
    except (Bad, OSError, UnicodeDecodeError) as e:
        print(f"cases.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
